"""Tier 2 of re-learning detection: TF-IDF cosine between a learning and the memories it is compared with.

Character n-grams (3 to 5, inside word boundaries) of the words a learning is compared by, stop words
aside: a rewording that inflects or compounds its words ("commit"/"committing", "pre-push"/"prepush")
keeps most of its n-grams, where the token sets of tier 1 see two different words. The IDF is fitted on the
comparison pool itself (the incoming learning and the project's best text matches for it): n-grams every
candidate shares weigh little, so what is left to agree on is what sets a memory apart. Offline and
deterministic (scikit-learn, no model).
"""

from __future__ import annotations

from collections.abc import Sequence

NGRAMS = (3, 5)


def cosines(incoming: str, held: Sequence[str]) -> list[float]:
    """Cosine of ``incoming`` with each of ``held`` (same order), TF-IDF fitted on all of them.

    The texts come as the words they are compared by (the caller's normal form, lowercase, stop words out).
    """
    docs = [incoming, *held]
    if not held or not docs[0]:
        return [0.0] * len(held)
    # Imported here: scikit-learn takes ~1-3 s to import, and this module is reached by every importer of
    # the packet rules (``nous search``, the MCP server), most of which never compare paraphrases.
    from sklearn.feature_extraction.text import TfidfVectorizer

    try:
        matrix = TfidfVectorizer(analyzer="char_wb", ngram_range=NGRAMS, sublinear_tf=True).fit_transform(docs)
    except ValueError:  # no n-gram at all (every text shorter than three characters)
        return [0.0] * len(held)
    sims = (matrix[1:] @ matrix[0].T).toarray().ravel()  # rows are L2-normalised: the dot is the cosine
    return [float(min(max(s, 0.0), 1.0)) for s in sims]

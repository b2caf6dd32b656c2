"""The recall gate: a cluster becomes an observation only if its members can be found (seed 003, CX14 step 6).

A cluster's most distinctive terms (TF-IDF: frequent in the cluster, rare in its scope) make three key phrases, each
three terms long (the first, second and third window over its top five: one word alone embeds poorly), run as
queries against the scope's vectors; when a member ranks in the top :data:`TOP_K` for at least two of the three,
the cluster is well encoded and is consolidated. Otherwise the observation would be written from memories retrieval
cannot reach by what they are about (poorly encoded, or grouped by a signal other than their meaning): it is
deferred, and the run reports it (``deferred``) for a look. The vectors are those the embed step wrote, so a
"refresh and retest" has nothing newer to try; the next run tests again.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence
from typing import Any

import numpy as np

from nous_assets.consolidate.similarity import Item, unit

TOP_K = 10
PHRASES = 3
PHRASE_TERMS = 3
PASSES = 2  # of the PHRASES queries
_WORD = re.compile(r"[a-z][a-z0-9_.-]{2,}")
_STOP = frozenset(
    "the and for with that this from into when then than are was were has have had not but you your its use used "
    "using run runs ran can will would should could also only all any each every one two via per our out off".split()
)


def key_terms(texts: Sequence[str], scope: Sequence[str], n: int = PHRASES + PHRASE_TERMS - 1) -> list[str]:
    """The ``n`` terms of ``texts`` (a cluster's members) with the highest TF-IDF against ``scope`` (all the
    scope's memories), ties by the term."""
    def words(text: str) -> list[str]:
        return [w.strip(".-") for w in _WORD.findall(text.lower()) if w.strip(".-") not in _STOP]

    tf: Counter[str] = Counter(w for t in texts for w in words(t))
    df: Counter[str] = Counter(w for t in scope for w in set(words(t)))
    score = {w: c * math.log((1 + len(scope)) / (1 + df[w])) for w, c in tf.items() if w}
    return sorted(score, key=lambda w: (-score[w], w))[:n]


def key_phrases(terms: list[str]) -> list[str]:
    """Up to :data:`PHRASES` phrases of :data:`PHRASE_TERMS` consecutive key terms (fewer terms: one phrase)."""
    if len(terms) <= PHRASE_TERMS:
        return [" ".join(terms)] if terms else []
    return [" ".join(terms[i : i + PHRASE_TERMS]) for i in range(min(PHRASES, len(terms) - PHRASE_TERMS + 1))]


def recalled(members: Sequence[int], queries: np.ndarray, rows: np.ndarray, top_k: int = TOP_K) -> int:
    """How many of the ``queries`` (unit rows) rank one of ``members`` (indexes of the unit ``rows``) in their
    top k."""
    scores = queries @ rows.T
    k = min(top_k, rows.shape[0])
    top = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    wanted = set(members)
    return sum(bool(wanted & {int(i) for i in row}) for row in top)


def gate(clusters: list[tuple[str, ...]], items: list[Item], texts: dict[str, str], embedder: Any) -> tuple[
        list[tuple[str, ...]], list[tuple[str, ...]]]:  # fmt: skip
    """(passed, deferred) ``clusters`` of ``items`` (``texts``: key -> content). Without an embedder or vectors
    every cluster passes: there is no index to test against."""
    if not clusters or embedder is None or any(i.vector is None for i in items):
        return clusters, []
    rows = unit(np.stack([i.vector for i in items]))
    index = {it.key: n for n, it in enumerate(items)}
    scope = [texts[i.key] for i in items]
    phrases = [key_phrases(key_terms([texts[k] for k in keys], scope)) for keys in clusters]
    flat = sorted({p for ps in phrases for p in ps})
    vectors = dict(zip(flat, unit(embedder.embed(flat)), strict=True)) if flat else {}
    passed, deferred = [], []
    for keys, ps in zip(clusters, phrases, strict=True):
        hits = recalled([index[k] for k in keys], np.stack([vectors[p] for p in ps]), rows) if ps else 0
        (passed if ps and hits >= min(PASSES, len(ps)) else deferred).append(keys)
    return passed, deferred


"""What a retrieval is asked: free text plus the context signals the scorer needs.

The text is never handed to FTS5 as-is (its query language treats quotes, parentheses, ``*``,
``NEAR`` and ``AND``/``OR``/``NOT`` as syntax, so a user's prompt could fail or change meaning):
:func:`fts_match_expression` turns it into quoted tokens joined with OR, which always parses.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from nous_assets.extract.concepts import STOP_WORDS as CONCEPT_STOP_WORDS
from nous_assets.extract.concepts import extract_concepts
from nous_assets.store.projection.memory_state import normalize_concept
from nous_assets.timeutil import normalize_time, now_iso

MAX_FTS_TOKENS = 32  # a long fingerprint would otherwise make a huge OR that matches everything
_TOKEN = re.compile(r"\w+", re.UNICODE)
# Small English list: search keeps words like "test", "error", "go" that concept extraction drops.
FTS_STOP_WORDS = frozenset(
    """
    a an and are as at be been but by can could did do does doing for from had has have how i if in into is it
    its me my of on or our so than that the their them then there these they this those to us was we were what
    when where which who whom why will with would you your yours about also just please should shall may might
    """.split()
)
# Fillers extract_concepts pads short texts with; as query concepts they would match everything padded alike.
_PAD_CONCEPTS = frozenset({"coding session", "learning", "general"})


def _normalise_concepts(concepts: Iterable[str]) -> frozenset[str]:
    return frozenset(c for c in (normalize_concept(str(x)) for x in concepts) if c)


@dataclass(frozen=True)
class Query:
    """A retrieval request. Times are canonical UTC text; ``now`` defaults to the current time.

    ``as_at`` asks "what was true at T" (valid time); ``last_activity`` is the project's previous
    activity, after which newly valid knowledge is "fresh" (s_temporal = 1.0); ``active_ids`` are
    memories already selected (e.g. injected earlier this session) whose graph neighbours get s_graph.
    ``include_expired`` keeps superseded/expired memories (history queries) instead of dropping them.
    ``project_evidence`` makes belonging to ``project_id`` count as relevance (SessionStart packets: the
    query is only a hint built from the project's files and branch, the project itself is the subject).
    """

    text: str = ""
    concepts: frozenset[str] = frozenset()
    project_id: str | None = None
    as_at: str | None = None
    now: str = field(default_factory=now_iso)
    query_vector: Any = field(default=None, compare=False)  # np.ndarray | None (arrays do not compare as bools)
    active_ids: tuple[int, ...] = ()
    last_activity: str | None = None
    include_expired: bool = False
    project_evidence: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "concepts", _normalise_concepts(self.concepts))
        object.__setattr__(self, "now", normalize_time(self.now))
        object.__setattr__(self, "as_at", normalize_time(self.as_at))
        object.__setattr__(self, "last_activity", normalize_time(self.last_activity))
        object.__setattr__(self, "active_ids", tuple(int(i) for i in self.active_ids))

    @classmethod
    def from_text(cls, text: str, *, concepts: Iterable[str] = (), **kwargs: Any) -> Query:
        """A query whose concepts are mined from ``text`` (plus any given explicitly)."""
        return cls(text=text, concepts=concepts_from_text(text) | _normalise_concepts(concepts), **kwargs)

    @property
    def reference_time(self) -> str:
        """The valid-time instant "current truth" is judged at: ``as_at`` if given, else ``now``."""
        return self.as_at or self.now


def _tokens(text: str) -> list[str]:
    return [t.lower() for t in _TOKEN.findall(text or "")]


def concepts_from_text(text: str) -> frozenset[str]:
    """Concept phrases for a free-text query, in the same normal form as the ``concepts`` table.

    The extractor's phrases (tech names, identifiers, noun phrases) catch multi-word concepts; the
    non-stop-word single words catch memories tagged with one word ("uv", "pytest") that the phrase
    extractor folded into a longer phrase.
    """
    if not text or not text.strip():
        return frozenset()
    phrases = {normalize_concept(p) for p in extract_concepts(text)} - _PAD_CONCEPTS
    return frozenset(c for c in phrases | concept_words(text) if c)


def concept_words(text: str) -> set[str]:
    """The single words of :func:`concepts_from_text` (no phrases): cheap enough to run on many texts a query."""
    words = _tokens(text)
    return {t for t in words if len(t) >= 2 and not t.isdigit() and t not in CONCEPT_STOP_WORDS and "_" not in t}


def fts_tokens(text: str | None) -> list[str]:
    """Unique lowercase search tokens of ``text`` in order: no stop words, no pure punctuation, at most 32."""
    if not text:
        return []
    seen: dict[str, None] = {}
    for token in _tokens(str(text)):
        if token in FTS_STOP_WORDS or not any(ch.isalnum() for ch in token):
            continue
        seen.setdefault(token, None)
        if len(seen) >= MAX_FTS_TOKENS:
            break
    return list(seen)


def match_expression(tokens: Iterable[str]) -> str | None:
    """Quoted tokens joined with OR (None for no tokens): always valid FTS5 syntax."""
    quoted = ['"' + token.replace('"', '""') + '"' for token in tokens]
    return " OR ".join(quoted) if quoted else None


def fts_match_expression(text: str | None) -> str | None:
    """A safe FTS5 MATCH expression: unique non-stop tokens, each double-quoted, joined with OR.

    Quoting makes every token a literal string (operators, ``*``, ``:``, parentheses lose their
    meaning) and OR gives recall; bm25 then ranks documents matching more/rarer terms higher.
    Returns None when nothing searchable is left (empty text, only stop words or punctuation).
    """
    return match_expression(fts_tokens(text))

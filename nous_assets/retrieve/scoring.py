"""The spec's seven-dimension relevance score, one pure function per dimension.

Each dimension returns a value in [0, 1]:

* ``s_text``     FTS5 bm25 relevance divided by the best in the candidate set (bm25 is negative-better;
  002 §6's ``1 / (1 - rank)`` maps *better* matches to *smaller* numbers, so we flip the sign
  first and normalise by the set's best, which is scale-free across corpora).
* ``s_concept``  Jaccard overlap of query and memory concepts.
* ``s_vector``   cosine clamped to [0, 1]; 0.0 without embeddings (FTS-only fallback).
* ``s_graph``    proximity to already-selected memories (see :mod:`.graph`).
* ``s_reinforce`` reinforcement_score clamped to [0, 1] plus the re-learning modifier (±0.15).
* ``s_temporal`` the spec's bi-temporal function (expired 0.2, fresh 1.0, low confidence 0.5, else 0.8);
  "fresh" compares when the memory became valid (``valid_from``, else ``created_at``) with the project's
  last activity.
* ``s_recency``  ``0.5 ** (age_days / half_life)`` since the memory was last relevant: when it was learned
  (``valid_from``; ``created_at``, the ingestion time, only when that is unknown) or a later access
  (``accessed_at``, set when a session's outcome or the user reinforced or weakened it). A backfill
  ingests a year of history in a minute: ingestion time says nothing about how current a learning is.
  Age is measured from the corpus's own clock (:func:`corpus_clock`), never the wall clock; transcript chunks
  do not age (``EPISODE_RECENCY``).

:func:`score` fuses them: ``weighted`` = configured weighted sum; ``rrf`` = weighted Reciprocal Rank
Fusion of the per-dimension rankings (a dimension ranks only candidates with a non-zero value; ties
share a rank). ``breakdown`` carries every raw value (``s_<dim>``) and its weighted contribution
(``w_<dim>``; in rrf mode the dimension's RRF share), plus ``contradiction`` (the multiplier applied).

Relevance floor: when the query carries any query-dependent signal (search tokens, concepts, a vector or
active memories), a candidate is kept only if some query-dependent dimension shows evidence — a text
match, a shared concept, graph proximity, or a cosine of at least :data:`MIN_VECTOR_COSINE`. The
query-independent dimensions (reinforce, temporal, recency, ~0.3 of the weighted sum together) then only
reorder relevant memories; they can no longer lift an unrelated one into the results. A query without
any signal (an unknown project's packet) ranks by those priors alone, as before; a project's own packet
(``query.project_evidence``) counts membership of the project as evidence for its project-scope memories.

"Current truth": memories expired at the reference time (``valid_until <= as_at or now``, which
includes superseded ones, whose validity the projector closes) are dropped unless
``query.include_expired``; for an explicit ``as_at`` so are memories not yet valid then.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable, Mapping
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from datetime import datetime
from typing import NamedTuple

import numpy as np

from nous_assets import clocks
from nous_assets.retrieve import resolution, timewords
from nous_assets.retrieve.fusion import competition_ranks, cosine, jaccard, rrf_from_ranks
from nous_assets.retrieve.query import Query, fts_tokens
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Memory
from nous_assets.timeutil import parse_time

DIMENSIONS = ("text", "concept", "vector", "graph", "reinforce", "temporal", "recency")
RECURRENCE_MODIFIER = 0.15
HIGH_RECURRENCE_SESSIONS = 3  # spec decision matrix: "High (3+ sessions)"
EFFECTIVE_INJECTION = 0.5  # share of rated injections that helped, at or above which recurrence is a boost
EXPIRED_SCORE, FRESH_SCORE, UNCERTAIN_SCORE, VALID_SCORE = 0.2, 1.0, 0.5, 0.8
QUERY_DIMENSIONS = ("text", "concept", "vector", "graph")
_BREAKDOWN_NAMES = tuple(f"s_{d}" for d in DIMENSIONS) + tuple(f"w_{d}" for d in DIMENSIONS)
# MiniLM (all-MiniLM-L6-v2) cosine between a query and a document about something else: 95th percentile
# 0.270 (LoCoMo questions vs turns of another conversation, n=4620) and 0.278 (dev transcripts: a memory's
# concepts as a query vs memories of another project, n=1000). A cosine below this is no evidence.
MIN_VECTOR_COSINE = 0.28


@dataclass(frozen=True)
class Recurrence:
    """Re-learning signals: sessions that extracted the learning, and how its injections went.

    ``helpful``/``unhelpful`` count access_log rows with was_useful = 1 / 0 (NULL = not rated).
    """

    sessions: int = 1
    injections: int = 0
    helpful: int = 0
    unhelpful: int = 0

    @property
    def effectiveness(self) -> float | None:
        """helpful / rated injections; None when no injection was rated (nothing to judge yet)."""
        rated = self.helpful + self.unhelpful
        return self.helpful / rated if rated else None


MEMORY, EPISODE = "memory", "episode"  # what a candidate's ``id`` numbers: a memories row or a transcript chunk


@dataclass(slots=True)
class Candidate(Memory):
    """A memory row (or a transcript chunk as one, ``row_kind == EPISODE``) plus its retrieval signals.

    ``id`` is the row's own id in its table (``memories`` or ``transcript_chunks``), so the two can
    share a number: :attr:`key` is what identifies a candidate among both. Signals: see :mod:`.candidates`.
    """

    bm25: float | None = None  # raw FTS5 bm25(): negative, more negative = better; None = no text match
    vector_cosine: float | None = None
    graph: float = 0.0
    recurrence: Recurrence = field(default_factory=Recurrence)
    sources: AbstractSet[str] = frozenset()
    row_kind: str = MEMORY

    @property
    def is_episode(self) -> bool:
        return self.row_kind == EPISODE

    @property
    def memory_id(self) -> int | None:
        """The memories row id; None for an episode, which is no memory."""
        return None if self.is_episode else self.id

    @property
    def key(self) -> CandidateKey:
        """Unique among memories and chunks (a bare id is not: chunk 5 and memory 5 are two rows)."""
        return CandidateKey(self.row_kind, self.id)


class CandidateKey(NamedTuple):
    row_kind: str
    id: int

    @property
    def tie_order(self) -> tuple[int, int]:
        """Ties go to memories before episodes, newer memories first, then earlier chunks."""
        return (1, self.id) if self.row_kind == EPISODE else (0, -self.id)


@dataclass(frozen=True)
class ScoredMemory:
    """A candidate's score and its make-up, by the candidate's :attr:`~Candidate.key`."""

    key: CandidateKey
    score: float
    breakdown: dict[str, float]

    @property
    def memory_id(self) -> int | None:
        return None if self.key.row_kind == EPISODE else self.key.id


def _clamp01(value: float) -> float:
    if not math.isfinite(value):
        return 0.0
    return 0.0 if value < 0.0 else 1.0 if value > 1.0 else value


# -- the seven dimensions -------------------------------------------------------------------------


def s_text(bm25: float | None, best_relevance: float) -> float:
    """``-bm25 / best`` where best is the largest ``-bm25`` among the candidates (1.0 = best match)."""
    if bm25 is None or best_relevance <= 0.0:
        return 0.0
    return _clamp01(-bm25 / best_relevance)


def best_text_relevance(bm25_values: Iterable[float | None]) -> float:
    return max((-b for b in bm25_values if b is not None), default=0.0)


def s_concept(query_concepts: Iterable[str], memory_concepts: Iterable[str]) -> float:
    return jaccard(query_concepts, memory_concepts)


def s_vector(cosine_similarity: float | None) -> float:
    return 0.0 if cosine_similarity is None else _clamp01(float(cosine_similarity))


def s_graph(proximity: float | None) -> float:
    return 0.0 if proximity is None else _clamp01(float(proximity))


def recurrence_modifier(recurrence: Recurrence) -> float:
    """+0.15 for a learning re-extracted in 3+ sessions whose injections helped; -0.15 if they did not.

    Low recurrence or no rated injection yet is neutral: a learning re-learned but never injected is
    an injection failure to review, not evidence that its text is bad.
    """
    if recurrence.sessions < HIGH_RECURRENCE_SESSIONS:
        return 0.0
    effectiveness = recurrence.effectiveness
    if effectiveness is None:
        return 0.0
    return RECURRENCE_MODIFIER if effectiveness >= EFFECTIVE_INJECTION else -RECURRENCE_MODIFIER


def s_reinforce(reinforcement_score: float, recurrence: Recurrence | None = None) -> float:
    """The raw score can leave [0, 1] (+0.1/-0.2 per event), so clamp, add the modifier, clamp again."""
    base = _clamp01(float(reinforcement_score))
    return _clamp01(base + (recurrence_modifier(recurrence) if recurrence else 0.0))


def s_temporal(
    valid_from: str | None,
    valid_until: str | None,
    temporal_confidence: str | None,
    *,
    now: str,
    last_activity: str | None = None,
    created_at: str | None = None,
) -> float:
    """The spec's ``s_temporal`` on canonical UTC text (which orders like the instants it names).

    ``valid_until <= now`` counts as expired (the spec writes ``<``): validity is the half-open
    window [valid_from, valid_until), as in the spec's as-at query ``valid_until > T``. Freshness is
    judged on ``valid_from``; ``created_at`` stands in only when the start of validity is unknown.
    """
    if valid_until is not None and valid_until <= now:
        return EXPIRED_SCORE
    valid_since = valid_from or created_at
    if valid_since is not None and last_activity is not None and valid_since > last_activity:
        return FRESH_SCORE
    if temporal_confidence == "low":
        return UNCERTAIN_SCORE
    return VALID_SCORE


def recency_stamp(accessed_at: str | None, valid_from: str | None, created_at: str | None) -> str | None:
    """When the memory was last relevant: learned (``valid_from``, else ``created_at``) or accessed since."""
    learned = valid_from or created_at
    if accessed_at and (learned is None or accessed_at > learned):
        return accessed_at
    return learned


def s_recency(
    accessed_at: str | None,
    created_at: str | None,
    *,
    now: str | datetime,
    half_life_days: float = 30.0,
    valid_from: str | None = None,
) -> float:
    """Exponential decay since :func:`recency_stamp`: 1.0 now, 0.5 after one half-life; future stamps count as now."""
    stamp = recency_stamp(accessed_at, valid_from, created_at)
    if not stamp or half_life_days <= 0:
        return 0.0
    try:
        age = (parse_time(now) - parse_time(stamp)).total_seconds() / 86400.0
    except ValueError:
        return 0.0
    return 0.5 ** (max(age, 0.0) / half_life_days)


# -- current truth and contradictions -----------------------------------------------------------


def is_current(c: Candidate, query: Query) -> bool:
    """Valid at the reference time: not expired/superseded, and (for ``as_at``) already valid."""
    ref = query.reference_time
    if c.valid_until is not None and c.valid_until <= ref:
        return False  # expired; superseded memories have their validity closed at supersession
    return not (query.as_at is not None and c.valid_from is not None and c.valid_from > query.as_at)


def contradicted_ids(
    candidates: Iterable[Candidate],
    contradictions: Mapping[tuple[int, int], tuple[str, float]],
    min_confidence: float = 0.7,
) -> set[int]:
    """Ids in a cached NLI 'contradiction' (confidence >= min) with a candidate of concurrent clock.

    ``contradictions`` maps canonical ``(min_id, max_id)`` to ``(label, confidence)`` (nli_results).
    Causally ordered pairs (one clock subsumes the other) are sequential updates, not conflicts.
    """
    by_id = {c.id: c for c in candidates if not c.is_episode}  # chunks have no NLI results
    flagged: set[int] = set()
    parsed: dict[int, dict[str, int] | None] = {}

    def clock(memory_id: int) -> dict[str, int] | None:
        if memory_id not in parsed:
            try:
                parsed[memory_id] = clocks.parse(by_id[memory_id].vector_clock_json)
            except (clocks.ClockError, json.JSONDecodeError):
                parsed[memory_id] = None
        return parsed[memory_id]

    for (a, b), (label, confidence) in contradictions.items():
        if label != "contradiction" or confidence < min_confidence or a not in by_id or b not in by_id:
            continue
        ca, cb = clock(a), clock(b)
        if ca is None or cb is None or clocks.compare(ca, cb) is not clocks.Order.CONCURRENT:
            continue
        flagged.update((a, b))
    return flagged


# -- the corpus's own clock and the evidence levers ------------------------------------------------

# Recency is measured from the corpus's clock (``as_at``, else the latest moment among the gathered candidates,
# which always include the project's newest reinforced memories), never from the wall clock: a project idle
# for a year, or a conversation from 2023, still has a newest and an oldest. Bench switches, not settings.
CORPUS_CLOCK = True
# A question that names a speaker ("What does Melanie ...") is about what that speaker said: a chunk whose
# text is that speaker's turn ("Melanie: ...") gets this share more score. Not when it names every speaker seen.
# LoCoMo dev recall@10 (cat 1-4) 0.777 -> 0.799 at 0.15 (multi-hop .430 -> .480, single-hop .825 -> .851, temporal
# and open-domain unchanged); 0.2 cost a temporal question ("When did Melanie's friend ...": the other speaker's).
# Adversarial questions name the wrong speaker on purpose, and the lever buries the other speaker's turn that holds
# the evidence (category 5: .887 -> .796 at 0.05, .775 at 0.10, .739 at 0.15), so it shipped off. With the reply
# lever (episodic.REPLY_WEIGHT, which lifts category 5 to .958), 0.05 gives 0.792 -> 0.804 (conv-26 .794 -> .802,
# conv-30 .788 -> .808; multi-hop .441 -> .461, single-hop .851 -> .868) for category 5 .958 -> .937 (conv-30 .917 ->
# .896), still above .887 without either lever; 0.03 leaves conv-30 at .796, 0.08 takes its category 5 to .854.
SPEAKER_BOOST = 0.05
# A question asking for a time ("When did ...") is answered by a turn that says when: a candidate whose text
# carries a date or a relative time ("last week", "two days ago") gets this share more.
WHEN_BOOST = 0.0
# A question restricted to a period ("in June", "last year") prefers a candidate said in that period or that
# talks about it (its relative words resolved against when it was said).
PERIOD_BOOST = 0.0
# Transcript chunks are evidence of when something was said, not knowledge that ages: with this off their
# recency is 0 (what a wall clock far past the conversation gave them), and only memories age.
EPISODE_RECENCY = False
# A transcript turn that reports how a problem ended ("the fix was …", "fixed by …", "the root cause: …", "works
# now") holds what a debugging session established; the turns before it hold the guesses it went through, and
# repeat the problem's words more often. Asked about a problem (why, fails, error, broken …), such a turn gets this
# share more. Coding questions hit@3 dev 0.65 -> 0.70, dev2 0.65 -> 0.70 (hit@1 0.45 -> 0.50), dev3 unchanged at
# 0.1-0.3; 0.3 cost dev3 a rank-1 answer to a sub-agent's "fixed" report. LoCoMo dev unchanged (0.777). A turn that
# opens with "Found it" counts too: dev3 hit@3 0.60 -> 0.70 (the cache path, the default-branch guard), others equal.
RESOLUTION_BOOST = 0.2
_SPEAKER = re.compile(r"^([A-Z][\w'-]*(?: [A-Z][\w'-]*)?): ")


def speaker_of(content: str | None) -> str | None:
    """The speaker a turn's text opens with ("Name: ..."), if any."""
    m = _SPEAKER.match(content or "")
    return m.group(1) if m else None


def corpus_clock(candidates: Iterable[Candidate], query: Query) -> str:
    """The instant recency is measured from: ``as_at``, else the latest stamp among ``candidates``, else ``now``."""
    if query.as_at or not CORPUS_CLOCK:
        return query.as_at or query.now
    stamps = [s for c in candidates if (s := recency_stamp(c.accessed_at, c.valid_from, c.created_at))]
    return max(stamps) if stamps else query.now


def _said_day(c: Candidate):
    try:
        return parse_time(c.valid_from or c.created_at).date()
    except (TypeError, ValueError):
        return None


def lever_factors(kept: Mapping[CandidateKey, Candidate], query: Query, clock: str) -> dict[CandidateKey, float]:
    """Multipliers from the speaker, resolution, when-question and period levers (1.0 when none applies)."""
    factors = dict.fromkeys(kept, 1.0)
    if SPEAKER_BOOST:
        speakers = {k: speaker_of(c.content) for k, c in kept.items() if c.is_episode}  # a memory's "Stack: …": no one
        seen = {s for s in speakers.values() if s}
        named = {s for s in seen if re.search(r"\b" + re.escape(s) + r"\b", query.text)}
        if named and named != seen:
            for key, who in speakers.items():
                if who in named:
                    factors[key] *= 1.0 + SPEAKER_BOOST
    if RESOLUTION_BOOST and resolution.asks_about_a_problem(query.text):
        for key, c in kept.items():
            if c.is_episode and resolution.reports_resolution(c.content or ""):
                factors[key] *= 1.0 + RESOLUTION_BOOST
    asks = WHEN_BOOST and timewords.asks_when(query.text)
    try:
        asked = parse_time(clock).date()
    except (TypeError, ValueError):
        asked = None
    periods = timewords.question_ranges(query.text, asked) if PERIOD_BOOST and asked else []
    if asks or periods:
        for key, c in kept.items():
            said = _said_day(c)
            if said is None:
                continue
            mentioned = timewords.event_ranges(c.content, said)
            if asks and mentioned:
                factors[key] *= 1.0 + WHEN_BOOST
            if periods and timewords.overlaps([(said, said), *mentioned], periods):
                factors[key] *= 1.0 + PERIOD_BOOST
    return factors


# -- fusion -------------------------------------------------------------------------------------


def dimension_values(
    c: Candidate,
    query: Query,
    settings: Settings,
    *,
    best_text: float,
    vector_score: float | None,
    now: datetime | None = None,
) -> dict[str, float]:
    """Raw values of all seven dimensions for one candidate (recency measured from ``now``)."""
    return {
        "text": s_text(c.bm25, best_text),
        "concept": s_concept(query.concepts, c.concepts),
        "vector": s_vector(vector_score),
        "graph": s_graph(c.graph),
        "reinforce": s_reinforce(c.reinforcement_score, c.recurrence),
        "temporal": s_temporal(
            c.valid_from,
            c.valid_until,
            c.temporal_confidence,
            now=query.reference_time,
            last_activity=query.last_activity,
            created_at=c.created_at,
        ),
        "recency": 0.0
        if c.is_episode and not EPISODE_RECENCY
        else s_recency(
            c.accessed_at,
            c.created_at,
            now=now or query.now,
            half_life_days=settings.thresholds.recency_half_life_days,
            valid_from=c.valid_from,
        ),
    }


def _breakdown(raw: list[float], weighted: list[float]) -> dict[str, float]:
    """``s_<dim>`` (raw value) and ``w_<dim>`` (its weighted contribution) of every dimension."""
    return dict(zip(_BREAKDOWN_NAMES, (*raw, *weighted), strict=True))


def has_query_signal(query: Query) -> bool:
    """Whether the query can show relevance at all (else only the priors can rank, and the floor is off)."""
    return bool(fts_tokens(query.text) or query.concepts or query.query_vector is not None or query.active_ids)


def passes_relevance_floor(values: Mapping[str, float]) -> bool:
    """Some query-dependent evidence: a text match, a shared concept, graph proximity or a real cosine."""
    return (
        values["text"] > 0.0
        or values["concept"] > 0.0
        or values["graph"] > 0.0
        or values["vector"] >= MIN_VECTOR_COSINE
    )


def _project_is_evidence(c: Candidate, query: Query) -> bool:
    """A project memory is relevant to its own project's packet whatever the fingerprint's words."""
    return query.project_evidence and c.scope == "project" and c.project_id == query.project_id


def _vector_score(
    c: Candidate,
    query: Query,
    vector_scores: Mapping[int, float] | None,
    vectors: Mapping[int, np.ndarray] | None,
) -> float | None:
    if c.is_episode:  # the mappings hold memory vectors; a chunk brings its own cosine
        return c.vector_cosine
    if vector_scores is not None and c.id in vector_scores:
        return vector_scores[c.id]
    if c.vector_cosine is not None:
        return c.vector_cosine
    if vectors is not None and query.query_vector is not None and c.id in vectors:
        return cosine(np.asarray(query.query_vector, dtype=np.float32), vectors[c.id])
    return None


def score(
    candidates: Iterable[Candidate],
    query: Query,
    settings: Settings,
    *,
    vector_scores: Mapping[int, float] | None = None,
    vectors: Mapping[int, np.ndarray] | None = None,
    contradictions: Mapping[tuple[int, int], tuple[str, float]] | None = None,
) -> list[ScoredMemory]:
    """Score and sort the candidates that pass the relevance floor, best first (ties: newer memory first).

    Vector similarity comes from ``vector_scores`` (memory_id -> cosine), else the candidate's own
    ``vector_cosine``, else ``vectors`` and ``query.query_vector``; without any, s_vector = 0.
    """
    kept = {c.key: c for c in candidates if query.include_expired or is_current(c, query)}
    if not kept:
        return []
    retrieve = settings.retrieve
    weights = {d: float(getattr(retrieve.weights, d)) for d in DIMENSIONS}
    weight_list = [weights[d] for d in DIMENSIONS]
    best_text = best_text_relevance(c.bm25 for c in kept.values())
    clock = corpus_clock(kept.values(), query)
    now = parse_time(clock)
    raw = {
        key: dimension_values(
            c,
            query,
            settings,
            best_text=best_text,
            vector_score=_vector_score(c, query, vector_scores, vectors),
            now=now,
        )
        for key, c in kept.items()
    }
    if has_query_signal(query):
        kept = {k: c for k, c in kept.items() if passes_relevance_floor(raw[k]) or _project_is_evidence(c, query)}
        raw = {k: raw[k] for k in kept}
    breakdowns: dict[CandidateKey, dict[str, float]] = {}
    totals: dict[CandidateKey, float] = {}
    if retrieve.mode == "rrf":
        ranks = {d: competition_ranks({i: v[d] for i, v in raw.items() if v[d] > 0.0}) for d in DIMENSIONS}
        for key, values in raw.items():
            shares = {
                d: weights[d] / (retrieve.rrf_k + ranks[d][key]) for d in DIMENSIONS if key in ranks[d]
            }
            breakdowns[key] = _breakdown([values[d] for d in DIMENSIONS], [shares.get(d, 0.0) for d in DIMENSIONS])
        fused = rrf_from_ranks([ranks[d] for d in DIMENSIONS], retrieve.rrf_k, [weights[d] for d in DIMENSIONS])
        totals = {key: fused.get(key, 0.0) for key in raw}
    else:
        for key, values in raw.items():
            own = [values[d] for d in DIMENSIONS]
            contributions = [weight * value for weight, value in zip(weight_list, own, strict=True)]
            breakdowns[key] = _breakdown(own, contributions)
            totals[key] = sum(contributions)
    penalised = (
        contradicted_ids(kept.values(), contradictions, settings.thresholds.nli_contradiction_confidence)
        if contradictions
        else set()
    )
    multiplier = settings.thresholds.contradiction_multiplier
    levers = lever_factors(kept, query, clock)
    clock_seconds = now.timestamp()  # the corpus clock, for --explain's "d ago" (one parse, not one per candidate)
    results = []
    for key, total in totals.items():
        factor = multiplier if key.row_kind == MEMORY and key.id in penalised else 1.0
        breakdowns[key]["contradiction"] = factor
        breakdowns[key]["levers"] = levers[key]
        breakdowns[key]["clock"] = clock_seconds
        results.append(ScoredMemory(key, total * factor * levers[key], breakdowns[key]))
    results.sort(key=lambda r: (-r.score, r.key.tie_order))
    return results

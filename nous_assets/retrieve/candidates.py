"""Candidate generation: a few indexed queries whose union is worth scoring (never the whole table).

Sources, each bounded by ``settings.retrieve.candidates``:

* ``fts``     keyword matches ranked by ``bm25(memories_fts)`` (LIKE token matching if FTS5 fails);
* ``concept`` memories sharing a query concept (``idx_concepts_concept``);
* ``vector``  nearest neighbours the caller computed (optional; see :mod:`.search`);
* ``graph``   2-hop neighbours of ``query.active_ids``;
* ``prior``   the project's (and global) most reinforced memories, so a session with no keyword
  overlap still gets its proven knowledge.

The same filters apply to every source (in SQL for fts/concept/prior, on the loaded rows for vector
and graph hits): project isolation (the query's project's memories plus every ``scope = 'global'``
memory; all projects when ``project_id`` is None) and, unless ``include_expired``, current truth at
the reference time. Large tables stay cheap: tokens found in over 10% (and over 5000) of the memories
are dropped from the FTS query (query-time stop words), and the concept and prior sources read
bounded windows of the newest rows through their indexes. Rows are then loaded once by id with
their concepts, bm25 (also for non-FTS candidates among the best 4 x ``candidates`` text matches),
graph proximity and re-learning signals (distinct extracting sessions, access_log outcomes).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from nous_assets.retrieve.graph import graph_proximity
from nous_assets.retrieve.query import Query, fts_tokens, match_expression
from nous_assets.retrieve.scoring import Candidate, Recurrence, is_current
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, DatabaseError
from nous_assets.store.projection.memory_state import Memory
from nous_assets.store.reads import nli_results
from nous_assets.store.reads import recurrence as recurrence_reads
from nous_assets.store.search import memory_search

MAX_LIKE_TOKENS = 8
BM25_DEPTH = 4
# Query-time stop words: a token in more than 10% of memories (and over 5000 of them) has an IDF near 0
# yet makes bm25() (~1.5 us per matching row) run over a large part of the table.
COMMON_TOKEN_SHARE = 0.10
MIN_COMMON_DF = 5000
CONCEPT_WINDOW = 400  # newest matching memories read per query concept
MAX_QUERY_CONCEPTS = 16
PRIOR_WINDOW = 1000  # the prior source ranks the newest 1000 memories of a scope by reinforcement


def _fts(conn: Connection, match: str, query: Query, limit: int) -> dict[int, float]:
    """bm25 of the best matches; raises DatabaseError when FTS5 fails, which sends :func:`_text_matches` to LIKE."""
    return memory_search.fts_matches(conn, match, query, limit)


def _like(conn: Connection, query: Query, limit: int) -> dict[int, float]:
    """Degraded text search when FTS5 fails: count of query tokens contained, reported as -count."""
    tokens = fts_tokens(query.text)[:MAX_LIKE_TOKENS]
    patterns = ["%" + re.sub(r"([\\%_])", r"\\\1", t) + "%" for t in tokens]
    return {i: -float(n) for i, n in memory_search.like_matches(conn, patterns, query, limit).items()}


def prune_common_tokens(frequencies: Mapping[str, int], threshold: int) -> list[str]:
    """Tokens whose document frequency is at most ``threshold``; the rarest token is always kept."""
    kept = [t for t, df in frequencies.items() if df <= threshold]
    if not kept and frequencies:
        kept = [min(frequencies, key=lambda t: frequencies[t])]
    return kept


def _text_matches(conn: Connection, query: Query, limit: int) -> dict[int, float]:
    tokens = fts_tokens(query.text)
    if not tokens:
        return {}
    try:
        threshold = max(MIN_COMMON_DF, int(memory_search.count(conn) * COMMON_TOKEN_SHARE))
        frequencies = {t: memory_search.document_frequency(conn, match_expression([t]), threshold) for t in tokens}
        match = match_expression(prune_common_tokens(frequencies, threshold))
        return _fts(conn, match, query, limit) if match else {}
    except DatabaseError:  # corrupt index or an FTS5 quirk: fall back to LIKE (002 §6 fallback chain)
        return _like(conn, query, limit)


def _concept_matches(conn: Connection, query: Query, limit: int) -> list[int]:
    """Memories sharing the most query concepts, reading only the newest matches of each concept."""
    hits: dict[int, int] = {}
    for concept in sorted(query.concepts, key=lambda c: (-len(c), c))[:MAX_QUERY_CONCEPTS]:
        for memory_id in memory_search.concept_members(conn, concept, query, CONCEPT_WINDOW):
            hits[memory_id] = hits.get(memory_id, 0) + 1
    return sorted(hits, key=lambda i: (-hits[i], -i))[:limit]


def _prior(conn: Connection, query: Query, limit: int) -> list[int]:
    """Most reinforced (then newest) among the newest PRIOR_WINDOW memories of the project and of global scope."""
    return memory_search.most_reinforced(conn, query, limit, PRIOR_WINDOW)


def _prior_limit(query: Query, settings: Settings) -> int:
    """A project's own packet ranks all of its memories (up to ``candidates``); other queries only their best."""
    if query.project_evidence and query.project_id is not None:
        return max(1, int(settings.retrieve.candidates))
    return max(2 * int(settings.retrieve.top_k), 24)


def _recurrence(conn: Connection, rows: Mapping[int, Memory]) -> dict[int, Recurrence]:
    """Distinct sessions that learned each learning, and its injections' outcomes from access_log.

    A session that learned it again is recorded as a re-learning reinforcement, not a second extraction.
    """
    by_learning = {r.learning_id: memory_id for memory_id, r in rows.items()}
    sessions = {by_learning[lid]: n for lid, n in recurrence_reads.learning_sessions(conn, by_learning).items()}
    access = recurrence_reads.injection_outcomes(conn, rows)
    return {
        memory_id: Recurrence(max(sessions.get(memory_id, 1), 1), *access.get(memory_id, (0, 0, 0)))
        for memory_id in rows
    }


def load_contradictions(conn: Connection, ids: Iterable[int]) -> dict[tuple[int, int], tuple[str, float]]:
    """Cached NLI contradictions among ``ids``: {(a, b): (label, confidence)} with a < b."""
    return nli_results.contradictions_among(conn, ids)


def _in_scope(row: Memory, query: Query) -> bool:
    return query.project_id is None or row.scope == "global" or row.project_id == query.project_id


def gather(
    conn: Connection,
    query: Query,
    settings: Settings,
    *,
    vector_hits: Iterable[tuple[int, float]] | Mapping[int, float] | None = None,
) -> list[Candidate]:
    """The scored-to-be candidate set for ``query`` (sorted by id), each source bounded by settings."""
    limit = max(1, int(settings.retrieve.candidates))
    sources: dict[int, set[str]] = {}

    def add(ids: Iterable[int], source: str) -> None:
        for memory_id in ids:
            sources.setdefault(int(memory_id), set()).add(source)

    # bm25 of the best BM25_DEPTH * limit matches: the top `limit` become candidates, the rest only
    # give text scores to candidates other sources found (an FTS5 rowid filter re-runs the MATCH per row)
    bm25 = _text_matches(conn, query, BM25_DEPTH * limit)
    add(sorted(bm25, key=lambda i: bm25[i])[:limit], "fts")
    add(_concept_matches(conn, query, limit), "concept")
    vectors: dict[int, float] = {}
    if vector_hits is not None:
        items = vector_hits.items() if isinstance(vector_hits, Mapping) else vector_hits
        vectors = {int(i): float(s) for i, s in items}
        add(sorted(vectors, key=lambda i: -vectors[i])[:limit], "vector")
    proximity = graph_proximity(conn, query.active_ids) if query.active_ids else {}
    add(sorted(proximity, key=lambda i: -proximity[i])[:limit], "graph")
    add(_prior(conn, query, _prior_limit(query, settings)), "prior")
    if not sources:
        return []

    rows = memory_search.rows_by_id(conn, sources)
    concepts = memory_search.concepts_of(conn, rows)
    recurrence = _recurrence(conn, rows) if rows else {}
    out: list[Candidate] = []
    for memory_id in sorted(rows):
        row = rows[memory_id]
        if not _in_scope(row, query):
            continue
        candidate = Candidate(
            *row.row(),
            concepts=frozenset(concepts.get(memory_id, ())),
            bm25=bm25.get(memory_id),
            vector_cosine=vectors.get(memory_id),
            graph=proximity.get(memory_id, 0.0),
            recurrence=recurrence.get(memory_id, Recurrence()),
            sources=frozenset(sources[memory_id]),
        )
        if query.include_expired or is_current(candidate, query):
            out.append(candidate)
    return out

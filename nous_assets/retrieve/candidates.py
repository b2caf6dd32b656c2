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

import json
import re
from collections.abc import Iterable, Mapping
from typing import Any

from nous_assets.retrieve.graph import graph_proximity
from nous_assets.retrieve.query import Query, fts_tokens, match_expression
from nous_assets.retrieve.scoring import Candidate, Recurrence, is_current
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, DatabaseError

_COLUMNS = (
    "id", "learning_id", "content", "type", "kind", "domain", "scope", "project_id", "source_session",
    "reinforcement_score", "created_at", "accessed_at", "valid_from", "valid_until", "temporal_confidence",
    "validated_at", "superseded_by", "contradiction_count", "vector_clock_json", "slot", "applies_when",
    "source_ref",
)  # fmt: skip
MAX_LIKE_TOKENS = 8
BM25_DEPTH = 4
# Query-time stop words: a token in more than 10% of memories (and over 5000 of them) has an IDF near 0
# yet makes bm25() (~1.5 us per matching row) run over a large part of the table.
COMMON_TOKEN_SHARE = 0.10
MIN_COMMON_DF = 5000
CONCEPT_WINDOW = 400  # newest matching memories read per query concept
MAX_QUERY_CONCEPTS = 16
PRIOR_WINDOW = 1000  # the prior source ranks the newest 1000 memories of a scope by reinforcement


def _filters(query: Query, alias: str = "m") -> tuple[str, dict[str, Any]]:
    """SQL condition (with named parameters) for project isolation and current truth."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if query.project_id is not None:
        clauses.append(f"({alias}.scope = 'global' OR {alias}.project_id = :project)")
        params["project"] = query.project_id
    if not query.include_expired:
        clauses.append(f"({alias}.valid_until IS NULL OR {alias}.valid_until > :ref)")
        params["ref"] = query.reference_time
        if query.as_at is not None:
            clauses.append(f"({alias}.valid_from IS NULL OR {alias}.valid_from <= :as_at)")
            params["as_at"] = query.as_at
    return (" AND ".join(clauses) or "1"), params


def _fts(conn: Connection, match: str, where: str, params: dict[str, Any], limit: int) -> dict[int, float]:
    rows = conn.execute(
        "SELECT m.id, bm25(memories_fts) AS r FROM memories_fts JOIN memories m ON m.id = memories_fts.rowid "
        f"WHERE memories_fts MATCH :match AND {where} ORDER BY r LIMIT :limit",
        {**params, "match": match, "limit": limit},
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def _like(conn: Connection, text: str, where: str, params: dict[str, Any], limit: int) -> dict[int, float]:
    """Degraded text search when FTS5 fails: count of query tokens contained, reported as -count."""
    tokens = fts_tokens(text)[:MAX_LIKE_TOKENS]
    if not tokens:
        return {}
    escaped = {f"t{i}": "%" + re.sub(r"([\\%_])", r"\\\1", t) + "%" for i, t in enumerate(tokens)}
    hits = " + ".join(f"(m.content LIKE :{name} ESCAPE '\\')" for name in escaped)
    rows = conn.execute(
        f"SELECT m.id, ({hits}) AS hits FROM memories m WHERE {where} AND ({hits}) > 0 "
        "ORDER BY hits DESC, m.id DESC LIMIT :limit",
        {**params, **escaped, "limit": limit},
    ).fetchall()
    return {int(r[0]): -float(r[1]) for r in rows}


def _document_frequency(conn: Connection, token: str, cap: int) -> int:
    """Rows matching ``token``, counted only up to ``cap + 1`` (cheap even for very common words)."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (match_expression([token]), cap + 1)).fetchone()[0])


def prune_common_tokens(frequencies: Mapping[str, int], threshold: int) -> list[str]:
    """Tokens whose document frequency is at most ``threshold``; the rarest token is always kept."""
    kept = [t for t, df in frequencies.items() if df <= threshold]
    if not kept and frequencies:
        kept = [min(frequencies, key=lambda t: frequencies[t])]
    return kept


def _text_matches(conn: Connection, query: Query, where: str, params: dict[str, Any], limit: int) -> dict[int, float]:
    tokens = fts_tokens(query.text)
    if not tokens:
        return {}
    try:
        total = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
        threshold = max(MIN_COMMON_DF, int(total * COMMON_TOKEN_SHARE))
        frequencies = {t: _document_frequency(conn, t, threshold) for t in tokens}
        match = match_expression(prune_common_tokens(frequencies, threshold))
        return _fts(conn, match, where, params, limit) if match else {}
    except DatabaseError:  # corrupt index or an FTS5 quirk: fall back to LIKE (002 §6 fallback chain)
        return _like(conn, query.text, where, params, limit)


def _concept_matches(conn: Connection, query: Query, where: str, params: dict[str, Any], limit: int) -> list[int]:
    """Memories sharing the most query concepts, reading only the newest matches of each concept."""
    hits: dict[int, int] = {}
    sql = (
        "SELECT c.memory_id FROM concepts c JOIN memories m ON m.id = c.memory_id "
        f"WHERE c.concept = :concept AND {where} ORDER BY c.id DESC LIMIT :window"
    )
    for concept in sorted(query.concepts, key=lambda c: (-len(c), c))[:MAX_QUERY_CONCEPTS]:
        for (memory_id,) in conn.execute(sql, {**params, "concept": concept, "window": CONCEPT_WINDOW}):
            hits[int(memory_id)] = hits.get(int(memory_id), 0) + 1
    return sorted(hits, key=lambda i: (-hits[i], -i))[:limit]


# Distinct project ids by skip-scan over idx_memories_project: O(projects * log n), not a table scan.
_PROJECTS = (
    "WITH RECURSIVE p(id) AS (SELECT min(project_id) FROM memories UNION ALL "
    "SELECT (SELECT min(project_id) FROM memories WHERE project_id > p.id) FROM p WHERE p.id IS NOT NULL) "
    "SELECT id FROM p WHERE id IS NOT NULL"
)


def _prior(conn: Connection, query: Query, limit: int) -> list[int]:
    """Most reinforced (then newest) among the newest PRIOR_WINDOW memories of the project and of global scope.

    The window is read from ``idx_memories_project`` alone (id order within (project, scope)), so
    this costs O(window) however large the project is, instead of sorting every row.
    """
    where, params = _filters(query)
    if query.project_id is not None:
        projects = json.dumps([r[0] for r in conn.execute(_PROJECTS)])
        scopes = [
            ("project_id = :project AND scope = 'project'", {}),
            ("project_id IN (SELECT value FROM json_each(:projects)) AND scope = 'global'", {"projects": projects}),
        ]
    else:
        scopes = [("1", {})]
    ids: list[int] = []
    for scope, extra in scopes:
        rows = conn.execute(
            "SELECT m.id FROM memories m WHERE m.id IN "
            f"(SELECT id FROM memories WHERE {scope} ORDER BY id DESC LIMIT :window) AND {where} "
            "ORDER BY m.reinforcement_score DESC, m.id DESC LIMIT :limit",
            {**params, **extra, "window": PRIOR_WINDOW, "limit": limit},
        ).fetchall()
        ids.extend(int(r[0]) for r in rows)
    return ids


def _prior_limit(query: Query, settings: Settings) -> int:
    """A project's own packet ranks all of its memories (up to ``candidates``); other queries only their best."""
    if query.project_evidence and query.project_id is not None:
        return max(1, int(settings.retrieve.candidates))
    return max(2 * int(settings.retrieve.top_k), 24)


def _ids_json(ids: Iterable[int]) -> str:
    return json.dumps(sorted(set(ids)))


def _load_rows(conn: Connection, ids: list[int]) -> dict[int, Any]:
    rows = conn.execute(
        f"SELECT {', '.join(_COLUMNS)} FROM memories WHERE id IN (SELECT value FROM json_each(?))", (_ids_json(ids),)
    ).fetchall()
    return {int(r[0]): r for r in rows}


def _load_concepts(conn: Connection, ids: list[int]) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for memory_id, concept in conn.execute(
        "SELECT memory_id, concept FROM concepts WHERE memory_id IN (SELECT value FROM json_each(?))", (_ids_json(ids),)
    ):
        out.setdefault(int(memory_id), set()).add(concept)
    return out


def _recurrence(conn: Connection, rows: Mapping[int, Any]) -> dict[int, Recurrence]:
    """Distinct sessions that learned each learning, and its injections' outcomes from access_log.

    A session that learned it again is recorded as a re-learning reinforcement, not a second extraction.
    """
    by_learning = {r["learning_id"]: memory_id for memory_id, r in rows.items()}
    sessions: dict[int, int] = {}
    for learning_id, count in conn.execute(
        "SELECT learning_id, COUNT(DISTINCT session_id) FROM learning_events "
        "WHERE learning_id IN (SELECT value FROM json_each(?)) AND (event_type = 'LearningExtracted' OR "
        "(event_type = 'LearningReinforced' AND json_extract(payload_json, '$.reason') = 'relearned')) "
        "GROUP BY learning_id",
        (json.dumps(sorted(by_learning)),),
    ):
        sessions[by_learning[learning_id]] = int(count)
    access: dict[int, tuple[int, int, int]] = {}
    for memory_id, total, helpful, unhelpful in conn.execute(
        "SELECT memory_id, COUNT(*), COALESCE(SUM(was_useful = 1), 0), COALESCE(SUM(was_useful = 0), 0) "
        "FROM access_log WHERE memory_id IN (SELECT value FROM json_each(?)) GROUP BY memory_id",
        (_ids_json(rows),),
    ):
        access[int(memory_id)] = (int(total), int(helpful), int(unhelpful))
    return {
        memory_id: Recurrence(max(sessions.get(memory_id, 1), 1), *access.get(memory_id, (0, 0, 0)))
        for memory_id in rows
    }


def load_contradictions(conn: Connection, ids: Iterable[int]) -> dict[tuple[int, int], tuple[str, float]]:
    """Cached NLI contradictions among ``ids``: {(a, b): (label, confidence)} with a < b."""
    payload = _ids_json(ids)
    rows = conn.execute(
        "SELECT memory_id_a, memory_id_b, nli_label, confidence FROM nli_results "
        "WHERE nli_label = 'contradiction' AND memory_id_a IN (SELECT value FROM json_each(:ids)) "
        "AND memory_id_b IN (SELECT value FROM json_each(:ids))",
        {"ids": payload},
    ).fetchall()
    return {(int(a), int(b)): (label, float(conf)) for a, b, label, conf in rows}


def _in_scope(row: Any, query: Query) -> bool:
    return query.project_id is None or row["scope"] == "global" or row["project_id"] == query.project_id


def gather(
    conn: Connection,
    query: Query,
    settings: Settings,
    *,
    vector_hits: Iterable[tuple[int, float]] | Mapping[int, float] | None = None,
) -> list[Candidate]:
    """The scored-to-be candidate set for ``query`` (sorted by id), each source bounded by settings."""
    limit = max(1, int(settings.retrieve.candidates))
    where, params = _filters(query)
    sources: dict[int, set[str]] = {}

    def add(ids: Iterable[int], source: str) -> None:
        for memory_id in ids:
            sources.setdefault(int(memory_id), set()).add(source)

    # bm25 of the best BM25_DEPTH * limit matches: the top `limit` become candidates, the rest only
    # give text scores to candidates other sources found (an FTS5 rowid filter re-runs the MATCH per row)
    bm25 = _text_matches(conn, query, where, params, BM25_DEPTH * limit)
    add(sorted(bm25, key=lambda i: bm25[i])[:limit], "fts")
    add(_concept_matches(conn, query, where, params, limit), "concept")
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

    rows = _load_rows(conn, list(sources))
    concepts = _load_concepts(conn, list(rows))
    recurrence = _recurrence(conn, rows) if rows else {}
    out: list[Candidate] = []
    for memory_id in sorted(rows):
        row = rows[memory_id]
        if not _in_scope(row, query):
            continue
        candidate = Candidate(
            **{c: row[c] for c in _COLUMNS},
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

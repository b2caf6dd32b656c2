"""Reads of ``memories``, ``memories_fts`` and ``concepts`` for retrieval, edges, review and benchmarks.

The projector writes these tables (:mod:`.projector`); this module holds the queries that read them
back. Every candidate query takes a :class:`MemoryScope` (project isolation and current truth; a
``retrieve.query.Query`` is one) and reads bounded windows through the tables' indexes, never the whole
table. Ranking policy (which tokens to drop, how many concepts to ask for) stays with the caller.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from nous_assets.status import INJECTABLE
from nous_assets.store.db import Connection
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, Memory
from nous_assets.store.search import owners

MAX_PARAMS = 900  # ids bound per statement: below SQLite's default variable limit
# Joins a memory's concepts in one row: str.split() takes it for whitespace, so no normalised concept holds it.
_SEPARATOR = "\x1f"


class MemoryScope(Protocol):
    """Which memories a query may see: its project's and global ones, valid at its reference time."""

    project_id: str | None
    include_expired: bool
    as_at: str | None

    @property
    def reference_time(self) -> str: ...


def _filters(scope: MemoryScope, alias: str = "m") -> tuple[str, dict[str, Any]]:
    """SQL condition (with named parameters) for project isolation and current truth."""
    clauses: list[str] = []
    params: dict[str, Any] = {}
    if scope.project_id is not None:
        clauses.append(f"({alias}.scope = 'global' OR {alias}.project_id = :project)")
        params["project"] = scope.project_id
    if not scope.include_expired:
        clauses.append(f"({alias}.valid_until IS NULL OR {alias}.valid_until > :ref)")
        params["ref"] = scope.reference_time
        if scope.as_at is not None:
            clauses.append(f"({alias}.valid_from IS NULL OR {alias}.valid_from <= :as_at)")
            params["as_at"] = scope.as_at
    return (" AND ".join(clauses) or "1"), params


def _ids_json(ids: Iterable[int]) -> str:
    return json.dumps(sorted(set(ids)))


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def count_in(conn: Connection, project_id: str) -> int:
    """Memories of one project ('*': the global ones) that still hold (not refuted or superseded)."""
    where = "scope = 'global'" if project_id == "*" else "project_id = ? AND scope = 'project'"
    params = () if project_id == "*" else (project_id,)
    sql = f"SELECT count(*) FROM memories WHERE {where} AND status NOT IN ('refuted', 'superseded')"
    return int(conn.execute(sql, params).fetchone()[0])


def rules_in(conn: Connection, project_id: str, kinds: Iterable[str]) -> list[tuple[int, str]]:
    """(id, content) of the memories of ``kinds`` that hold (verified, stated or observed) in one project and
    globally ('*': global ones only), oldest first."""
    where = "scope = 'global'" if project_id == "*" else "((project_id = ? AND scope = 'project') OR scope = 'global')"
    params = () if project_id == "*" else (project_id,)
    kinds, holding = sorted(kinds), sorted(INJECTABLE)
    sql = (f"SELECT id, content FROM memories WHERE {where} AND kind IN ({','.join('?' * len(kinds))}) "
           f"AND status IN ({','.join('?' * len(holding))}) ORDER BY id")  # fmt: skip
    return [(int(r[0]), str(r[1])) for r in conn.execute(sql, (*params, *kinds, *holding))]


def all_ids(conn: Connection) -> list[int]:
    return [int(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY id")]


def project_ids(conn: Connection) -> list[str]:
    """Every project with at least one memory, sorted."""
    return [r[0] for r in conn.execute("SELECT DISTINCT project_id FROM memories ORDER BY 1")]


def fts_matches(conn: Connection, match: str, scope: MemoryScope, limit: int) -> dict[int, float]:
    """{memory id: bm25} of the best FTS5 matches in scope (raises DatabaseError on an FTS5 failure).

    A project's query matches only its own and global rows in the index (their ``owner`` tokens), so bm25
    ranks those alone instead of every project's matches; the owner column has weight 0.
    """
    where, params = _filters(scope)
    expression = f"{{content concepts}} : ({match})"
    if scope.project_id is not None:
        expression += " AND " + owners.match_filter([owners.token(scope.project_id), owners.GLOBAL])
    rows = conn.execute(
        "SELECT m.id, bm25(memories_fts, 1.0, 1.0, 0.0) AS r FROM memories_fts "
        f"JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH :match AND {where} "
        "ORDER BY r LIMIT :limit",
        {**params, "match": expression, "limit": limit},
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def like_matches(conn: Connection, patterns: Iterable[str], scope: MemoryScope, limit: int) -> dict[int, int]:
    """{memory id: how many of the LIKE ``patterns`` (escaped with ``\\``) its content contains}, most first."""
    escaped = {f"t{i}": p for i, p in enumerate(patterns)}
    if not escaped:
        return {}
    where, params = _filters(scope)
    hits = " + ".join(f"(m.content LIKE :{name} ESCAPE '\\')" for name in escaped)
    rows = conn.execute(
        f"SELECT m.id, ({hits}) AS hits FROM memories m WHERE {where} AND ({hits}) > 0 "
        "ORDER BY hits DESC, m.id DESC LIMIT :limit",
        {**params, **escaped, "limit": limit},
    ).fetchall()
    return {int(r[0]): int(r[1]) for r in rows}


def document_frequency(conn: Connection, match: str, cap: int) -> int:
    """Rows matching the FTS5 expression, counted only up to ``cap + 1`` (cheap even for very common words)."""
    sql = "SELECT count(*) FROM (SELECT 1 FROM memories_fts WHERE memories_fts MATCH ? LIMIT ?)"
    return int(conn.execute(sql, (match, cap + 1)).fetchone()[0])


def concept_members(conn: Connection, concept: str, scope: MemoryScope, window: int) -> list[int]:
    """Ids of the newest ``window`` memories in scope that hold ``concept``.

    A project's query reads the concept's project and global rows (``idx_concepts_owner``) rather than
    every project's (``idx_concepts_concept``, newest first, which is what a query of all projects reads).
    """
    where, params = _filters(scope)
    rows = "SELECT id, memory_id FROM concepts WHERE concept = :concept"
    if scope.project_id is not None:  # two index ranges; owner NULL is the global memories'
        rows = f"{rows} AND owner = :project UNION ALL {rows} AND owner IS NULL"
    sql = (
        f"SELECT c.memory_id FROM ({rows}) c JOIN memories m ON m.id = c.memory_id "
        f"WHERE {where} ORDER BY c.id DESC LIMIT :window"
    )
    return [int(r[0]) for r in conn.execute(sql, {**params, "concept": concept, "window": window})]


# Distinct project ids by skip-scan over idx_memories_project: O(projects * log n), not a table scan.
_PROJECTS = (
    "WITH RECURSIVE p(id) AS (SELECT min(project_id) FROM memories UNION ALL "
    "SELECT (SELECT min(project_id) FROM memories WHERE project_id > p.id) FROM p WHERE p.id IS NOT NULL) "
    "SELECT id FROM p WHERE id IS NOT NULL"
)


def most_reinforced(conn: Connection, scope: MemoryScope, limit: int, window: int) -> list[int]:
    """Most reinforced (then newest) among the newest ``window`` memories of the project and of global scope.

    The window is read from ``idx_memories_project`` alone (id order within (project, scope)), so
    this costs O(window) however large the project is, instead of sorting every row.
    """
    where, params = _filters(scope)
    if scope.project_id is not None:
        projects = json.dumps([r[0] for r in conn.execute(_PROJECTS)])
        scopes = [
            ("project_id = :project AND scope = 'project'", {}),
            ("project_id IN (SELECT value FROM json_each(:projects)) AND scope = 'global'", {"projects": projects}),
        ]
    else:
        scopes = [("1", {})]
    ids: list[int] = []
    for part, extra in scopes:
        rows = conn.execute(
            "SELECT m.id FROM memories m WHERE m.id IN "
            f"(SELECT id FROM memories WHERE {part} ORDER BY id DESC LIMIT :window) AND {where} "
            "ORDER BY m.reinforcement_score DESC, m.id DESC LIMIT :limit",
            {**params, **extra, "window": window, "limit": limit},
        ).fetchall()
        ids.extend(int(r[0]) for r in rows)
    return ids


def rows_by_id(conn: Connection, ids: Iterable[int]) -> dict[int, Memory]:
    """The memories of ``ids`` (unknown ids are absent), without their concepts."""
    rows = conn.execute(
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE id IN (SELECT value FROM json_each(?))",
        (_ids_json(ids),),
    ).fetchall()
    return {int(r[0]): Memory(*r) for r in rows}


def concepts_of(conn: Connection, ids: Iterable[int]) -> dict[int, set[str]]:
    """{memory id: its concepts} for the memories of ``ids`` that have any (a row per memory, not per concept:
    retrieval reads those of a few hundred candidates a query)."""
    out: dict[int, set[str]] = {}
    ids = sorted(set(ids))
    for i in range(0, len(ids), MAX_PARAMS):
        part = ids[i : i + MAX_PARAMS]
        for memory_id, joined in conn.execute(
            f"SELECT memory_id, group_concat(concept, char({ord(_SEPARATOR)})) FROM concepts "
            f"WHERE memory_id IN ({','.join('?' * len(part))}) GROUP BY memory_id",
            part,
        ):
            out[int(memory_id)] = set(joined.split(_SEPARATOR))
    return out


def most_sharing(conn: Connection, concepts: Iterable[str], other_than: int, limit: int = 50) -> list[int]:
    """Ids of the ``limit`` memories (other than ``other_than``) sharing the most of ``concepts``."""
    marks = sorted(set(concepts))
    rows = conn.execute(
        f"SELECT memory_id FROM concepts WHERE concept IN ({','.join('?' * len(marks))}) AND memory_id != ? "
        "GROUP BY memory_id ORDER BY count(*) DESC LIMIT ?",
        (*marks, other_than, limit),
    ).fetchall()
    return [int(r[0]) for r in rows]


def scope_of_all(conn: Connection) -> dict[int, tuple[str, str]]:
    """{memory id: (project_id, scope)} of every memory."""
    return {int(r[0]): (r[1], r[2]) for r in conn.execute("SELECT id, project_id, scope FROM memories")}


def changed_since(conn: Connection, last_event_id: int) -> tuple[list[int], set[str]]:
    """Ids (ascending) and source sessions of the memories projected from events after ``last_event_id``."""
    rows = conn.execute(
        "SELECT id, source_session FROM memories WHERE last_event_id > ? ORDER BY id", (last_event_id,)
    ).fetchall()
    return [int(r[0]) for r in rows], {r[1] for r in rows}


def latest_event_id(conn: Connection, project_id: str | None = None) -> int:
    """The newest event any memory was projected from (of ``project_id``'s and global ones when given); 0 if none."""
    if project_id is None:
        row = conn.execute("SELECT coalesce(max(last_event_id), 0) FROM memories").fetchone()
    else:
        row = conn.execute(
            "SELECT coalesce(max(last_event_id), 0) FROM memories WHERE project_id = ? OR scope = 'global'",
            (project_id,),
        ).fetchone()
    return int(row[0])


def rows_in(conn: Connection, project_id: str) -> int:
    """Memory rows of ``project_id`` and global ones, whatever their status: an archived memory leaves the table, so
    this falls when one goes while :func:`latest_event_id` may stay where it was."""
    return int(conn.execute(
        "SELECT count(*) FROM memories WHERE project_id = ? OR scope = 'global'", (project_id,)
    ).fetchone()[0])  # fmt: skip


def provenance_of_sessions(conn: Connection, sessions: Iterable[str]) -> list[tuple[int, str, str | None]]:
    """(id, source_session, provenance_json) of every memory learned in one of ``sessions``."""
    wanted = sorted(set(sessions))
    marks = ",".join("?" * len(wanted))
    sql = f"SELECT id, source_session, provenance_json FROM memories WHERE source_session IN ({marks})"
    return conn.execute(sql, wanted).fetchall()


def provenance(conn: Connection, memory_id: int) -> dict[str, Any]:
    """The memory's provenance (quotes, record uuids); empty for an unknown memory or none recorded."""
    row = conn.execute("SELECT provenance_json FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return (json.loads(row[0]) or {}) if row and row[0] else {}


def overview(conn: Connection) -> list[tuple[int, str, str, str | None, str, str]]:
    """(id, project_id, scope, kind, content, source_session) of every memory, for benchmark reports."""
    return conn.execute("SELECT id, project_id, scope, kind, content, source_session FROM memories").fetchall()


def brief(conn: Connection, memory_id: int) -> Mapping[str, Any] | None:
    """id, learning_id, project_id and content of one memory; None when there is none."""
    return conn.execute(
        "SELECT id, learning_id, project_id, content FROM memories WHERE id = ?", (memory_id,)
    ).fetchone()

"""Reads of ``transcript_chunks`` (and its FTS index ``chunks_fts``) for episodic search and reports.

Capture writes the chunks; these are the queries retrieval, ``nous search`` and the benchmarks ask of
them. A project's chunks are those of every Claude Code folder mapped to it (``project_aliases``),
since chunks keep the folder they were read from as their project.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from nous_assets.store.db import Connection, DatabaseError

MAX_PARAMS = 900  # ids bound per statement: below SQLite's default variable limit


def _scope(project_id: str | None, as_at: str | None) -> tuple[str, tuple]:
    """SQL condition on ``c`` for the project's folders and (with ``as_at``) chunks said by then."""
    where, params = "", ()
    if project_id is not None:
        where = (
            " AND (c.project_id = ? OR c.project_id IN "
            "(SELECT alias FROM project_aliases WHERE kind = 'folder' AND project_id = ?))"
        )
        params = (project_id, project_id)
    if as_at:
        where += " AND c.timestamp <= ?"
        params += (as_at,)
    return where, params


def text_matches(
    conn: Connection, match: str, *, project_id: str | None, as_at: str | None, limit: int
) -> dict[int, float]:
    """{chunk id: bm25} of the best FTS5 matches in scope; empty when the expression does not parse."""
    where, params = _scope(project_id, as_at)
    try:
        rows = conn.execute(
            f"SELECT c.id, bm25(chunks_fts) FROM chunks_fts JOIN transcript_chunks c ON c.id = chunks_fts.rowid "
            f"WHERE chunks_fts MATCH ?{where} ORDER BY bm25(chunks_fts) LIMIT ?",
            (match, *params, limit),
        ).fetchall()
    except DatabaseError:
        return {}
    return {int(i): float(b) for i, b in rows}


def in_scope(conn: Connection, ids: Sequence[int], *, project_id: str | None, as_at: str | None) -> set[int]:
    """Those of ``ids`` that belong to the project (and were said by ``as_at``)."""
    where, params = _scope(project_id, as_at)
    allowed: set[int] = set()
    for i in range(0, len(ids), MAX_PARAMS):
        part = list(ids[i : i + MAX_PARAMS])
        allowed.update(
            int(r[0])
            for r in conn.execute(
                f"SELECT c.id FROM transcript_chunks c WHERE c.id IN ({','.join('?' * len(part))}){where}",
                (*part, *params),
            )
        )
    return allowed


def rows_by_id(conn: Connection, ids: Sequence[int]) -> Iterator[tuple[int, str, str, str, str, str]]:
    """(id, project_id, session_id, role, timestamp, text) of each chunk in ``ids``."""
    for i in range(0, len(ids), MAX_PARAMS):
        part = list(ids[i : i + MAX_PARAMS])
        yield from conn.execute(
            f"SELECT id, project_id, session_id, role, timestamp, text FROM transcript_chunks "
            f"WHERE id IN ({','.join('?' * len(part))})",
            part,
        )


def source_line(conn: Connection, chunk_id: int) -> str | None:
    """``path@offset`` of the chunk's first line in its transcript; None for an unknown chunk."""
    row = conn.execute(
        "SELECT source_path, line_offsets_json FROM transcript_chunks WHERE id = ?", (chunk_id,)
    ).fetchone()
    return f"{row[0]}@{json.loads(row[1])[0]}" if row else None


def record_uuids(conn: Connection, chunk_id: int) -> list[Any]:
    """The transcript record uuids the chunk was cut from (empty for an unknown chunk)."""
    row = conn.execute("SELECT uuids_json FROM transcript_chunks WHERE id = ?", (chunk_id,)).fetchone()
    return json.loads(row[0]) if row and row[0] else []


def count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0])


def session_count(conn: Connection) -> int:
    """Distinct sessions with at least one chunk."""
    return int(conn.execute("SELECT count(DISTINCT session_id) FROM transcript_chunks").fetchone()[0])

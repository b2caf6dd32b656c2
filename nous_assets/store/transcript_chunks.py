"""``transcript_chunks`` and its FTS index ``chunks_fts``: the episodic evidence rows and their text search.

Capture writes the chunks (:func:`upsert_chunk_rows`); retrieval, ``nous search`` and the benchmarks read
them. A chunk whose text changed keeps its id, and dropping its now stale vector is the vector store's
business (``forget_chunk_vectors``); ``embed.chunk_embedding.upsert_chunks`` does both in one transaction.
Chunks keep the Claude Code folder they were read from as their ``project_id``; a project's chunks are those
of the sessions ``project_aliases`` maps to it, and of the sessions with no mapping of their own in the
folders mapped to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from typing import Any

from nous_assets.store.db import Connection, DatabaseError, atomic

ChunkRow = tuple  # (uuid, project_id, session_id, date, role, timestamp, text, source_path, offsets, uuids)


def upsert_chunk_rows(conn: Connection, rows: Sequence[ChunkRow]) -> tuple[int, list[int]]:
    """Insert new chunks, rewrite the text of changed ones; (how many new, ids of the changed ones)."""
    new, changed = 0, []
    with atomic(conn):
        for row in rows:
            existing = conn.execute("SELECT id, text FROM transcript_chunks WHERE uuid = ?", (row[0],)).fetchone()
            if existing is None:
                cur = conn.execute(
                    "INSERT INTO transcript_chunks(uuid, project_id, session_id, date, role, timestamp, text, "
                    "source_path, line_offsets_json, uuids_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (cur.lastrowid, row[6]))
                new += 1
            elif existing[1] != row[6]:
                chunk_id = existing[0]
                conn.execute(
                    "UPDATE transcript_chunks SET text = ?, line_offsets_json = ?, uuids_json = ? WHERE id = ?",
                    (row[6], row[8], row[9], chunk_id),
                )
                conn.execute("DELETE FROM chunks_fts WHERE rowid = ?", (chunk_id,))
                conn.execute("INSERT INTO chunks_fts(rowid, text) VALUES (?, ?)", (chunk_id, row[6]))
                changed.append(chunk_id)
    return new, changed


MAX_PARAMS = 900  # ids bound per statement: below SQLite's default variable limit


def _scope(project_id: str | None, as_at: str | None) -> tuple[str, tuple]:
    """SQL condition on ``c`` for the project's sessions and (with ``as_at``) chunks said by then.

    A session belongs to the project ``project_aliases`` maps it to; only a session with no mapping of its
    own goes by its folder (as the projection maps events): one folder can hold several repositories' sessions.
    A folder named by its own id (the LoCoMo benchmark's projects) still means every chunk read from it.
    """
    where, params = "", ()
    if project_id is not None:
        where = (
            " AND (c.project_id = ?"
            " OR c.session_id IN (SELECT alias FROM project_aliases WHERE kind = 'session' AND project_id = ?)"
            " OR (c.session_id NOT IN (SELECT alias FROM project_aliases WHERE kind = 'session')"
            " AND c.project_id IN (SELECT alias FROM project_aliases WHERE kind = 'folder' AND project_id = ?)))"
        )
        params = (project_id, project_id, project_id)
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

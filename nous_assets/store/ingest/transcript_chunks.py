"""``transcript_chunks`` and its FTS index ``chunks_fts``: the episodic evidence rows and their text search.

``chunks_fts`` indexes each chunk in three columns (migration 012): its own ``text``, its ``context`` (the
:data:`CONTEXT_CHUNKS` chunks before and after it in its session) and ``dated`` (the day it was said, as
digits and words); a fourth, ``owner`` (migration 016), names the folder the chunk was read from, so a
project's search reads only the folders its chunks can be in. A turn often holds the answer while the
words a question uses are in the turn it replies to (or in the reply it got); bm25 weights the columns
apart (:func:`text_matches`), so a chunk's own words still count most. Every write of a chunk re-indexes
its neighbours too (:func:`reindex`).

Capture writes the chunks (:func:`upsert_chunk_rows`); retrieval, ``nous search`` and the benchmarks read
them. A chunk whose text changed keeps its id, and dropping its now stale vector is the vector store's
business (``forget_chunk_vectors``); ``embed.chunk_embedding.upsert_chunks`` does both in one transaction.
Chunks keep the Claude Code folder they were read from as their ``project_id``; a project's chunks are those
of the sessions ``project_aliases`` maps to it, and of the sessions with no mapping of their own in the
folders mapped to it.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from datetime import date as Date
from typing import Any

from nous_assets.store.db import Connection, DatabaseError, atomic
from nous_assets.store.search import owners

ChunkRow = tuple  # (uuid, project_id, session_id, date, role, timestamp, text, source_path, offsets, uuids)


def upsert_chunk_rows(conn: Connection, rows: Sequence[ChunkRow]) -> tuple[int, list[int]]:
    """Insert new chunks, rewrite the text of changed ones; (how many new, ids of the changed ones)."""
    new, changed, touched = 0, [], []
    with atomic(conn):
        for row in rows:
            existing = conn.execute("SELECT id, text FROM transcript_chunks WHERE uuid = ?", (row[0],)).fetchone()
            if existing is None:
                cur = conn.execute(
                    "INSERT INTO transcript_chunks(uuid, project_id, session_id, date, role, timestamp, text, "
                    "source_path, line_offsets_json, uuids_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                touched.append(int(cur.lastrowid))
                new += 1
            elif existing[1] != row[6]:
                chunk_id = existing[0]
                conn.execute(
                    "UPDATE transcript_chunks SET text = ?, line_offsets_json = ?, uuids_json = ? WHERE id = ?",
                    (row[6], row[8], row[9], chunk_id),
                )
                changed.append(chunk_id)
        reindex(conn, touched + changed)
    return new, changed


FTS_COLUMNS = ("text", "context", "dated")
CONTEXT_CHUNKS = 2  # neighbours indexed on each side of a chunk (the same number as migration 012's lag/lead)
_SESSION_WINDOW = (
    "SELECT id, project_id, text, date, "
    "lag(text, 2) OVER w, lag(text, 1) OVER w, lead(text, 1) OVER w, lead(text, 2) OVER w "
    "FROM transcript_chunks WHERE session_id = ? WINDOW w AS (ORDER BY timestamp, id)"
)


_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")  # not strftime's %B, which follows the locale (migration 012 writes English)


def date_words(day: str) -> str:
    """'2023-05-08' -> '2023-05-08 8 May 2023' (what a question may say); anything else as it is."""
    try:
        d = Date.fromisoformat(day)
    except (TypeError, ValueError):
        return day or ""
    return f"{day} {d.day} {_MONTHS[d.month - 1]} {d.year}"


def reindex(conn: Connection, chunk_ids: Iterable[int]) -> int:
    """Rewrite the FTS rows of ``chunk_ids`` and of their neighbours (whose context holds their text).

    Idempotent: the index row is always rebuilt from the stored chunks, whatever order they arrived in.
    Returns how many index rows were written.
    """
    ids = sorted({int(i) for i in chunk_ids})
    sessions: set[str] = set()
    for i in range(0, len(ids), MAX_PARAMS):
        part = ids[i : i + MAX_PARAMS]
        sessions.update(
            r[0]
            for r in conn.execute(
                f"SELECT DISTINCT session_id FROM transcript_chunks WHERE id IN ({','.join('?' * len(part))})", part
            )
        )
    wanted, written = set(ids), 0
    for session in sorted(sessions):
        rows = conn.execute(_SESSION_WINDOW, (session,)).fetchall()
        hit = [n for n, r in enumerate(rows) if r[0] in wanted]
        targets = sorted({m for n in hit for m in range(n - CONTEXT_CHUNKS, n + CONTEXT_CHUNKS + 1)})
        for n in targets:
            if 0 <= n < len(rows):
                chunk_id, folder, text, day, *around = rows[n]
                context = " ".join(t for t in around if t)
                conn.execute("DELETE FROM chunks_fts WHERE rowid = ?", (chunk_id,))
                conn.execute(
                    "INSERT INTO chunks_fts(rowid, text, context, dated, owner) VALUES (?, ?, ?, ?, ?)",
                    (chunk_id, text, context, date_words(day), owners.token(folder)),
                )
                written += 1
    return written


MAX_PARAMS = 900  # ids bound per statement: below SQLite's default variable limit


def folders_for(conn: Connection, project_id: str) -> list[str]:
    """The folders a project's chunks can be in: its own, those mapped to it, those of its mapped sessions.

    A superset of the project's scope (``transcript_chunks`` decides which of their chunks belong to it):
    scanning these partitions (or FTS owners) misses none of the project's chunks.
    """
    rows = conn.execute(
        "SELECT ? UNION SELECT alias FROM project_aliases WHERE kind = 'folder' AND project_id = ? "
        "UNION SELECT DISTINCT c.project_id FROM transcript_chunks c WHERE c.session_id IN "
        "(SELECT alias FROM project_aliases WHERE kind = 'session' AND project_id = ?)",
        (project_id, project_id, project_id),
    )
    return sorted(str(r[0]) for r in rows)


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
    conn: Connection,
    match: str,
    *,
    project_id: str | None,
    as_at: str | None,
    limit: int,
    weights: tuple[float, float, float] = (1.0, 0.0, 0.0),
) -> dict[int, float]:
    """{chunk id: bm25} of the best FTS5 matches in scope; empty when the expression does not parse.

    ``weights`` are bm25's per-column weights for (text, context, dated); the default, the chunk's own text
    alone, is the ranking before migration 012.
    """
    where, params = _scope(project_id, as_at)
    weighted = [(column, float(w)) for column, w in zip(FTS_COLUMNS, weights, strict=True) if w > 0]
    if not weighted:
        return {}
    columns = " ".join(column for column, _ in weighted)  # a column of weight 0 is not searched at all
    w = ", ".join(repr(float(x)) for x in (*weights, 0.0))  # the owner column never ranks
    expression = f"{{{columns}}} : ({match})"
    if project_id is not None:  # the index narrows to the folders the project's chunks can be in
        expression += " AND " + owners.match_filter([owners.token(f) for f in folders_for(conn, project_id)])
    try:
        rows = conn.execute(
            f"SELECT c.id, bm25(chunks_fts, {w}) AS r FROM chunks_fts JOIN transcript_chunks c "
            f"ON c.id = chunks_fts.rowid WHERE chunks_fts MATCH ?{where} ORDER BY r LIMIT ?",
            (expression, *params, limit),
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


def replies(conn: Connection, ids: Sequence[int]) -> dict[int, int]:
    """{chunk id: the first later chunk of its session said by the other role} for each of ``ids``: the turn that
    answers a question comes after it, and a turn of several messages (an assistant's) is answered after the last
    (the session index finds them)."""
    return {chunk_id: following for chunk_id, following, _, _ in _next_chunks(conn, ids, other_role=True)}


def next_in_session(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, str]]:
    """{chunk id: (role, text) of the next chunk of its session} for each of ``ids`` that has one."""
    return {chunk_id: (role, text) for chunk_id, _, role, text in _next_chunks(conn, ids, other_role=False)}


def _next_chunks(conn: Connection, ids: Sequence[int], *, other_role: bool) -> Iterator[tuple[int, int, str, str]]:
    """(chunk id, id, role and text of the next chunk of its session, of the other role if asked), one statement per
    batch of ids."""
    role = "AND x.role != c.role " if other_role else ""
    for i in range(0, len(ids), MAX_PARAMS):
        part = list(ids[i : i + MAX_PARAMS])
        for chunk_id, following, next_role, text in conn.execute(
            "SELECT c.id, n.id, n.role, n.text FROM transcript_chunks c JOIN transcript_chunks n ON n.id = "
            f"(SELECT x.id FROM transcript_chunks x WHERE x.session_id = c.session_id {role}"
            "AND (x.timestamp > c.timestamp OR (x.timestamp = c.timestamp AND x.id > c.id)) "
            "ORDER BY x.timestamp, x.id LIMIT 1) "
            f"WHERE c.id IN ({','.join('?' * len(part))})",
            part,
        ):
            yield int(chunk_id), int(following), next_role, text


def rejected_claims(conn: Connection, ids: Sequence[int]) -> dict[int, str]:
    """The assistant chunks among ``ids`` that hold the turn of a claim the transcripts later refuted or
    superseded (a memory's anchor: the first uuid of its provenance), with that status. Search marks them and
    ranks them below what still holds; migration 022's partial index keeps the lookup to the few closed claims."""
    out: dict[int, str] = {}
    for i in range(0, len(ids), MAX_PARAMS):
        part = list(ids[i : i + MAX_PARAMS])
        for chunk_id, status in conn.execute(
            "SELECT c.id, m.status FROM transcript_chunks c, json_each(c.uuids_json) u "
            "JOIN memories m ON json_extract(m.provenance_json, '$.uuids[0]') = u.value "
            "AND m.status IN ('refuted', 'superseded') "
            f"WHERE c.role = 'assistant' AND c.id IN ({','.join('?' * len(part))})",
            part,
        ):
            out.setdefault(int(chunk_id), status)
    return out


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

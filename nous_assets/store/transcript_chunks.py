"""``transcript_chunks`` and its FTS index ``chunks_fts``: the episodic evidence rows and their text search.

The capture step writes the chunks; search reads where one starts. Writes only these two tables: a chunk
whose text changed keeps its id, and dropping its now stale vector is the vector store's business
(``forget_chunk_vectors``), composed by the ``embeddings`` asset in the same transaction.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nous_assets.store.db import Connection, atomic

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


def chunk_source(conn: Connection, chunk_id: int) -> tuple[str, int] | None:
    """Where a chunk starts: its transcript path and the byte offset of its first line; None if it is gone."""
    row = conn.execute(
        "SELECT source_path, line_offsets_json FROM transcript_chunks WHERE id = ?", (chunk_id,)
    ).fetchone()
    if row is None:
        return None
    return row[0], json.loads(row[1])[0]

"""Episodic evidence: the conversation itself, searchable next to the extracted memories.

Each user or assistant message of the lake becomes one chunk (tool output, meta and compaction
summaries are left out; thinking was never stored). Chunks keep their transcript provenance, so a
search hit can always be traced back to the exact lines, and ids are stable per record uuid so
their vectors survive re-runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nous_assets.capture.parser import Turn
from nous_assets.store.db import Connection, atomic

MAX_CHARS = 1000  # ~ the 256-token window of MiniLM; longer text would be truncated by the model anyway
_KEEP_KINDS = ("message",)


def chunk_rows(turns: Sequence[Turn]) -> list[tuple]:
    rows = []
    for t in turns:
        if t.role not in ("user", "assistant") or t.kind not in _KEEP_KINDS or not t.text.strip():
            continue
        if t.agent_id and t.agent_id.startswith("acompact"):
            continue
        rows.append(
            (
                t.uuid,
                t.project_id,
                t.session_id,
                (t.timestamp or "")[:10],
                t.role,
                t.timestamp or "",
                t.text.strip()[:MAX_CHARS],
                t.source_path,
                json.dumps(list(t.line_offsets)),
                json.dumps(list(t.uuids)),
            )
        )
    return rows


def upsert_chunks(conn: Connection, turns: Sequence[Turn]) -> tuple[int, int]:
    """Insert new chunks, refresh changed ones (their vectors are dropped for re-embedding); (new, changed)."""
    rows = chunk_rows(turns)
    new = changed = 0
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
                conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (chunk_id,))
                conn.execute("DELETE FROM chunk_vector_meta WHERE chunk_id = ?", (chunk_id,))
                changed += 1
    return new, changed

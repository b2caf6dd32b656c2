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
from nous_assets.store.db import Connection
from nous_assets.store.ingest.transcript_chunks import upsert_chunk_rows

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


def store_chunks(conn: Connection, turns: Sequence[Turn]) -> tuple[int, list[int]]:
    """Insert new chunks, refresh changed ones; (how many new, ids of the changed ones).

    The vectors of changed chunks are stale: ``embed.chunk_embedding.upsert_chunks`` drops them in the same
    transaction, so this package never writes the embedding tables.
    """
    return upsert_chunk_rows(conn, chunk_rows(turns))

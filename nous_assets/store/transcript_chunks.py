"""Reads of ``transcript_chunks`` that the CLI needs (the chunks themselves are written by capture)."""

from __future__ import annotations

import json

from nous_assets.store.db import Connection


def chunk_source(conn: Connection, chunk_id: int) -> tuple[str, int] | None:
    """Where a chunk starts: its transcript path and the byte offset of its first line; None if it is gone."""
    row = conn.execute(
        "SELECT source_path, line_offsets_json FROM transcript_chunks WHERE id = ?", (chunk_id,)
    ).fetchone()
    if row is None:
        return None
    return row[0], json.loads(row[1])[0]

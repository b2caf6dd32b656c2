"""injection_cache rows for the resolver's tests, written as the pipeline's cache builder writes them."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path


def add_packet(
    db: Path,
    key: str,
    *,
    project_id: str = "*",
    scope: str = "global",
    fingerprint: object = None,
    text: object = "packet",
    ids: object = (1,),
    expires_at: str | None = None,
    created_at: str = "2025-01-01T00:00:00.000000Z",
) -> None:
    """Insert an injection_cache row; str ``fingerprint``/``ids`` are stored verbatim (to corrupt them)."""
    fp_json = fingerprint if isinstance(fingerprint, str) else json.dumps(fingerprint or {})
    ids_json = ids if isinstance(ids, str) else json.dumps(list(ids))
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, "
            "char_count, built_from_event_id, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
            (key, project_id, scope, fp_json, text, ids_json, len(text or ""), created_at, expires_at),
        )
    conn.close()


def store_only_packet(db: Path, project_id: str, text: str, memory_ids) -> None:
    """Make ``text`` (carrying ``memory_ids``) the project's one cached packet, replacing every other row."""
    with sqlite3.connect(db) as conn:
        conn.execute("DELETE FROM injection_cache")
    conn.close()
    add_packet(db, "k", project_id=project_id, scope="project", text=text, ids=memory_ids,
               created_at="2026-01-01T00:00:00.000000Z")  # fmt: skip

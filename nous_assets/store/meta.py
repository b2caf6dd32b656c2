"""``nous_meta``: the database's small named values (floor, active embedding model, cursors, checkpoints)."""

from __future__ import annotations

from nous_assets.store.db import Connection


def get(conn: Connection, key: str) -> str | None:
    """The value stored under ``key``, or None."""
    row = conn.execute("SELECT value FROM nous_meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else str(row[0])


def put(conn: Connection, key: str, value: str) -> None:
    """Store ``value`` under ``key`` (the caller holds the transaction)."""
    conn.execute(
        "INSERT INTO nous_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, value),
    )

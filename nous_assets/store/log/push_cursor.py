"""``nous push``'s cursor: the last local ``event_id`` a server acknowledged, per server and tenant.

Kept in ``nous_meta`` under ``push_cursor:<target>``; it only moves forward, and only after the server
answered for a whole batch, so a crash at any point resends at most one batch (which the server's
idempotency keys turn into no-ops).
"""

from __future__ import annotations

from nous_assets.store import meta
from nous_assets.store.db import Connection, atomic

_PREFIX = "push_cursor:"


def get(conn: Connection, target: str) -> int:
    """The last acknowledged event id for ``target`` (0 before the first push)."""
    value = meta.get(conn, _PREFIX + target)
    return int(value) if value is not None else 0


def advance(conn: Connection, target: str, event_id: int) -> int:
    """Move the cursor to ``event_id`` unless it is already past it; returns the cursor now stored."""
    with atomic(conn):
        current = get(conn, target)
        if event_id > current:
            meta.put(conn, _PREFIX + target, str(event_id))
            return event_id
        return current


def reset(conn: Connection, target: str, event_id: int = 0) -> None:
    """Set the cursor back (``nous push --from-start``): everything after ``event_id`` is sent again."""
    with atomic(conn):
        meta.put(conn, _PREFIX + target, str(event_id))

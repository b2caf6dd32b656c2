"""The ingest floor: the earliest day the automation (watch sensor, reconcile schedule) ingests.

A first ``nous run`` takes all the history on disk (``--since all``) and records its first day here; the
sensor then only requests days on or after it. A backfill of a window (``nous backfill`` takes 90 days by
default) leaves older history alone until the user takes it (``nous backfill --since …``, or a restart of
``nous run``, which takes older days that appeared), which lowers the floor. Kept in ``nous_meta``
because it describes what this database covers, whichever Dagster instance runs the pipeline.
"""

from __future__ import annotations

from datetime import date, timedelta

from nous_assets.store import meta
from nous_assets.store.db import Connection, atomic

KEY = "ingest_floor"


def get_floor(conn: Connection) -> str | None:
    """The recorded floor (``YYYY-MM-DD``), or None before the first backfill."""
    return meta.get(conn, KEY)


def lower_floor(conn: Connection, first: str, last: str | None = None) -> str:
    """Extend the watched window down to ``first`` after a backfill of ``first``..``last``; returns the floor.

    Only a range that reaches the current floor (or the first backfill ever) moves it: an isolated old range
    (``--from 2025-03-01 --to 2025-03-10``) must not make the sensor take every day between it and the floor.
    """
    with atomic(conn):
        current = get_floor(conn)
        if current is not None:
            reaches = last is None or date.fromisoformat(last) >= date.fromisoformat(current) - timedelta(days=1)
            if current <= first or not reaches:
                return current
        meta.put(conn, KEY, first)
    return first


DEFAULT_WINDOW_DAYS = 90  # `nous backfill` default history window (--since 90d); `nous run` takes all


def floor_or_default(conn: Connection, today: date) -> str:
    """The recorded floor, or the default window's first day when no backfill ever ran."""
    return get_floor(conn) or (today - timedelta(days=DEFAULT_WINDOW_DAYS)).isoformat()

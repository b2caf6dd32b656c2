"""The ``injection_cache`` table: packets the SessionStart hook prints, written by the cache builder.

Rows are keyed ``<project>:<fingerprint>`` (or ``<project>:cwd:<hash>`` for a checkout's own packet) and
stamped with the newest event their memories reflect, so the builder rebuilds only a project whose
memories moved on. The resolver reads them with its own stdlib-only query (``resolver/cache_read.py``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from nous_assets.store.db import Connection, atomic
from nous_assets.store.packet_row import PACKET_COLUMNS, CachedPacket, PacketRow


def drop_vanished(conn: Connection, projects: Iterable[str]) -> None:
    """Remove packets of projects not in ``projects``, and the per-cwd ``alias:`` copies older versions wrote."""
    with atomic(conn):
        conn.execute(
            "DELETE FROM injection_cache WHERE scope = 'project' AND (cache_key LIKE 'alias:%' OR project_id NOT IN "
            "(SELECT value FROM json_each(?)))",
            (json.dumps(list(projects)),),
        )


def built_versions(conn: Connection) -> dict[str, int]:
    """{project: the oldest ``built_from_event_id`` among its packets}."""
    return dict(
        conn.execute(
            "SELECT project_id, min(built_from_event_id) FROM injection_cache WHERE cache_key NOT LIKE 'alias:%' "
            "GROUP BY project_id"
        ).fetchall()
    )


def replace_packets(conn: Connection, project: str, rows: Sequence[PacketRow]) -> None:
    """Swap every packet of ``project`` for ``rows`` in one transaction (a reader sees the old set or the new)."""
    with atomic(conn):
        conn.execute("DELETE FROM injection_cache WHERE cache_key LIKE ?", (f"{project}:%",))
        conn.executemany(
            f"INSERT OR REPLACE INTO injection_cache({PACKET_COLUMNS}, expires_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
            rows,
        )


def packet(conn: Connection, cache_key: str) -> tuple | None:
    """One packet's columns in :data:`PacketRow` order, or None (what a provider's ``get`` returns)."""
    row = conn.execute(
        f"SELECT {PACKET_COLUMNS} FROM injection_cache WHERE cache_key = ?",
        (cache_key,),
    ).fetchone()
    return None if row is None else tuple(row)


def delete_keys(conn: Connection, cache_keys: Iterable[str]) -> int:
    """Drop the named packets; returns how many existed."""
    with atomic(conn):
        cur = conn.execute(
            "DELETE FROM injection_cache WHERE cache_key IN (SELECT value FROM json_each(?))",
            (json.dumps(sorted(set(cache_keys))),),
        )
    return cur.rowcount


def all_packets(conn: Connection) -> list[PacketRow]:
    """Every packet in :data:`PacketRow` order, by key (what team mode copies to the tenant's cache)."""
    rows = conn.execute(
        f"SELECT {PACKET_COLUMNS} FROM injection_cache WHERE cache_key NOT LIKE 'alias:%' ORDER BY cache_key"
    ).fetchall()
    return [tuple(r) for r in rows]  # type: ignore[misc]


class SqliteCacheStore:
    """``injection_cache`` (this module's functions, over one connection)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def put(self, project_id: str, rows: Sequence[PacketRow]) -> None:
        replace_packets(self.conn, project_id, rows)

    def get(self, cache_key: str) -> CachedPacket | None:
        row = packet(self.conn, cache_key)
        return None if row is None else CachedPacket(*row)

    def invalidate(self, cache_keys: Iterable[str]) -> int:
        return delete_keys(self.conn, cache_keys)

    def built_versions(self) -> dict[str, int]:
        return built_versions(self.conn)

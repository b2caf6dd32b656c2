"""Precomputed injection packets on PostgreSQL (``injection_cache`` of one tenant): what ``nous pull`` and
``ResolveContext`` read; the hook itself keeps reading its local ``cortex.db``."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg

from nous_assets.store.packet_row import PACKET_COLUMNS, CachedPacket, PacketRow


class PgCacheStore:
    """``injection_cache`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def put(self, project_id: str, rows: Sequence[PacketRow]) -> None:
        """Swap every packet of ``project_id`` for ``rows`` in one transaction (readers see old or new)."""
        prefix = f"{project_id}:"
        with self.conn.transaction():
            self.conn.execute(
                "DELETE FROM injection_cache WHERE tenant_id = %s AND left(cache_key, %s) = %s",
                (self.tenant_id, len(prefix), prefix),
            )
            if rows:
                self.conn.cursor().executemany(
                    f"INSERT INTO injection_cache(tenant_id, {PACKET_COLUMNS}, expires_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, NULL) ON CONFLICT (tenant_id, cache_key) "
                    "DO UPDATE SET project_id = excluded.project_id, scope = excluded.scope, "
                    "fingerprint_json = excluded.fingerprint_json, packet_text = excluded.packet_text, "
                    "memory_ids_json = excluded.memory_ids_json, char_count = excluded.char_count, "
                    "built_from_event_id = excluded.built_from_event_id, created_at = excluded.created_at, "
                    "expires_at = NULL",
                    [(self.tenant_id, *row) for row in rows],
                )

    def get(self, cache_key: str) -> CachedPacket | None:
        row = self.conn.execute(
            f"SELECT {PACKET_COLUMNS} FROM injection_cache WHERE tenant_id = %s AND cache_key = %s",
            (self.tenant_id, cache_key),
        ).fetchone()
        return None if row is None else CachedPacket(*row)

    def invalidate(self, cache_keys: Iterable[str]) -> int:
        keys = sorted(set(cache_keys))
        if not keys:
            return 0
        return self.conn.execute(
            "DELETE FROM injection_cache WHERE tenant_id = %s AND cache_key = ANY(%s)", (self.tenant_id, keys)
        ).rowcount

    def built_versions(self) -> dict[str, int]:
        rows = self.conn.execute(
            "SELECT project_id, min(built_from_event_id) FROM injection_cache WHERE tenant_id = %s "
            "AND cache_key NOT LIKE 'alias:%%' GROUP BY project_id",
            (self.tenant_id,),
        ).fetchall()
        return {r[0]: int(r[1]) for r in rows}

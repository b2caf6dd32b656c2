"""``nous serve``'s tokens, receipts and packet feed on PostgreSQL (migration 002).

The same contract as :class:`nous_assets.store.sqlite.service_store.SqliteServiceStore`. A token row names its
tenant; tenant data (receipts, packets) is read and written only with the tenant the token decided.
"""

from __future__ import annotations

from collections.abc import Sequence

import psycopg

from nous_assets.store.packet_row import PACKET_COLUMNS, CachedPacket
from nous_assets.store.sqlite.service_store import RECEIPT_COLUMNS, Receipt, TokenRecord, receipt_rows

_SELECT_TOKENS = (
    "SELECT token_id, tenant_id, client_id, scopes, salt, digest, created_at, revoked_at FROM service_tokens"
)


def _token(row: Sequence) -> TokenRecord:
    return TokenRecord(row[0], row[1], row[2], tuple(s for s in row[3].split(",") if s), *row[4:8])


class PgServiceStore:
    """The service tables of the shared database."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn

    def add_token(self, record: TokenRecord) -> None:
        self.conn.execute(
            "INSERT INTO service_tokens(token_id, tenant_id, client_id, scopes, salt, digest, created_at, revoked_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s)",
            (record.token_id, record.tenant_id, record.client_id, ",".join(record.scopes), record.salt,
             record.digest, record.created_at, record.revoked_at),
        )  # fmt: skip

    def find_token(self, token_id: str) -> TokenRecord | None:
        row = self.conn.execute(_SELECT_TOKENS + " WHERE token_id = %s", (token_id,)).fetchone()
        return None if row is None else _token(row)

    def tokens(self) -> list[TokenRecord]:
        rows = self.conn.execute(_SELECT_TOKENS + " ORDER BY tenant_id, client_id, created_at").fetchall()
        return [_token(r) for r in rows]

    def revoke(
        self, *, at: str, token_id: str | None = None, client_id: str | None = None, tenant_id: str | None = None
    ) -> int:
        return self.conn.execute(
            "UPDATE service_tokens SET revoked_at = %s WHERE revoked_at IS NULL "
            "AND (token_id = %s OR client_id = %s) AND (%s::text IS NULL OR tenant_id = %s)",
            (at, token_id, client_id, tenant_id, tenant_id),
        ).rowcount

    def record_receipts(self, tenant_id: str, receipts: Sequence[Receipt]) -> None:
        if not receipts:
            return
        with self.conn.transaction():
            self.conn.cursor().executemany(
                f"INSERT INTO service_receipts(tenant_id, {RECEIPT_COLUMNS}) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                "ON CONFLICT DO NOTHING",
                receipt_rows(tenant_id, receipts),
            )

    def receipt(self, tenant_id: str, kind: str, idempotency_key: str) -> Receipt | None:
        row = self.conn.execute(
            f"SELECT {RECEIPT_COLUMNS} FROM service_receipts "
            "WHERE tenant_id = %s AND kind = %s AND idempotency_key = %s",
            (tenant_id, kind, idempotency_key),
        ).fetchone()
        return None if row is None else Receipt(*row)

    def packets(self, tenant_id: str, *, project_id: str | None, after: str, limit: int) -> list[CachedPacket]:
        rows = self.conn.execute(
            f"SELECT {PACKET_COLUMNS} FROM injection_cache WHERE tenant_id = %s AND cache_key > %s "
            "AND (%s::text IS NULL OR project_id = %s) AND cache_key NOT LIKE 'alias:%%' ORDER BY cache_key LIMIT %s",
            (tenant_id, after, project_id, project_id, limit),
        ).fetchall()
        return [CachedPacket(*r) for r in rows]

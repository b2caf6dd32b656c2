"""What ``nous serve`` keeps besides the contract's providers: client tokens, write receipts, the packet feed.

Tokens are looked up before any tenant is known (the token decides the tenant), so this store is not bound
to one tenant the way the providers are; every method that reads tenant data takes the tenant explicitly.
A token is kept as a salted digest only (:mod:`nous_assets.service.tokens` makes and checks them). The
SQLite implementation is here (migration 017); PostgreSQL's is :mod:`nous_assets.store.pg.service_store`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import astuple, dataclass, fields
from typing import Protocol

from nous_assets.store.db import Connection, atomic
from nous_assets.store.packet_row import PACKET_COLUMNS, CachedPacket


@dataclass(frozen=True)
class TokenRecord:
    """One client's token as stored: the public ``token_id`` and a salted digest of the secret half."""

    token_id: str
    tenant_id: str
    client_id: str
    scopes: tuple[str, ...]
    salt: str
    digest: str
    created_at: str
    revoked_at: str | None = None


@dataclass(frozen=True)
class Receipt:
    """Who delivered an idempotency key first, and as which source (auditable by client and source)."""

    kind: str  # event | artifact
    idempotency_key: str
    client_id: str
    event_source: str
    project_id: str
    session_id: str
    received_at: str


#: A receipt's columns after ``tenant_id``, in :class:`Receipt` order (both backends' SQL).
RECEIPT_COLUMNS = ", ".join(f.name for f in fields(Receipt))


def receipt_rows(tenant_id: str, receipts: Sequence[Receipt]) -> list[tuple]:
    """``(tenant_id, *receipt)`` rows for an insert into ``service_receipts``."""
    return [(tenant_id, *astuple(r)) for r in receipts]


class ServiceStore(Protocol):
    """Tokens (any tenant), receipts and packet pages (one tenant per call)."""

    def add_token(self, record: TokenRecord) -> None: ...

    def find_token(self, token_id: str) -> TokenRecord | None: ...

    def tokens(self) -> list[TokenRecord]: ...

    def revoke(
        self, *, at: str, token_id: str | None = None, client_id: str | None = None, tenant_id: str | None = None
    ) -> int:
        """Revoke one token, or every live token of a client (of ``tenant_id``, or of any); how many were live."""
        ...

    def record_receipts(self, tenant_id: str, receipts: Sequence[Receipt]) -> None:
        """Keep the first receipt of each key (a retried delivery writes nothing)."""
        ...

    def receipt(self, tenant_id: str, kind: str, idempotency_key: str) -> Receipt | None: ...

    def packets(self, tenant_id: str, *, project_id: str | None, after: str, limit: int) -> list[CachedPacket]:
        """Packets with ``cache_key > after`` in key order (of one project, or all), at most ``limit``."""
        ...


def _token(row: Sequence) -> TokenRecord:
    return TokenRecord(row[0], row[1], row[2], tuple(s for s in row[3].split(",") if s), *row[4:8])


_TOKEN_FIELDS = "token_id, tenant_id, client_id, scopes, salt, digest, created_at, revoked_at"


class SqliteServiceStore:
    """The service tables of a ``cortex.db`` (which holds one tenant's data; tokens name it anyway)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add_token(self, record: TokenRecord) -> None:
        with atomic(self.conn):
            self.conn.execute(
                f"INSERT INTO service_tokens({_TOKEN_FIELDS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (record.token_id, record.tenant_id, record.client_id, ",".join(record.scopes), record.salt,
                 record.digest, record.created_at, record.revoked_at),
            )  # fmt: skip

    def find_token(self, token_id: str) -> TokenRecord | None:
        row = self.conn.execute(
            f"SELECT {_TOKEN_FIELDS} FROM service_tokens WHERE token_id = ?", (token_id,)
        ).fetchone()
        return None if row is None else _token(row)

    def tokens(self) -> list[TokenRecord]:
        rows = self.conn.execute(
            f"SELECT {_TOKEN_FIELDS} FROM service_tokens ORDER BY tenant_id, client_id, created_at"
        )
        return [_token(r) for r in rows]

    def revoke(
        self, *, at: str, token_id: str | None = None, client_id: str | None = None, tenant_id: str | None = None
    ) -> int:
        with atomic(self.conn):
            return self.conn.execute(
                "UPDATE service_tokens SET revoked_at = ? WHERE revoked_at IS NULL AND (token_id = ? OR client_id = ?) "
                "AND (? IS NULL OR tenant_id = ?)",
                (at, token_id, client_id, tenant_id, tenant_id),
            ).rowcount

    def record_receipts(self, tenant_id: str, receipts: Sequence[Receipt]) -> None:
        with atomic(self.conn):
            self.conn.executemany(
                f"INSERT INTO service_receipts(tenant_id, {RECEIPT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                receipt_rows(tenant_id, receipts),
            )

    def receipt(self, tenant_id: str, kind: str, idempotency_key: str) -> Receipt | None:
        row = self.conn.execute(
            f"SELECT {RECEIPT_COLUMNS} FROM service_receipts WHERE tenant_id = ? AND kind = ? AND idempotency_key = ?",
            (tenant_id, kind, idempotency_key),
        ).fetchone()
        return None if row is None else Receipt(*row)

    def packets(self, tenant_id: str, *, project_id: str | None, after: str, limit: int) -> list[CachedPacket]:
        rows = self.conn.execute(
            f"SELECT {PACKET_COLUMNS} FROM injection_cache WHERE cache_key > ? AND (? IS NULL OR project_id = ?) "
            "AND cache_key NOT LIKE 'alias:%' ORDER BY cache_key LIMIT ?",
            (after, project_id, project_id, limit),
        ).fetchall()
        return [CachedPacket(*r) for r in rows]

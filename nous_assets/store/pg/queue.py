"""The ingest queue on PostgreSQL: the contract of :mod:`nous_assets.store.sqlite.queue`, for one tenant.

What ``POST /v1/artifacts`` writes on a team server: idempotent enqueue that never resurrects a finished key,
validated as the SQLite module validates. The claim side (leases, heartbeats, backoff, dead letters) is the
laptop worker's, on SQLite only: nothing on PostgreSQL claims, so the contract holds no claim methods.
"""

from __future__ import annotations

import json
from typing import Any

import psycopg
from psycopg.rows import dict_row

from nous_assets.store.sqlite.queue import (
    STATUSES,
    QueueItem,
    check_artifact,
)
from nous_assets.timeutil import now_iso, parse_time, to_iso

_COLUMNS = (
    "ingest_id, source, project_id, session_id, transcript_path, file_inode, file_offset, payload_json, status, "
    "retry_count, claimed_by, claimed_at, lease_expires_at, next_attempt_at, last_error, idempotency_key, "
    "created_at, updated_at"
)


def _item(row: dict[str, Any]) -> QueueItem:
    fields = dict(row)
    fields["payload"] = json.loads(fields.pop("payload_json"))
    return QueueItem(**fields)


def _now(now: str | None) -> str:
    return now_iso() if now is None else to_iso(parse_time(now))


class PgIngestQueueStore:
    """``ingest_events`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def _one(self, sql: str, params: tuple) -> dict[str, Any] | None:
        return self.conn.cursor(row_factory=dict_row).execute(sql, params).fetchone()

    def get(self, ingest_id: int) -> QueueItem | None:
        row = self._one(
            f"SELECT {_COLUMNS} FROM ingest_events WHERE tenant_id = %s AND ingest_id = %s", (self.tenant_id, ingest_id)
        )
        return None if row is None else _item(row)

    def get_by_key(self, idempotency_key: str) -> QueueItem | None:
        row = self._one(
            f"SELECT {_COLUMNS} FROM ingest_events WHERE tenant_id = %s AND idempotency_key = %s",
            (self.tenant_id, idempotency_key),
        )
        return None if row is None else _item(row)

    def enqueue(
        self,
        *,
        source: str,
        project_id: str,
        session_id: str,
        transcript_path: str,
        file_inode: str | None,
        file_offset: int,
        payload: dict[str, Any],
        idempotency_key: str,
        now: str | None = None,
    ) -> tuple[QueueItem, bool]:
        payload_json = check_artifact(source, project_id, session_id, transcript_path, file_offset, payload,
                                      idempotency_key)  # fmt: skip
        stamp = _now(now)
        with self.conn.transaction():
            cur = self.conn.execute(
                "INSERT INTO ingest_events(tenant_id, source, project_id, session_id, transcript_path, file_inode, "
                "file_offset, payload_json, status, retry_count, idempotency_key, created_at, updated_at) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, 'pending', 0, %s, %s, %s) "
                "ON CONFLICT (tenant_id, idempotency_key) DO NOTHING",
                (self.tenant_id, source, project_id, session_id, transcript_path, file_inode, file_offset,
                 payload_json, idempotency_key, stamp, stamp),
            )  # fmt: skip
            created = cur.rowcount == 1
            item = self.get_by_key(idempotency_key)
        assert item is not None
        return item, created

    def counts(self) -> dict[str, int]:
        result = dict.fromkeys(STATUSES, 0)
        for status, n in self.conn.execute(
            "SELECT status, count(*) FROM ingest_events WHERE tenant_id = %s GROUP BY status", (self.tenant_id,)
        ):
            result[status] = n
        return result

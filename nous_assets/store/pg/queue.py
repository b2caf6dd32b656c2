"""The ingest queue on PostgreSQL: the contract of :mod:`nous_assets.store.sqlite.queue`, for one tenant.

Claims use ``FOR UPDATE SKIP LOCKED`` so concurrent workers (many processes, many machines) lease disjoint
items without waiting on each other; every other rule (lease ownership, backoff, dead letters, idempotent
enqueue that never resurrects a finished key) is the SQLite module's, with the same words and numbers.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import psycopg
from psycopg.rows import dict_row

from nous_assets.store.sqlite.queue import (
    DEFAULT_BACKOFF_BASE_SECONDS,
    DEFAULT_LEASE_SECONDS,
    DEFAULT_MAX_ATTEMPTS,
    LEASE_EXPIRED,
    MAX_ERROR_CHARS,
    STATUSES,
    QueueItem,
    backoff_seconds,
    check_artifact,
)
from nous_assets.timeutil import now_iso, parse_time, to_iso

_COLUMNS = (
    "ingest_id, source, project_id, session_id, transcript_path, file_inode, file_offset, payload_json, status, "
    "retry_count, claimed_by, claimed_at, lease_expires_at, next_attempt_at, last_error, idempotency_key, "
    "created_at, updated_at"
)
_RETURNING = _COLUMNS.replace("ingest_id", "i.ingest_id", 1)  # `due` has an ingest_id too
_CLEAR_CLAIM = "claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL"


def _item(row: dict[str, Any]) -> QueueItem:
    fields = dict(row)
    fields["payload"] = json.loads(fields.pop("payload_json"))
    return QueueItem(**fields)


def _now(now: str | None) -> str:
    return now_iso() if now is None else to_iso(parse_time(now))


def _plus(now: str, seconds: float) -> str:
    return to_iso(parse_time(now) + timedelta(seconds=seconds))


def _require_worker(worker_id: Any) -> None:
    if not isinstance(worker_id, str) or not worker_id.strip():
        raise ValueError(f"worker_id must be a non-empty string, got {worker_id!r}")


def _require_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")


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

    def claim(
        self,
        worker_id: str,
        *,
        limit: int = 10,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
        now: str | None = None,
    ) -> list[QueueItem]:
        _require_worker(worker_id)
        _require_positive("lease_seconds", lease_seconds)
        if limit <= 0:
            return []
        stamp = _now(now)
        with self.conn.transaction():
            rows = (
                self.conn.cursor(row_factory=dict_row)
                .execute(
                    "WITH due AS (SELECT ingest_id FROM ingest_events WHERE tenant_id = %s "
                    "AND status IN ('pending', 'failed') AND (next_attempt_at IS NULL OR next_attempt_at <= %s) "
                    "ORDER BY ingest_id LIMIT %s FOR UPDATE SKIP LOCKED) "
                    "UPDATE ingest_events i SET status = 'processing', claimed_by = %s, claimed_at = %s, "
                    "lease_expires_at = %s, updated_at = %s FROM due "
                    f"WHERE i.tenant_id = %s AND i.ingest_id = due.ingest_id RETURNING {_RETURNING}",
                    (self.tenant_id, stamp, limit, worker_id, stamp, _plus(stamp, lease_seconds), stamp,
                     self.tenant_id),
                )  # fmt: skip
                .fetchall()
            )
        return sorted((_item(r) for r in rows), key=lambda i: i.ingest_id)

    def heartbeat(
        self, ingest_id: int, worker_id: str, *, lease_seconds: float = DEFAULT_LEASE_SECONDS, now: str | None = None
    ) -> bool:
        _require_positive("lease_seconds", lease_seconds)
        stamp = _now(now)
        cur = self.conn.execute(
            "UPDATE ingest_events SET lease_expires_at = %s, updated_at = %s WHERE tenant_id = %s AND ingest_id = %s "
            "AND status = 'processing' AND claimed_by = %s AND lease_expires_at >= %s",
            (_plus(stamp, lease_seconds), stamp, self.tenant_id, ingest_id, worker_id, stamp),
        )
        return cur.rowcount == 1

    def complete(self, ingest_id: int, worker_id: str, now: str | None = None) -> bool:
        stamp = _now(now)
        cur = self.conn.execute(
            f"UPDATE ingest_events SET status = 'completed', {_CLEAR_CLAIM}, next_attempt_at = NULL, updated_at = %s "
            "WHERE tenant_id = %s AND ingest_id = %s AND status = 'processing' AND claimed_by = %s "
            "AND lease_expires_at >= %s",
            (stamp, self.tenant_id, ingest_id, worker_id, stamp),
        )
        return cur.rowcount == 1

    def _retry(self, ingest_id: int, retry_count: int, error: str, stamp: str, *, retry_status: str,
               max_attempts: int, backoff_base_seconds: float) -> str:  # fmt: skip
        attempts = retry_count + 1
        if attempts >= max_attempts:
            status, next_at = "dead_letter", None
        else:
            status, next_at = retry_status, _plus(stamp, backoff_seconds(attempts, backoff_base_seconds))
        self.conn.execute(
            f"UPDATE ingest_events SET status = %s, retry_count = %s, last_error = %s, next_attempt_at = %s, "
            f"{_CLEAR_CLAIM}, updated_at = %s WHERE tenant_id = %s AND ingest_id = %s",
            (status, attempts, error[:MAX_ERROR_CHARS], next_at, stamp, self.tenant_id, ingest_id),
        )
        return status

    def fail(
        self,
        ingest_id: int,
        worker_id: str,
        error: str,
        *,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        backoff_base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS,
        now: str | None = None,
    ) -> str:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
        stamp = _now(now)
        with self.conn.transaction():
            row = self._one(
                "SELECT status, claimed_by, retry_count FROM ingest_events WHERE tenant_id = %s AND ingest_id = %s "
                "FOR UPDATE",
                (self.tenant_id, ingest_id),
            )
            if row is None:
                raise LookupError(f"no ingest event with ingest_id {ingest_id}")
            if row["status"] != "processing" or row["claimed_by"] != worker_id:
                return row["status"]
            return self._retry(ingest_id, row["retry_count"], str(error), stamp, retry_status="failed",
                               max_attempts=max_attempts, backoff_base_seconds=backoff_base_seconds)  # fmt: skip

    def sweep_expired(
        self,
        *,
        backoff_base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS,
        max_attempts: int = DEFAULT_MAX_ATTEMPTS,
        now: str | None = None,
    ) -> int:
        if max_attempts < 1:
            raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
        stamp = _now(now)
        with self.conn.transaction():
            rows = self.conn.execute(
                "SELECT ingest_id, retry_count FROM ingest_events WHERE tenant_id = %s AND status = 'processing' "
                "AND (lease_expires_at IS NULL OR lease_expires_at < %s) ORDER BY ingest_id FOR UPDATE SKIP LOCKED",
                (self.tenant_id, stamp),
            ).fetchall()
            for ingest_id, retry_count in rows:
                self._retry(ingest_id, retry_count, LEASE_EXPIRED, stamp, retry_status="pending",
                            max_attempts=max_attempts, backoff_base_seconds=backoff_base_seconds)  # fmt: skip
        return len(rows)

    def requeue_dead_letter(self, ingest_id: int | None = None, now: str | None = None) -> int:
        sql = (
            f"UPDATE ingest_events SET status = 'pending', retry_count = 0, next_attempt_at = NULL, {_CLEAR_CLAIM}, "
            "updated_at = %s WHERE tenant_id = %s AND status = 'dead_letter'"
        )
        params: tuple[Any, ...] = (_now(now), self.tenant_id)
        if ingest_id is not None:
            sql += " AND ingest_id = %s"
            params += (ingest_id,)
        return self.conn.execute(sql, params).rowcount

    def counts(self) -> dict[str, int]:
        result = dict.fromkeys(STATUSES, 0)
        for status, n in self.conn.execute(
            "SELECT status, count(*) FROM ingest_events WHERE tenant_id = %s GROUP BY status", (self.tenant_id,)
        ):
            result[status] = n
        return result

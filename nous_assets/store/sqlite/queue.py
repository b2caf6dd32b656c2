"""The durable ingest queue (``ingest_events``): the spec's IngestQueueStore.

Contract ("Ingest Queue Durability Contract"):

* Transitions: ``pending -> processing -> completed | failed``; ``failed`` is retried after an
  exponential backoff; after ``max_attempts`` attempts an item becomes ``dead_letter`` (terminal).
* Enqueue is idempotent on ``idempotency_key``: a reconcile scan may re-enqueue what the watcher
  already queued, and a key that is ``completed`` or ``dead_letter`` is never resurrected.
* Claim protocol: :func:`claim` moves due items to ``processing`` and stamps ``claimed_by``,
  ``claimed_at`` and ``lease_expires_at`` in one ``BEGIN IMMEDIATE`` transaction, so two claimers
  never get the same item; :func:`heartbeat` extends the lease while work is active.
* Recovery: :func:`sweep_expired` returns stale ``processing`` rows (``lease_expires_at < now``) to
  ``pending`` with ``retry_count + 1``, ``last_error = 'lease_expired'`` and a backoff
  ``next_attempt_at`` (or to ``dead_letter`` when that was the last attempt).

Holding a lease means: status ``processing``, ``claimed_by = worker_id`` and
``lease_expires_at >= now``. :func:`heartbeat` and :func:`complete` require all three, so a worker
whose lease ran out can neither extend it nor complete the item, whether or not a sweeper has run
yet; its work is redone by the next claimer and the item is completed exactly once. :func:`fail`
only needs the first two: recording a failure after the lease ran out does what the sweeper would
do anyway, but keeps the real error message.

Cursor promotion is the caller's job and belongs after a successful :func:`complete`, ideally in
the same transaction (every write here goes through :func:`atomic`, which nests as a savepoint)::

    with atomic(conn):
        append the item's events ...
        if complete(conn, item.ingest_id, worker):
            cursors.promote(conn, item.transcript_path, item.file_inode, item.file_offset, mtime)

Every function takes ``now`` (ISO-8601 text, default :func:`now_iso`) so time can be driven
deterministically; times are stored as canonical UTC text, which SQL compares correctly.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from nous_assets.settings import Thresholds
from nous_assets.store.db import Connection, atomic
from nous_assets.timeutil import now_iso, parse_time, to_iso

SOURCES = ("fs_watch", "fs_reconcile", "historical_backfill")
STATUSES = ("pending", "processing", "completed", "failed", "dead_letter")
TERMINAL_STATUSES = ("completed", "dead_letter")
CLAIMABLE_STATUSES = ("pending", "failed")

_DEFAULTS = Thresholds()
DEFAULT_MAX_ATTEMPTS = _DEFAULTS.queue_max_attempts
DEFAULT_LEASE_SECONDS = _DEFAULTS.queue_lease_seconds
DEFAULT_BACKOFF_BASE_SECONDS = _DEFAULTS.queue_backoff_base_seconds
MAX_BACKOFF_SECONDS = 3600.0
MAX_ERROR_CHARS = 2000
LEASE_EXPIRED = "lease_expired"

_COLUMNS = (
    "ingest_id, source, project_id, session_id, transcript_path, file_inode, file_offset, payload_json, status, "
    "retry_count, claimed_by, claimed_at, lease_expires_at, next_attempt_at, last_error, idempotency_key, "
    "created_at, updated_at"
)
_CLEAR_CLAIM = "claimed_by = NULL, claimed_at = NULL, lease_expires_at = NULL"


@dataclass(frozen=True)
class QueueItem:
    """One ``ingest_events`` row, with ``payload_json`` parsed into ``payload``."""

    ingest_id: int
    source: str
    project_id: str
    session_id: str
    transcript_path: str
    file_inode: str | None
    file_offset: int
    payload: dict[str, Any]
    status: str
    retry_count: int
    claimed_by: str | None
    claimed_at: str | None
    lease_expires_at: str | None
    next_attempt_at: str | None
    last_error: str | None
    idempotency_key: str
    created_at: str
    updated_at: str

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL_STATUSES


def _item(row: Any) -> QueueItem:
    return QueueItem(
        ingest_id=row["ingest_id"],
        source=row["source"],
        project_id=row["project_id"],
        session_id=row["session_id"],
        transcript_path=row["transcript_path"],
        file_inode=row["file_inode"],
        file_offset=row["file_offset"],
        payload=json.loads(row["payload_json"]),
        status=row["status"],
        retry_count=row["retry_count"],
        claimed_by=row["claimed_by"],
        claimed_at=row["claimed_at"],
        lease_expires_at=row["lease_expires_at"],
        next_attempt_at=row["next_attempt_at"],
        last_error=row["last_error"],
        idempotency_key=row["idempotency_key"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
    )


def _now(now: str | None) -> str:
    return now_iso() if now is None else to_iso(parse_time(now))


def _plus(now: str, seconds: float) -> str:
    return to_iso(parse_time(now) + timedelta(seconds=seconds))


def _require_text(name: str, value: Any) -> None:
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{name} must be a non-empty string, got {value!r}")


def _require_positive(name: str, value: Any) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{name} must be a positive number, got {value!r}")


def backoff_seconds(retry_count: int, base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS) -> float:
    """Delay before attempt ``retry_count + 1``: ``base * 2**(retry_count - 1)``, capped at one hour.

    Deterministic (no jitter), so tests and replays see the same schedule.
    """
    if retry_count < 1:
        return 0.0
    return float(min(base_seconds * 2 ** min(retry_count - 1, 32), MAX_BACKOFF_SECONDS))


def get(conn: Connection, ingest_id: int) -> QueueItem | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM ingest_events WHERE ingest_id = ?", (ingest_id,)).fetchone()
    return None if row is None else _item(row)


def get_by_key(conn: Connection, idempotency_key: str) -> QueueItem | None:
    row = conn.execute(f"SELECT {_COLUMNS} FROM ingest_events WHERE idempotency_key = ?", (idempotency_key,)).fetchone()
    return None if row is None else _item(row)


def check_artifact(
    source: str,
    project_id: str,
    session_id: str,
    transcript_path: str,
    file_offset: int,
    payload: dict[str, Any],
    idempotency_key: str,
) -> str:
    """Validate an artifact to enqueue (ValueError naming the field); returns its canonical ``payload_json``.

    Shared by every queue backend, so a bad artifact is refused with the same words everywhere.
    """
    if source not in SOURCES:
        raise ValueError(f"source {source!r} is not one of {SOURCES}")
    for name, value in (
        ("project_id", project_id),
        ("session_id", session_id),
        ("transcript_path", transcript_path),
        ("idempotency_key", idempotency_key),
    ):
        _require_text(name, value)
    if isinstance(file_offset, bool) or not isinstance(file_offset, int) or file_offset < 0:
        raise ValueError(f"file_offset must be a non-negative integer, got {file_offset!r}")
    if not isinstance(payload, dict):
        raise ValueError(f"payload must be a dict, got {type(payload).__name__}")
    return json.dumps(payload, sort_keys=True, ensure_ascii=False)


def enqueue(
    conn: Connection,
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
    """Queue one artifact as ``pending``; returns ``(item, created)``.

    A known ``idempotency_key`` writes nothing and returns the stored item, whatever its status
    (a completed or dead-lettered key is not resurrected; see :func:`requeue_dead_letter`).
    """
    payload_json = check_artifact(source, project_id, session_id, transcript_path, file_offset, payload,
                                  idempotency_key)  # fmt: skip
    stamp = _now(now)
    with atomic(conn):
        cur = conn.execute(
            "INSERT INTO ingest_events(source, project_id, session_id, transcript_path, file_inode, file_offset, "
            "payload_json, status, retry_count, idempotency_key, created_at, updated_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, 'pending', 0, ?, ?, ?) ON CONFLICT(idempotency_key) DO NOTHING",
            (
                source,
                project_id,
                session_id,
                transcript_path,
                file_inode,
                file_offset,
                payload_json,
                idempotency_key,
                stamp,
                stamp,
            ),
        )
        created = cur.rowcount == 1
        item = get_by_key(conn, idempotency_key)
    assert item is not None
    return item, created


def claim(
    conn: Connection,
    worker_id: str,
    *,
    limit: int = 10,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    now: str | None = None,
) -> list[QueueItem]:
    """Lease up to ``limit`` due items (``pending``/``failed`` whose ``next_attempt_at`` has come), oldest first.

    Selection and update happen in one write transaction, so concurrent claimers get disjoint sets.
    """
    _require_text("worker_id", worker_id)
    _require_positive("lease_seconds", lease_seconds)
    if limit <= 0:
        return []
    stamp = _now(now)
    lease = _plus(stamp, lease_seconds)
    with atomic(conn):
        ids = [
            r[0]
            for r in conn.execute(
                "SELECT ingest_id FROM ingest_events WHERE status IN ('pending', 'failed') "
                "AND (next_attempt_at IS NULL OR next_attempt_at <= ?) ORDER BY ingest_id LIMIT ?",
                (stamp, limit),
            )
        ]
        if not ids:
            return []
        marks = ", ".join("?" * len(ids))
        conn.execute(
            f"UPDATE ingest_events SET status = 'processing', claimed_by = ?, claimed_at = ?, lease_expires_at = ?, "
            f"updated_at = ? WHERE ingest_id IN ({marks})",
            (worker_id, stamp, lease, stamp, *ids),
        )
        rows = conn.execute(
            f"SELECT {_COLUMNS} FROM ingest_events WHERE ingest_id IN ({marks}) ORDER BY ingest_id", ids
        ).fetchall()
    return [_item(r) for r in rows]


def heartbeat(
    conn: Connection,
    ingest_id: int,
    worker_id: str,
    *,
    lease_seconds: float = DEFAULT_LEASE_SECONDS,
    now: str | None = None,
) -> bool:
    """Extend the lease to ``now + lease_seconds``; False when ``worker_id`` no longer holds it."""
    _require_positive("lease_seconds", lease_seconds)
    stamp = _now(now)
    with atomic(conn):
        cur = conn.execute(
            "UPDATE ingest_events SET lease_expires_at = ?, updated_at = ? "
            "WHERE ingest_id = ? AND status = 'processing' AND claimed_by = ? AND lease_expires_at >= ?",
            (_plus(stamp, lease_seconds), stamp, ingest_id, worker_id, stamp),
        )
    return cur.rowcount == 1


def complete(conn: Connection, ingest_id: int, worker_id: str, now: str | None = None) -> bool:
    """Mark a held item ``completed`` and clear its claim; False (nothing written) if the lease was lost."""
    stamp = _now(now)
    with atomic(conn):
        cur = conn.execute(
            f"UPDATE ingest_events SET status = 'completed', {_CLEAR_CLAIM}, next_attempt_at = NULL, updated_at = ? "
            "WHERE ingest_id = ? AND status = 'processing' AND claimed_by = ? AND lease_expires_at >= ?",
            (stamp, ingest_id, worker_id, stamp),
        )
    return cur.rowcount == 1


def _retry(
    conn: Connection,
    ingest_id: int,
    retry_count: int,
    error: str,
    stamp: str,
    *,
    retry_status: str,
    max_attempts: int,
    backoff_base_seconds: float,
) -> str:
    """Count one more attempt: dead-letter after ``max_attempts``, else schedule the next try."""
    attempts = retry_count + 1
    error = error[:MAX_ERROR_CHARS]
    if attempts >= max_attempts:
        status, next_at = "dead_letter", None
    else:
        status, next_at = retry_status, _plus(stamp, backoff_seconds(attempts, backoff_base_seconds))
    conn.execute(
        f"UPDATE ingest_events SET status = ?, retry_count = ?, last_error = ?, next_attempt_at = ?, {_CLEAR_CLAIM}, "
        "updated_at = ? WHERE ingest_id = ?",
        (status, attempts, error, next_at, stamp, ingest_id),
    )
    return status


def fail(
    conn: Connection,
    ingest_id: int,
    worker_id: str,
    error: str,
    *,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    backoff_base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS,
    now: str | None = None,
) -> str:
    """Record a failed attempt by the claimer; returns the new status (``failed`` or ``dead_letter``).

    ``retry_count`` goes up by one; at ``max_attempts`` the item is dead-lettered, otherwise it is
    retried after :func:`backoff_seconds`. When ``worker_id`` does not hold the item (not
    ``processing``, or claimed by another worker) nothing is written and the current status is
    returned; an unknown ``ingest_id`` raises :class:`LookupError`.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
    stamp = _now(now)
    with atomic(conn):
        row = conn.execute(
            "SELECT status, claimed_by, retry_count FROM ingest_events WHERE ingest_id = ?", (ingest_id,)
        ).fetchone()
        if row is None:
            raise LookupError(f"no ingest event with ingest_id {ingest_id}")
        if row["status"] != "processing" or row["claimed_by"] != worker_id:
            return row["status"]
        return _retry(
            conn,
            ingest_id,
            row["retry_count"],
            str(error),
            stamp,
            retry_status="failed",
            max_attempts=max_attempts,
            backoff_base_seconds=backoff_base_seconds,
        )


def sweep_expired(
    conn: Connection,
    *,
    backoff_base_seconds: float = DEFAULT_BACKOFF_BASE_SECONDS,
    max_attempts: int = DEFAULT_MAX_ATTEMPTS,
    now: str | None = None,
) -> int:
    """The spec's recovery protocol; returns how many stale leases were recovered.

    Each ``processing`` row with ``lease_expires_at < now`` goes back to ``pending`` with
    ``retry_count + 1``, ``last_error = 'lease_expired'`` and ``next_attempt_at`` by the standard
    backoff, or to ``dead_letter`` when that was its last attempt.
    """
    if max_attempts < 1:
        raise ValueError(f"max_attempts must be >= 1, got {max_attempts!r}")
    stamp = _now(now)
    with atomic(conn):
        rows = conn.execute(
            "SELECT ingest_id, retry_count FROM ingest_events WHERE status = 'processing' "
            "AND (lease_expires_at IS NULL OR lease_expires_at < ?) ORDER BY ingest_id",
            (stamp,),
        ).fetchall()
        for row in rows:
            _retry(
                conn,
                row["ingest_id"],
                row["retry_count"],
                LEASE_EXPIRED,
                stamp,
                retry_status="pending",
                max_attempts=max_attempts,
                backoff_base_seconds=backoff_base_seconds,
            )
    return len(rows)


def counts(conn: Connection) -> dict[str, int]:
    """Items per status (every status present, zero when empty)."""
    result = dict.fromkeys(STATUSES, 0)
    for status, n in conn.execute("SELECT status, count(*) FROM ingest_events GROUP BY status"):
        result[status] = n
    return result


def incomplete_paths(conn: Connection, date: str) -> set[str]:
    """Files with queue items for ``date`` that are not completed (pending, failed or dead-lettered)."""
    rows = conn.execute(
        "SELECT DISTINCT transcript_path FROM ingest_events "
        "WHERE json_extract(payload_json, '$.date') = ? AND status != 'completed'",
        (date,),
    ).fetchall()
    return {r[0] for r in rows}


def items(conn: Connection, status: str | None = None, limit: int = 100) -> list[QueueItem]:
    """Items in ``ingest_id`` order, optionally of one status."""
    if status is not None and status not in STATUSES:
        raise ValueError(f"status {status!r} is not one of {STATUSES}")
    where, params = ("WHERE status = ?", [status]) if status is not None else ("", [])
    rows = conn.execute(
        f"SELECT {_COLUMNS} FROM ingest_events {where} ORDER BY ingest_id LIMIT ?", (*params, limit)
    ).fetchall()
    return [_item(r) for r in rows]


def requeue_dead_letter(conn: Connection, ingest_id: int | None = None, now: str | None = None) -> int:
    """Operator action: put dead letters (all, or one) back to ``pending`` with ``retry_count`` 0.

    ``last_error`` is kept so the operator can still see why it died. Returns how many moved.
    """
    stamp = _now(now)
    sql = (
        f"UPDATE ingest_events SET status = 'pending', retry_count = 0, next_attempt_at = NULL, {_CLEAR_CLAIM}, "
        "updated_at = ? WHERE status = 'dead_letter'"
    )
    params: tuple[Any, ...] = (stamp,)
    if ingest_id is not None:
        sql += " AND ingest_id = ?"
        params += (ingest_id,)
    with atomic(conn):
        cur = conn.execute(sql, params)
    return cur.rowcount


# --- processed_extractions: which learnings of a session were already turned into events -------------------------


def mark_processed(
    conn: Connection,
    project_id: str,
    session_id: str,
    learning_index: int,
    event_id: int,
    extractor_version: str,
    now: str | None = None,
) -> None:
    """Record (or move forward) the latest event and extractor version for one extracted learning."""
    _require_text("extractor_version", extractor_version)
    stamp = _now(now)
    with atomic(conn):
        conn.execute(
            "INSERT INTO processed_extractions(project_id, session_id, learning_index, latest_event_id, "
            "latest_extractor_version, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(project_id, session_id, learning_index) DO UPDATE SET "
            "latest_event_id = excluded.latest_event_id, latest_extractor_version = excluded.latest_extractor_version, "
            "updated_at = excluded.updated_at",
            (project_id, session_id, learning_index, event_id, extractor_version, stamp),
        )


def processed_version(conn: Connection, project_id: str, session_id: str, learning_index: int) -> str | None:
    """The extractor version that last processed this learning, or None if never."""
    row = conn.execute(
        "SELECT latest_extractor_version FROM processed_extractions "
        "WHERE project_id = ? AND session_id = ? AND learning_index = ?",
        (project_id, session_id, learning_index),
    ).fetchone()
    return None if row is None else row[0]


def is_processed(conn: Connection, project_id: str, session_id: str, learning_index: int) -> bool:
    return processed_version(conn, project_id, session_id, learning_index) is not None


def days_awaiting_retry(conn: Connection) -> set[str]:
    """Partition days with queue items still to process (pending, failed and due again, or leased)."""
    rows = conn.execute(
        "SELECT DISTINCT json_extract(payload_json, '$.date') FROM ingest_events "
        "WHERE status IN ('pending', 'failed', 'processing')"
    ).fetchall()
    return {r[0] for r in rows if r[0]}


class SqliteIngestQueueStore:
    """``ingest_events`` (this module's functions, defaults and transactions, over one connection)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def enqueue(self, **artifact: Any) -> tuple[QueueItem, bool]:
        return enqueue(self.conn, **artifact)

    def get(self, ingest_id: int) -> QueueItem | None:
        return get(self.conn, ingest_id)

    def counts(self) -> dict[str, int]:
        return counts(self.conn)

"""The event log on PostgreSQL: the same validation (:func:`nous_assets.store.log.events.prepare`), idempotency
and all-or-nothing batches as SQLite, for one tenant.

Appends of one tenant are serialised by a transaction-scoped advisory lock: the existence checks cannot race
a concurrent writer, and a tenant's ``event_id`` order is its commit order, so a projector that has read up
to id N can never later see a committed event of that tenant below N.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import psycopg

from nous_assets.errors import InvalidEventError
from nous_assets.store.log.events import (
    AppendResult,
    LearningEvent,
    StoredEvent,
    _fail,
    append_results,
    plan_batch,
    prepare,
    replay_pages,
    row_to_event,
    tuple_to_event,
)

_COLUMNS = (
    "event_uuid", "learning_id", "event_type", "idempotency_key", "schema_version", "transaction_time",
    "valid_from", "valid_until", "vector_clock_json", "payload_json", "parent_event_id", "session_id",
    "project_id", "source",
)  # fmt: skip
SELECT_EVENT = "event_id, " + ", ".join(_COLUMNS)
_INSERT = (
    f"INSERT INTO learning_events(tenant_id, {', '.join(_COLUMNS)}) "
    f"VALUES ({', '.join(['%s'] * (len(_COLUMNS) + 1))}) RETURNING event_id"
)


def tenant_lock(conn: psycopg.Connection, namespace: str, tenant_id: str) -> None:
    """Hold ``namespace``'s advisory lock for ``tenant_id`` until the current transaction ends."""
    conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", (f"{namespace}:{tenant_id}",))


class PgEventStore:
    """``learning_events`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def append(self, event: LearningEvent) -> AppendResult:
        return self.append_many([event])[0]

    def append_many(self, events: Iterable[LearningEvent]) -> list[AppendResult]:
        events = list(events)
        rows = [prepare(e) for e in events]
        if not rows:
            return []
        with self.conn.transaction():
            tenant_lock(self.conn, "events", self.tenant_id)
            existing = self._by_keys([r["idempotency_key"] for r in rows])
            known = self._extracted({r["learning_id"] for r in rows if r["event_type"] != "LearningExtracted"})
            parents = self._ids({r["parent_event_id"] for r in rows if r["parent_event_id"] is not None})
            outcome, fresh = plan_batch(events, rows, existing, known, parents)
            built = self._insert(events, rows, fresh)
        return append_results(outcome, built)

    def _insert(
        self, events: list[LearningEvent], rows: list[dict[str, Any]], fresh: dict[str, dict[str, Any]]
    ) -> dict[str, StoredEvent]:
        built: dict[str, StoredEvent] = {}
        if not fresh:
            return built
        uuids = self._uuids([r["event_uuid"] for r in fresh.values()])
        if uuids:
            bad = next(e for e, r in zip(events, rows, strict=True) if r["event_uuid"] in uuids)
            raise _fail(bad, f"event_uuid {sorted(uuids)[0]} is already used by another event")
        cur = self.conn.cursor()
        try:
            cur.executemany(
                _INSERT, [(self.tenant_id, *(r[c] for c in _COLUMNS)) for r in fresh.values()], returning=True
            )
        except psycopg.errors.IntegrityError as exc:
            raise InvalidEventError(f"rejected by the database: {str(exc).splitlines()[0]}") from None
        for key, row in fresh.items():
            event_id = cur.fetchone()[0]
            built[key] = row_to_event({**row, "event_id": event_id})
            cur.nextset()
        return built

    def _by_keys(self, keys: list[str]) -> dict[str, StoredEvent]:
        rows = self.conn.execute(
            f"SELECT {SELECT_EVENT} FROM learning_events WHERE tenant_id = %s AND idempotency_key = ANY(%s)",
            (self.tenant_id, sorted(set(keys))),
        ).fetchall()
        return {e.idempotency_key: e for e in map(tuple_to_event, rows)}

    def _extracted(self, learning_ids: set[str]) -> set[str]:
        if not learning_ids:
            return set()
        rows = self.conn.execute(
            "SELECT DISTINCT learning_id FROM learning_events WHERE tenant_id = %s "
            "AND event_type = 'LearningExtracted' AND learning_id = ANY(%s)",
            (self.tenant_id, sorted(learning_ids)),
        ).fetchall()
        return {r[0] for r in rows}

    def _ids(self, event_ids: set[int]) -> set[int]:
        if not event_ids:
            return set()
        rows = self.conn.execute(
            "SELECT event_id FROM learning_events WHERE tenant_id = %s AND event_id = ANY(%s)",
            (self.tenant_id, sorted(event_ids)),
        ).fetchall()
        return {r[0] for r in rows}

    def _uuids(self, uuids: list[str]) -> set[str]:
        rows = self.conn.execute(
            "SELECT event_uuid FROM learning_events WHERE tenant_id = %s AND event_uuid = ANY(%s)",
            (self.tenant_id, uuids),
        ).fetchall()
        return {r[0] for r in rows}

    def get(self, event_id: int) -> StoredEvent | None:
        row = self.conn.execute(
            f"SELECT {SELECT_EVENT} FROM learning_events WHERE tenant_id = %s AND event_id = %s",
            (self.tenant_id, event_id),
        ).fetchone()
        return None if row is None else tuple_to_event(row)

    def get_by_key(self, idempotency_key: str) -> StoredEvent | None:
        return self._by_keys([idempotency_key]).get(idempotency_key)

    def page(self, after: int, upper: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events with ``after < event_id <= upper``, in order."""
        rows = self.conn.execute(
            f"SELECT {SELECT_EVENT} FROM learning_events WHERE tenant_id = %s AND event_id > %s AND event_id <= %s "
            "ORDER BY event_id LIMIT %s",
            (self.tenant_id, after, upper, limit),
        ).fetchall()
        return [tuple_to_event(r) for r in rows]

    def replay(self, from_id: int = 0, *, batch_size: int = 5000, to_id: int | None = None) -> Iterator[StoredEvent]:
        upper = to_id if to_id is not None else self.last_event_id()
        for batch in replay_pages(self.page, from_id, upper, batch_size):
            yield from batch

    def last_event_id(self) -> int:
        row = self.conn.execute(
            "SELECT coalesce(max(event_id), 0) FROM learning_events WHERE tenant_id = %s", (self.tenant_id,)
        ).fetchone()
        return int(row[0])

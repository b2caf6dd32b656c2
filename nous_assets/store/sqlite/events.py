"""The SQLite ``EventStore`` provider: the ``learning_events`` table of one ``cortex.db`` (one tenant).

An invalid event raises :class:`InvalidEventError` naming what is wrong and nothing is written; a repeated
``idempotency_key`` returns the stored event and writes nothing, which turns at-least-once delivery into
effectively-once mutation. Validation and the batch plan are shared with PostgreSQL
(:mod:`nous_assets.store.log.events`).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from nous_assets.errors import InvalidEventError
from nous_assets.store.db import Connection, IntegrityError, atomic
from nous_assets.store.log.events import (
    AppendResult,
    LearningEvent,
    StoredEvent,
    _fail,
    append_results,
    archived_stub,
    plan_batch,
    prepare,
    replay_pages,
    row_to_event,
    tuple_to_event,
)

_COLUMNS = (
    "event_uuid",
    "learning_id",
    "event_type",
    "idempotency_key",
    "schema_version",
    "transaction_time",
    "valid_from",
    "valid_until",
    "vector_clock_json",
    "payload_json",
    "parent_event_id",
    "session_id",
    "project_id",
    "source",
)
_INSERT_SQL = f"INSERT INTO learning_events({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"


class SqliteEventStore:
    """The spec's ``EventStore`` provider over SQLite: ``append``, ``replay(from_id)``, ``get``."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def append(self, event: LearningEvent) -> AppendResult:
        return self.append_many([event])[0]

    def append_many(self, events: Sequence[LearningEvent] | Iterable[LearningEvent]) -> list[AppendResult]:
        """Validate all, then write all in one transaction: either every new event lands or none.

        Lookups (existing keys, known learnings, parents) are batched, and the write lock is taken
        before them, so the checks cannot race a concurrent writer.
        """
        events = list(events)
        rows = [prepare(e) for e in events]
        if not rows:
            return []
        with atomic(self.conn):
            existing = self._existing_by_key([r["idempotency_key"] for r in rows])
            needed = {r["learning_id"] for r in rows if r["event_type"] != "LearningExtracted"}
            known = self._extracted_learnings(needed)
            parents = self._existing_ids({r["parent_event_id"] for r in rows if r["parent_event_id"] is not None})
            outcome, fresh = plan_batch(events, rows, existing, known, parents)
            if fresh:
                first_new = self.last_event_id()
                try:
                    self.conn.executemany(_INSERT_SQL, [tuple(r[c] for c in _COLUMNS) for r in fresh.values()])
                except IntegrityError as exc:
                    uuids = [r["event_uuid"] for r in fresh.values()]
                    taken = self._existing_uuids(uuids)
                    if taken:
                        bad = next(e for e, r in zip(events, rows, strict=True) if r["event_uuid"] in taken)
                        raise _fail(bad, f"event_uuid {sorted(taken)[0]} is already used by another event") from None
                    raise InvalidEventError(f"rejected by the database: {exc}") from None
                ids = dict(
                    self.conn.execute(
                        "SELECT idempotency_key, event_id FROM learning_events WHERE event_id > ?", (first_new,)
                    ).fetchall()
                )
        built = {key: row_to_event({**row, "event_id": ids[key]}) for key, row in fresh.items()}
        return append_results(outcome, built)

    def _lookup(self, sql: str, values: Iterable[Any]) -> list[Any]:
        values = list(values)
        found: list[Any] = []
        for i in range(0, len(values), 900):
            chunk = values[i : i + 900]
            found.extend(self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk).fetchall())
        return found

    def _existing_by_key(self, keys: list[str]) -> dict[str, StoredEvent]:
        rows = self._lookup("SELECT * FROM learning_events WHERE idempotency_key IN ({marks})", set(keys))
        found = {r["idempotency_key"]: row_to_event(r) for r in rows}
        cold = self._lookup(
            "SELECT event_id, idempotency_key, learning_id, event_type FROM archived_events "
            "WHERE idempotency_key IN ({marks})",
            set(keys) - set(found),
        )
        found.update((r[1], archived_stub(*r)) for r in cold)
        return found

    def _extracted_learnings(self, learning_ids: set[str]) -> set[str]:
        """Learnings with a ``LearningExtracted`` in the live log or in a cold archive segment."""
        sql = (
            "SELECT DISTINCT learning_id FROM learning_events "
            "WHERE event_type = 'LearningExtracted' AND learning_id IN ({marks}) UNION "
            "SELECT learning_id FROM archived_events "
            "WHERE event_type = 'LearningExtracted' AND learning_id IN ({marks})"
        )
        return {r[0] for r in self._lookup_twice(sql, learning_ids)}

    def _existing_ids(self, event_ids: set[int]) -> set[int]:
        sql = (
            "SELECT event_id FROM learning_events WHERE event_id IN ({marks}) "
            "UNION SELECT event_id FROM archived_events WHERE event_id IN ({marks})"
        )
        return {r[0] for r in self._lookup_twice(sql, event_ids)}

    def _lookup_twice(self, sql: str, values: Iterable[Any]) -> list[Any]:
        """``_lookup`` for a query whose ``{marks}`` list appears twice (live log and archive index)."""
        values = list(values)
        found: list[Any] = []
        for i in range(0, len(values), 450):
            chunk = values[i : i + 450]
            found.extend(self.conn.execute(sql.format(marks=",".join("?" * len(chunk))), chunk + chunk).fetchall())
        return found

    def _existing_uuids(self, uuids: list[str]) -> set[str]:
        return {
            r[0] for r in self._lookup("SELECT event_uuid FROM learning_events WHERE event_uuid IN ({marks})", uuids)
        }

    def get(self, event_id: int) -> StoredEvent | None:
        row = self.conn.execute("SELECT * FROM learning_events WHERE event_id = ?", (event_id,)).fetchone()
        return row_to_event(row) if row else None

    def get_by_key(self, idempotency_key: str) -> StoredEvent | None:
        row = self.conn.execute(
            "SELECT * FROM learning_events WHERE idempotency_key = ?", (idempotency_key,)
        ).fetchone()
        return row_to_event(row) if row else None

    def replay(self, from_id: int = 0, *, batch_size: int = 5000, to_id: int | None = None) -> Iterator[StoredEvent]:
        """Events with ``event_id > from_id`` (and ``<= to_id``) in ``event_id`` order, streamed in pages."""
        for batch in self.replay_batches(from_id, batch_size=batch_size, to_id=to_id):
            yield from batch

    def replay_batches(
        self, from_id: int = 0, *, batch_size: int = 5000, to_id: int | None = None
    ) -> Iterator[list[StoredEvent]]:
        upper = to_id if to_id is not None else self.last_event_id()
        return replay_pages(self.page, from_id, upper, batch_size)

    def page(self, after: int, upper: int, limit: int) -> list[StoredEvent]:
        """Up to ``limit`` events with ``after < event_id <= upper``, in order."""
        cursor = self.conn.cursor()
        cursor.row_factory = None  # plain tuples: half the cost of sqlite3.Row on a million events
        rows = cursor.execute(
            "SELECT * FROM learning_events WHERE event_id > ? AND event_id <= ? ORDER BY event_id LIMIT ?",
            (after, upper, limit),
        ).fetchall()
        return [tuple_to_event(r) for r in rows]

    def last_event_id(self) -> int:
        return int(self.conn.execute("SELECT coalesce(max(event_id), 0) FROM learning_events").fetchone()[0])

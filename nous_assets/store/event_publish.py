"""Copy one event log into another through the :class:`~nous_assets.store.protocols.EventStore` protocol.

Team mode extracts a developer's learnings into a staging ``cortex.db`` (the pipeline as it runs on a laptop)
and publishes them to that developer's tenant of the shared PostgreSQL log. Publishing keeps every event's
identity (``idempotency_key``, ``event_uuid``, transaction and validity times, vector clock), so it is
effectively-once: a batch is one all-or-nothing ``append_many``, and re-sending what the target already holds
writes nothing. No extra bookkeeping is needed to resume: the target's newest event, looked up in the source
by its key, says where the last publish stopped (a crash between two batches resumes after the first).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass

from nous_assets.errors import InvalidEventError
from nous_assets.store.events import LearningEvent, StoredEvent
from nous_assets.store.protocols import EventStore

PUBLISH_BATCH = 1000


@dataclass(frozen=True)
class PublishStats:
    """What one publish did: events written, events the target already held, where it resumed."""

    published: int
    already_present: int
    resumed_after: int
    target_last_event_id: int


def resume_point(source: EventStore, target: EventStore) -> int:
    """The source ``event_id`` up to which the target already holds everything (0: start from the beginning).

    Events are published in source order, each batch atomically, so the target's newest event marks the
    point. If that event did not come from this source (another client wrote to the tenant since), the
    whole source is re-sent: idempotency keys make that safe, only slower.
    """
    last = target.last_event_id()
    if not last:
        return 0
    newest = target.get(last)
    mirrored = source.get_by_key(newest.idempotency_key) if newest is not None else None
    return mirrored.event_id if mirrored is not None else 0


def as_new_event(event: StoredEvent, parent_event_id: int | None) -> LearningEvent:
    """``event`` as a producer would hand it to another store, identity and times kept."""
    return LearningEvent(
        event_type=event.event_type,
        learning_id=event.learning_id,
        payload=event.payload,
        session_id=event.session_id,
        project_id=event.project_id,
        source=event.source,
        idempotency_key=event.idempotency_key,
        schema_version=event.schema_version,
        valid_from=event.valid_from,
        valid_until=event.valid_until,
        vector_clock=event.vector_clock_json,
        parent_event_id=parent_event_id,
        transaction_time=event.transaction_time,
        event_uuid=event.event_uuid,
    )


def _target_parent(source: EventStore, target: EventStore, event: StoredEvent) -> int | None:
    """The target's id of ``event``'s parent (ids differ between stores; keys do not)."""
    if event.parent_event_id is None:
        return None
    parent = source.get(event.parent_event_id)
    mirrored = target.get_by_key(parent.idempotency_key) if parent is not None else None
    if mirrored is None:
        raise InvalidEventError(
            f"event {event.idempotency_key!r} names parent event {event.parent_event_id}, which the target lacks"
        )
    return mirrored.event_id


def _batches(events: Iterator[StoredEvent], size: int) -> Iterator[list[StoredEvent]]:
    """Batches of ``size``; an event with a parent starts a new one, so its parent is committed before it."""
    batch: list[StoredEvent] = []
    for event in events:
        if event.parent_event_id is not None and batch:
            yield batch
            batch = []
        batch.append(event)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def publish_events(
    source: EventStore,
    target: EventStore,
    *,
    batch_size: int = PUBLISH_BATCH,
    progress: Callable[[int, int], None] | None = None,
) -> PublishStats:
    """Append every source event the target lacks, in source order; ``progress(published, already)``."""
    start = resume_point(source, target)
    published = already = 0
    for batch in _batches(source.replay(start, batch_size=batch_size), batch_size):
        results = target.append_many(as_new_event(e, _target_parent(source, target, e)) for e in batch)
        created = sum(1 for r in results if r.created)
        published, already = published + created, already + len(results) - created
        if progress is not None:
            progress(published, already)
    return PublishStats(published, already, start, target.last_event_id())

"""Copy one event log into another through the :class:`~nous_assets.store.protocols.EventStore` protocol.

Team mode extracts a developer's learnings into a staging ``cortex.db`` (the pipeline as it runs on a laptop)
and publishes them to that developer's tenant of the shared PostgreSQL log. Publishing keeps every event's
identity (``idempotency_key``, ``event_uuid``, transaction and validity times, vector clock), so it is
effectively-once: a batch is one all-or-nothing ``append_many``, and re-sending what the target already holds
writes nothing. No extra bookkeeping is needed to resume: the target's newest event, looked up in the source
by its key, says where the last publish stopped (a crash between two batches resumes after the first).

Only ids differ between two stores: a parent event id, and an edge that names its target memory by id (a
memory's id is the id of the event that extracted it), are translated to the target's ids through the keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

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


def as_new_event(
    event: StoredEvent, parent_event_id: int | None, payload: Mapping[str, Any] | None = None
) -> LearningEvent:
    """``event`` as a producer would hand it to another store, identity and times kept."""
    return LearningEvent(
        event_type=event.event_type,
        learning_id=event.learning_id,
        payload=event.payload if payload is None else payload,
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


def _mirrored_id(source: EventStore, target: EventStore, event_id: int) -> int | None:
    """The target's id of the source's event ``event_id`` (ids differ between stores; keys do not)."""
    found = source.get(event_id)
    mirrored = target.get_by_key(found.idempotency_key) if found is not None else None
    return mirrored.event_id if mirrored is not None else None


def _has_id_edges(event: StoredEvent) -> bool:
    """Does one of the event's edges name its target memory by id?"""
    if event.event_type != "LearningExtracted":
        return False
    return any(type(e.get("target_id", e.get("target"))) is int for e in event.payload.get("edges") or [])


def _translated(source: EventStore, target: EventStore, event: StoredEvent) -> LearningEvent:
    """``event`` with its parent and memory-id edge targets in the target's ids."""
    parent = None
    if event.parent_event_id is not None:
        parent = _mirrored_id(source, target, event.parent_event_id)
        if parent is None:
            raise InvalidEventError(
                f"event {event.idempotency_key!r} names parent event {event.parent_event_id}, which the target lacks"
            )
    payload = None
    if _has_id_edges(event):
        edges = []
        for edge in event.payload["edges"]:
            ref = edge.get("target_id", edge.get("target"))
            if isinstance(ref, int):  # validation refused booleans
                found = source.get(ref)
                extracted = found is not None and found.event_type == "LearningExtracted"
                # memory 0 never exists: an edge that resolved to nothing in the source resolves to nothing here
                mirrored = _mirrored_id(source, target, ref) if extracted else None
                edge = {k: v for k, v in edge.items() if k != "target"} | {"target_id": mirrored or 0}
            edges.append(edge)
        payload = {**event.payload, "edges": edges}
    return as_new_event(event, parent, payload)


def _batches(events: Iterator[StoredEvent], size: int) -> Iterator[list[StoredEvent]]:
    """Batches of ``size``; an event that names other events by id starts a new one (they are committed then)."""
    batch: list[StoredEvent] = []
    for event in events:
        if (event.parent_event_id is not None or _has_id_edges(event)) and batch:
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
        results = target.append_many([_translated(source, target, e) for e in batch])
        created = sum(1 for r in results if r.created)
        published, already = published + created, already + len(results) - created
        if progress is not None:
            progress(published, already)
    return PublishStats(published, already, start, target.last_event_id())

"""Copy one event log into another through the :class:`~nous_assets.store.protocols.EventStore` protocol.

Team mode extracts a developer's learnings into a staging ``cortex.db`` (the pipeline as it runs on a laptop)
and publishes them to that developer's tenant of the shared PostgreSQL log. Publishing keeps every event's
identity (``idempotency_key``, ``event_uuid``, transaction and validity times, vector clock), so it is
effectively-once: a batch is one all-or-nothing ``append_many``, and re-sending what the target already holds
writes nothing. Where to resume is a checkpoint in the staging database (``nous_meta``), written after each
batch the target committed: a crash between the two re-sends one batch, never skips one. A checkpoint whose
event the target does not hold (a new server, a dropped tenant) is ignored and everything is re-sent.

Only ids differ between two stores: a parent event id, and an edge that names its target memory by id (a
memory's id is the id of the event that extracted it), are translated to the target's ids through the keys.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from nous_assets.errors import InvalidEventError
from nous_assets.store import meta
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent, StoredEvent
from nous_assets.store.protocols import EventStore

PUBLISH_BATCH = 1000


@dataclass(frozen=True)
class PublishStats:
    """What one publish did: events written, events the target already held, where it resumed."""

    published: int
    already_present: int
    resumed_after: int
    target_last_event_id: int


def _checkpoint_key(tenant_id: str) -> str:
    return f"published_through:{tenant_id}"


def published_through(conn: Connection, tenant_id: str) -> int:
    """The staging log's last event published to ``tenant_id`` (0: none yet)."""
    value = meta.get(conn, _checkpoint_key(tenant_id))
    return int(value) if value is not None else 0


def record_published(conn: Connection, tenant_id: str, event_id: int) -> None:
    """Remember that the target holds every staging event up to ``event_id`` (called after its commit)."""
    with atomic(conn):
        meta.put(conn, _checkpoint_key(tenant_id), str(event_id))


def valid_checkpoint(source: EventStore, target: EventStore, checkpoint: int) -> int:
    """``checkpoint`` if the target holds the source event it names, else 0 (re-send all: safe, slower)."""
    if checkpoint <= 0:
        return 0
    event = source.get(checkpoint)
    if event is None or target.get_by_key(event.idempotency_key) is None:
        return 0
    return checkpoint


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
    after: int = 0,
    batch_size: int = PUBLISH_BATCH,
    on_batch: Callable[[int], None] | None = None,
) -> PublishStats:
    """Append every source event after ``after`` to the target, in source order, a batch at a time.

    ``on_batch(last_source_event_id)`` runs after each batch the target committed (the caller's checkpoint).
    """
    published = already = 0
    for batch in _batches(source.replay(after, batch_size=batch_size), batch_size):
        results = target.append_many([_translated(source, target, e) for e in batch])
        created = sum(1 for r in results if r.created)
        published, already = published + created, already + len(results) - created
        if on_batch is not None:
            on_batch(batch[-1].event_id)
    return PublishStats(published, already, after, target.last_event_id())


def publish_staging(conn: Connection, target: EventStore, tenant_id: str) -> PublishStats:
    """The staging log in ``conn`` into ``target`` (``tenant_id``'s store) from its validated checkpoint."""
    from nous_assets.store.sqlite.events import SqliteEventStore

    source = SqliteEventStore(conn)
    after = valid_checkpoint(source, target, published_through(conn, tenant_id))
    return publish_events(source, target, after=after, on_batch=lambda last: record_published(conn, tenant_id, last))

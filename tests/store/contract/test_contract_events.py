"""EventStore contract: validation, idempotent appends, all-or-nothing batches, ordered replay."""

from __future__ import annotations

import pytest
from eventgen import extracted, lifecycle

from nous_assets.errors import InvalidEventError
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.protocols import EventStore


def test_providers_satisfy_the_protocol(backend):
    assert isinstance(backend.events, EventStore)


def test_a_repeated_idempotency_key_returns_the_stored_event_and_writes_nothing(backend):
    events = backend.events
    first = events.append(extracted("L1", key="k1"))
    last = events.last_event_id()
    again = events.append(extracted("L1", "other words", key="k1"))
    assert first.created and not again.created
    assert again.event == first.event
    assert events.last_event_id() == last
    assert events.get_by_key("k1") == first.event
    assert events.get(first.event.event_id) == first.event


def test_a_repeat_inside_one_batch_is_written_once(backend):
    results = backend.events.append_many([extracted("L1", key="k1"), extracted("L1", key="k1")])
    assert [r.created for r in results] == [True, False]
    assert results[0].event == results[1].event
    assert len(list(backend.events.replay(0))) == 1


@pytest.mark.parametrize(
    "bad, message",
    [
        (LearningEvent("LearningExploded", "L9", {}, "s", "p", "fs_watch", "kx"), "unknown event type"),
        (lifecycle("LearningReinforced", "nobody", {"reinforcement_delta": 0.1}, key="kx"), "unknown learning_id"),
        (lifecycle("LearningReinforced", "L1", {"reinforcement_delta": -1}, key="kx"), "positive"),
        (extracted("L9", key="kx", parent_event_id=10**12), "parent_event_id"),
        (extracted("L9", key="kx", source="carrier_pigeon"), "unknown source"),
    ],
)
def test_an_invalid_event_in_a_batch_rejects_the_whole_batch(backend, bad, message):
    backend.events.append(extracted("L1", key="k1"))
    before = list(backend.events.replay(0))
    with pytest.raises(InvalidEventError, match=message):
        backend.events.append_many([extracted("L2", key="k2"), bad])
    assert list(backend.events.replay(0)) == before
    assert backend.events.get_by_key("k2") is None


def test_an_event_uuid_cannot_be_reused_by_another_key(backend):
    uid = "00000000-0000-4000-8000-000000000001"
    backend.events.append(extracted("L1", key="k1", event_uuid=uid))
    with pytest.raises(InvalidEventError, match="already used"):
        backend.events.append(extracted("L2", key="k2", event_uuid=uid))


def test_replay_streams_in_event_id_order_within_bounds(backend):
    stored = [r.event for r in backend.events.append_many([extracted(f"L{i}", key=f"k{i}") for i in range(12)])]
    ids = [e.event_id for e in stored]
    assert ids == sorted(ids)
    assert list(backend.events.replay(0, batch_size=5)) == stored
    assert list(backend.events.replay(ids[3], to_id=ids[8], batch_size=2)) == stored[4:9]
    assert backend.events.last_event_id() == ids[-1]


def test_later_events_refer_to_earlier_ones_as_parents(backend):
    parent = backend.events.append(extracted("L1", key="k1")).event
    child = backend.events.append(
        lifecycle("LearningValidated", "L1", {}, key="k2", parent_event_id=parent.event_id)
    ).event
    assert child.parent_event_id == parent.event_id
    assert child.event_id > parent.event_id


def test_every_declared_source_is_stored_agent_included(backend):
    """Each backend's schema accepts every source the event contract declares (SQLite 021, PostgreSQL 007 added
    'agent' for the MCP remember tool)."""
    from nous_assets.store.log.events import SOURCES

    stored = [backend.events.append(extracted(f"L{i}", key=f"k{i}", source=s)).event for i, s in enumerate(SOURCES)]
    assert [e.source for e in stored] == list(SOURCES) and "agent" in SOURCES
    assert [e.source for e in backend.events.replay(0)] == list(SOURCES)

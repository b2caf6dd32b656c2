"""The event log: every invalid event class is rejected with a specific message and writes nothing."""

from __future__ import annotations

import pytest
from eventgen import extracted, lifecycle

from nous_assets.errors import InvalidEventError
from nous_assets.store.db import IntegrityError, table_counts
from nous_assets.store.log.events import LearningEvent


def _counts(conn):
    return table_counts(conn)


def test_append_assigns_ids_in_order_and_get_returns_event(store):
    a = store.append(extracted("L1", key="k1")).event
    b = store.append(extracted("L2", key="k2")).event
    assert (a.event_id, b.event_id) == (1, 2)
    assert store.get(2) == b
    assert store.get(99) is None
    assert [e.event_id for e in store.replay(0)] == [1, 2]
    assert [e.event_id for e in store.replay(1)] == [2]


def test_duplicate_idempotency_key_returns_existing_and_writes_nothing(store, conn):
    first = store.append(extracted("L1", key="same"))
    before = _counts(conn)
    again = store.append(extracted("L1-other", "different content", key="same"))
    assert first.created and not again.created
    assert again.event == first.event
    assert _counts(conn) == before


def test_duplicate_key_within_one_batch_is_written_once(store, conn):
    results = store.append_many([extracted("L1", key="dup"), extracted("L1", key="dup")])
    assert [r.created for r in results] == [True, False]
    assert results[0].event == results[1].event
    assert _counts(conn)["learning_events"] == 1


def test_open_validity_words_normalise_to_null_and_times_to_utc(store):
    ev = store.append(extracted("L1", valid_from="2026-03-01T10:00:00+02:00", valid_until="current")).event
    assert ev.valid_from == "2026-03-01T08:00:00.000000Z"
    assert ev.valid_until is None
    ev2 = store.append(extracted("L2", key="k2", valid_from="unknown")).event
    assert ev2.valid_from is None


INVALID = [
    (
        "unknown event type",
        LearningEvent("LearningInvented", "L1", {}, "s", "p", "user_review", "k"),
        "unknown event type 'LearningInvented'",
    ),
    ("unknown source", extracted("L9", source="carrier_pigeon"), "unknown source 'carrier_pigeon'"),
    ("schema too new", extracted("L9", schema_version=3), "unsupported schema_version 3"),
    ("schema not int", extracted("L9", schema_version="2"), "unsupported schema_version '2'"),
    (
        "missing content",
        LearningEvent(
            "LearningExtracted",
            "L9",
            {"extractor_version": "v", "concepts": [], "edges": []},
            "s",
            "p",
            "user_review",
            "k",
        ),
        "missing payload keys for LearningExtracted: ['content']",
    ),
    (
        "v2 without concepts",
        LearningEvent(
            "LearningExtracted",
            "L9",
            {"content": "c", "extractor_version": "v", "edges": []},
            "s",
            "p",
            "user_review",
            "k",
        ),
        "missing payload key for LearningExtracted schema>=2: concepts",
    ),
    (
        "v2 without edges",
        LearningEvent(
            "LearningExtracted",
            "L9",
            {"content": "c", "extractor_version": "v", "concepts": []},
            "s",
            "p",
            "user_review",
            "k",
        ),
        "missing payload key for LearningExtracted schema>=2: edges",
    ),
    ("empty content", extracted("L9", ""), "payload.content must be a non-empty string"),
    ("concepts not strings", extracted("L9", concepts=["ok", 3]), "payload.concepts must be a list"),
    ("bad rel_type", extracted("L9", edges=[{"target": "L1", "rel_type": "loves"}]), "rel_type 'loves'"),
    (
        "edge weight out of range",
        extracted("L9", edges=[{"target": "L1", "rel_type": "relates_to", "weight": 1.5}]),
        "weight must be a number in [0, 1]",
    ),
    ("edge without target", extracted("L9", edges=[{"rel_type": "relates_to"}]), "needs target_id"),
    ("bad memory type", extracted("L9", payload_extra={"type": "gossip"}), "payload.type 'gossip'"),
    (
        "bad temporal confidence",
        extracted("L9", payload_extra={"temporal_confidence": "sure"}),
        "payload.temporal_confidence 'sure'",
    ),
    (
        "reinforce missing delta",
        lifecycle("LearningReinforced", "L1", {}, key="k"),
        "missing payload keys for LearningReinforced: ['reinforcement_delta']",
    ),
    (
        "reinforce negative",
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": -0.1}, key="k"),
        "needs a positive reinforcement_delta",
    ),
    (
        "weaken positive",
        lifecycle("LearningWeakened", "L1", {"reinforcement_delta": 0.2}, key="k"),
        "needs a negative reinforcement_delta",
    ),
    (
        "delta not a number",
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": "lots"}, key="k"),
        "reinforcement_delta must be a finite number",
    ),
    (
        "contradiction missing keys",
        lifecycle("LearningContradicted", "L1", {"contradicted_with": "L2"}, key="k"),
        "missing payload keys for LearningContradicted: ['contradiction_multiplier']",
    ),
    (
        "contradiction multiplier",
        lifecycle("LearningContradicted", "L1", {"contradicted_with": "L2", "contradiction_multiplier": 1.7}, key="k"),
        "contradiction_multiplier must be in (0, 1]",
    ),
    (
        "self contradiction",
        lifecycle("LearningContradicted", "L1", {"contradicted_with": "L1", "contradiction_multiplier": 0.7}, key="k"),
        "cannot contradict itself",
    ),
    (
        "superseded missing key",
        lifecycle("LearningSuperseded", "L1", {}, key="k"),
        "missing payload keys for LearningSuperseded: ['superseded_by']",
    ),
    (
        "archived missing reason",
        lifecycle("LearningArchived", "L1", {}, key="k"),
        "missing payload keys for LearningArchived: ['reason']",
    ),
    ("unknown learning", lifecycle("LearningValidated", "nobody", {}, key="k"), "unknown learning_id 'nobody'"),
    ("unsorted clock", extracted("L9", vector_clock='{"b":1,"a":2}'), "not in canonical (sorted) order"),
    ("duplicate clock key", extracted("L9", vector_clock='{"a":1,"a":2}'), "duplicate keys"),
    ("non-positive clock", extracted("L9", vector_clock={"a": 0}), "must be a positive integer"),
    ("float clock", extracted("L9", vector_clock={"a": 1.5}), "must be a positive integer"),
    ("too many clock keys", extracted("L9", vector_clock={f"s{i:03d}": 1 for i in range(65)}), "at most 64"),
    ("validity inverted", extracted("L9", valid_from="2026-02-01", valid_until="2026-01-01"), "is before valid_from"),
    ("bad timestamp", extracted("L9", valid_from="last tuesday"), "not an ISO-8601 timestamp"),
    ("empty idempotency key", extracted("L9", key=" "), "idempotency_key must be a non-empty string"),
    ("empty session", extracted("L9", session=""), "session_id must be a non-empty string"),
    (
        "payload not object",
        LearningEvent("LearningValidated", "L1", ["x"], "s", "p", "user_review", "k"),
        "payload must be a JSON object",
    ),
    (
        "payload NaN",
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": float("nan")}, key="k"),
        "finite number",
    ),
    ("bad uuid", extracted("L9", event_uuid="not-a-uuid"), "is not a UUID"),
    (
        "missing parent",
        lifecycle("LearningValidated", "L1", {}, key="k", parent_event_id=404),
        "parent_event_id 404 does not exist",
    ),
]


@pytest.mark.parametrize(("case", "event", "message"), INVALID, ids=[c[0] for c in INVALID])
def test_invalid_event_is_rejected_with_specific_message_and_nothing_written(store, conn, case, event, message):
    store.append(extracted("L1", key="seed-1"))
    store.append(extracted("L2", key="seed-2"))
    before = _counts(conn)
    with pytest.raises(InvalidEventError) as info:
        store.append(event)
    assert message in str(info.value)
    assert _counts(conn) == before


def test_batch_with_one_invalid_event_writes_none(store, conn):
    before = _counts(conn)
    with pytest.raises(InvalidEventError, match="unknown learning_id 'ghost'"):
        store.append_many(
            [extracted("A", key="a"), extracted("B", key="b"), lifecycle("LearningValidated", "ghost", {}, key="c")]
        )
    assert _counts(conn) == before


def test_lifecycle_event_may_follow_its_extraction_in_the_same_batch(store):
    results = store.append_many([extracted("A", key="a"), lifecycle("LearningValidated", "A", {}, key="v")])
    assert all(r.created for r in results)


def test_reused_event_uuid_is_rejected(store, conn):
    uid = "6f1d3c1e-5b2a-4c1e-9d1e-0a1b2c3d4e5f"
    store.append(extracted("A", key="a", event_uuid=uid))
    before = _counts(conn)
    with pytest.raises(InvalidEventError, match="already used by another event"):
        store.append(extracted("B", key="b", event_uuid=uid))
    assert _counts(conn) == before


def test_events_are_never_updated_or_deleted(store, conn):
    store.append(extracted("A", key="a"))
    with pytest.raises(IntegrityError, match="append-only"):
        conn.execute("UPDATE learning_events SET payload_json = '{}'")
    with pytest.raises(IntegrityError, match="append-only"):
        conn.execute("DELETE FROM learning_events")
    assert conn.execute("SELECT count(*) FROM learning_events").fetchone()[0] == 1


def test_schema_v1_legacy_extraction_needs_no_concepts(store):
    ev = LearningEvent(
        "LearningExtracted",
        "legacy",
        {"content": "old note", "extractor_version": "legacy-v1"},
        "s",
        "legacy-migration",
        "historical_backfill",
        "legacy-1",
        schema_version=1,
    )
    assert store.append(ev).created

"""Publishing a staging log (SQLite, as team mode's extraction writes it) into a tenant of the backend under
test: every event lands once with its identity, re-publishing writes nothing, a publish resumes from the
staging checkpoint (never past an event the target lacks), and the target projects the stream to the same
memories as the source."""

from __future__ import annotations

import itertools
from pathlib import Path

from eventgen import extracted, lifecycle
from hypothesis import HealthCheck, given, settings
from test_contract_projection import _relative
from test_projection import event_sequences

from nous_assets.store.backend import sqlite_backend
from nous_assets.store.db import open_db
from nous_assets.store.log.event_publish import publish_events, publish_staging, published_through, record_published

_EXAMPLES = itertools.count()
_PROPERTY = settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def _staging(path: Path):
    return sqlite_backend(open_db(path, create=True), "staging")


def _identity(event) -> tuple:
    return (event.event_uuid, event.learning_id, event.event_type, event.idempotency_key, event.transaction_time,
            event.valid_from, event.valid_until, event.vector_clock_json, event.session_id, event.project_id,
            event.source)  # fmt: skip


@_PROPERTY
@given(events=event_sequences())
def test_published_log_holds_every_event_once_and_projects_alike(make_backend, tmp_path, events):
    n = next(_EXAMPLES)
    source = _staging(tmp_path / f"staging-{n}.db")
    try:
        source.events.append_many(events)
        target = make_backend(f"pub{n}")
        first = publish_events(source.events, target.events, batch_size=7)
        held = list(source.events.replay(0))
        assert first.published == len(held) and first.already_present == 0
        mirrored = list(target.events.replay(0))
        assert [_identity(e) for e in mirrored] == [_identity(e) for e in held]

        again = publish_events(source.events, target.events, batch_size=5)  # everything again: nothing written
        assert (again.published, again.already_present) == (0, len(held))
        assert target.events.last_event_id() == mirrored[-1].event_id

        source.projection.project()
        target.projection.project()
        assert _relative(target) == _relative(source)  # memory-id edges were re-pointed at the target's ids
    finally:
        source.close()


def _staging_conn(path: Path):
    conn = open_db(path, create=True)
    return conn, sqlite_backend(conn, "staging")


def test_publish_resumes_from_the_staging_checkpoint(make_backend, tmp_path):
    conn, source = _staging_conn(tmp_path / "staging.db")
    target = make_backend("resume")
    source.events.append_many([extracted(f"L{i}", f"fact number {i}", key=f"x{i}") for i in range(5)])
    assert publish_staging(conn, target.events, "resume").published == 5
    assert published_through(conn, "resume") == source.events.get_by_key("x4").event_id
    source.events.append_many([
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": 0.2}, key="r1"),
        extracted("L9", "a later fact", key="x9"),
    ])  # fmt: skip
    stats = publish_staging(conn, target.events, "resume")
    assert (stats.published, stats.already_present) == (2, 0)  # only what came after the checkpoint
    assert stats.resumed_after == source.events.get_by_key("x4").event_id
    assert target.events.get_by_key("r1").payload == {"reinforcement_delta": 0.2}
    source.close()


def test_a_batch_committed_before_a_crash_is_sent_again_without_duplicates(make_backend, tmp_path):
    conn, source = _staging_conn(tmp_path / "staging.db")
    target = make_backend("crash")
    source.events.append_many([extracted(f"L{i}", f"fact number {i}", key=f"x{i}") for i in range(4)])
    publish_events(source.events, target.events)  # the target committed, the checkpoint was never written
    stats = publish_staging(conn, target.events, "crash")
    assert (stats.resumed_after, stats.published, stats.already_present) == (0, 0, 4)
    assert len(list(target.events.replay(0))) == 4
    source.close()


def test_a_checkpoint_the_target_does_not_hold_is_ignored(make_backend, tmp_path):
    """A new server or a dropped tenant: the checkpoint would skip everything, so the publish starts over."""
    conn, source = _staging_conn(tmp_path / "staging.db")
    source.events.append_many([extracted("L1", "one", key="x1"), extracted("L2", "two", key="x2")])
    record_published(conn, "fresh", source.events.get_by_key("x2").event_id)
    target = make_backend("fresh")
    stats = publish_staging(conn, target.events, "fresh")
    assert (stats.resumed_after, stats.published) == (0, 2)
    source.close()


def test_events_another_client_wrote_do_not_move_the_checkpoint(make_backend, tmp_path):
    conn, source = _staging_conn(tmp_path / "staging.db")
    target = make_backend("mixed")
    source.events.append_many([extracted("L1", "one", key="x1"), extracted("L2", "two", key="x2")])
    publish_staging(conn, target.events, "mixed")
    source.events.append_many([extracted("L3", "three", key="x3"), extracted("L4", "four", key="x4")])
    target.events.append(extracted("L4", "four", key="x4"))  # the same event, pushed by another client first
    stats = publish_staging(conn, target.events, "mixed")
    assert stats.resumed_after == source.events.get_by_key("x2").event_id
    assert (stats.published, stats.already_present) == (1, 1)  # x3 is not skipped
    assert target.events.get_by_key("x3") is not None
    source.close()


def test_parent_ids_and_memory_id_edges_point_at_the_targets_rows(make_backend, tmp_path):
    conn, source = _staging_conn(tmp_path / "staging.db")
    target = make_backend("ids")
    target.events.append(extracted("P", "written by another client first: ids differ", key="p"))
    first = source.events.append(extracted("L1", "the parent learning", key="x1")).event
    source.events.append_many([
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": 0.1}, key="r1", parent_event_id=first.event_id),
        extracted("L2", "points at L1 by memory id", key="x2",
                  edges=[{"target_id": first.event_id, "rel_type": "relates_to", "weight": 0.5}]),
    ])  # fmt: skip
    publish_staging(conn, target.events, "ids")
    parent = target.events.get_by_key("x1").event_id
    assert target.events.get_by_key("r1").parent_event_id == parent
    assert target.events.get_by_key("x2").payload["edges"][0]["target_id"] == parent  # L1's memory there
    source.close()

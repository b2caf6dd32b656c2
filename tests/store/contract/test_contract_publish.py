"""Publishing a staging log (SQLite, as team mode's extraction writes it) into a tenant of the backend under
test: every event lands once with its identity, re-publishing writes nothing, a publish resumes where the last
one stopped, and the target projects the stream to the same memories as the source."""

from __future__ import annotations

import itertools
from pathlib import Path

from eventgen import extracted, lifecycle
from hypothesis import HealthCheck, given, settings
from test_contract_projection import _relative
from test_projection import event_sequences

from nous_assets.store.backend import sqlite_backend
from nous_assets.store.db import open_db
from nous_assets.store.event_publish import publish_events

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

        again = publish_events(source.events, target.events)  # nothing new: written once
        assert (again.published, again.resumed_after) == (0, held[-1].event_id)
        assert target.events.last_event_id() == mirrored[-1].event_id

        source.projection.project()
        target.projection.project()
        assert _relative(target) == _relative(source)  # memory-id edges were re-pointed at the target's ids
    finally:
        source.close()


def test_publish_resumes_after_the_last_published_event(make_backend, tmp_path):
    source = _staging(tmp_path / "staging.db")
    target = make_backend("resume")
    source.events.append_many([extracted(f"L{i}", f"fact number {i}", key=f"x{i}") for i in range(5)])
    assert publish_events(source.events, target.events).published == 5
    source.events.append_many([
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": 0.2}, key="r1"),
        extracted("L9", "a later fact", key="x9"),
    ])  # fmt: skip
    stats = publish_events(source.events, target.events)
    assert stats.published == 2 and stats.already_present == 0
    assert stats.resumed_after == source.events.get_by_key("x4").event_id
    assert target.events.get_by_key("r1").payload == {"reinforcement_delta": 0.2}


def test_an_event_another_client_wrote_makes_the_publish_start_over_without_duplicates(make_backend, tmp_path):
    source = _staging(tmp_path / "staging.db")
    target = make_backend("mixed")
    source.events.append_many([extracted("L1", "one", key="x1"), extracted("L2", "two", key="x2")])
    publish_events(source.events, target.events)
    target.events.append(extracted("P1", "pushed by another client", key="push-1"))
    source.events.append(extracted("L3", "three", key="x3"))
    stats = publish_events(source.events, target.events)
    assert stats.resumed_after == 0  # the newest target event is not from this source: re-send all
    assert (stats.published, stats.already_present) == (1, 2)
    assert len(list(target.events.replay(0))) == 4

"""ProjectionStore contract: replay equivalence (incremental projection in any batch split equals a full
rebuild from the log), idempotence, the lifecycle semantics, full-text search; and SQLite and PostgreSQL
project the same event stream to the same memories."""

from __future__ import annotations

import dataclasses
import itertools
import uuid

from eventgen import extracted, lifecycle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_projection import event_sequences

from nous_assets.store.projection.memory_state import project_in_memory
from nous_assets.store.protocols import ProjectionStore

_EXAMPLES = itertools.count()
_PROPERTY = settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


def test_providers_satisfy_the_protocol(backend):
    assert isinstance(backend.projection, ProjectionStore)


@_PROPERTY
@given(events=event_sequences(), data=st.data())
def test_incremental_projection_in_any_batch_split_equals_a_full_rebuild(make_backend, events, data):
    tenant = f"prop{next(_EXAMPLES)}"  # a fresh pair of stores for every example
    incremental, full = make_backend(f"{tenant}i"), make_backend(f"{tenant}f")
    cuts = sorted(data.draw(st.sets(st.integers(1, len(events)), max_size=4)) | {len(events)})
    start = 0
    for cut in cuts:
        incremental.events.append_many(events[start:cut])
        incremental.projection.project(batch_size=data.draw(st.integers(1, 7)))
        start = cut
    full.events.append_many(events)
    full.projection.rebuild()
    # memory ids are event ids, which differ between two tenants of one PostgreSQL: compare by offset
    assert _relative(incremental) == _relative(full)

    # the pure in-memory replay agrees with the stored projection
    replayed = project_in_memory(full.events.replay(0))
    assert [tuple(m.row()) for m in replayed.active()] == full.projection.snapshot()["memories"]

    # deterministic and idempotent
    before = full.projection.snapshot()
    full.projection.rebuild()
    full.projection.project()
    assert full.projection.snapshot() == before
    assert full.projection.checkpoint() == full.events.last_event_id()


def _relative(backend) -> dict:
    """The snapshot with every id shifted so the tenant's first event is 1 (ids are then comparable)."""
    first = next(backend.events.replay(0)).event_id
    shift = first - 1
    snap = backend.projection.snapshot()

    def mem(row: tuple) -> tuple:
        return (row[0] - shift, *row[1:21], row[21] - shift, *row[22:])

    return {
        "memories": [mem(r) for r in snap["memories"]],
        "concepts": [(m - shift, c) for m, c in snap["concepts"]],
        "edges": [(s - shift, t - shift, *rest) for s, t, *rest in snap["edges"]],
        "memories_fts": [(i - shift, *rest) for i, *rest in snap["memories_fts"]],
    }


@settings(max_examples=15, deadline=None)
@given(events=event_sequences())
def test_sqlite_and_postgres_project_the_same_stream_alike(events, tmp_path_factory, request):
    from nous_assets.store.backend import postgres_backend, sqlite_backend
    from nous_assets.store.db import open_db
    from nous_assets.store.pg.db import open_pg

    server = request.getfixturevalue("pg_server")  # skips with its reason where PostgreSQL cannot run
    # edges to raw memory ids name different rows in two stores; keep the learning-id edges
    events = [_without_id_edges(e) for e in events]
    lite = sqlite_backend(open_db(tmp_path_factory.mktemp("x") / "cortex.db", create=True))
    pg = postgres_backend(open_pg(server.dsn()), f"cross-{uuid.uuid4().hex}")
    try:
        for b in (lite, pg):
            b.events.append_many(events)
            b.projection.project(batch_size=5)
        assert _relative(lite) == _relative(pg)
    finally:
        lite.close()
        pg.close()


def _without_id_edges(event):
    edges = event.payload.get("edges")
    if not edges:
        return event
    kept = [e for e in edges if isinstance(e.get("target"), str)]
    return dataclasses.replace(event, payload={**event.payload, "edges": kept})


def test_lifecycle_events_change_the_memory_as_specified(backend):
    events = backend.events
    events.append_many([
        extracted("L1", "always run ruff before committing", key="x1", concepts=["Lint", "ruff"]),
        extracted("L2", "use uv for packaging", key="x2", edges=[{"target": "L1", "rel_type": "relates_to"}]),
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": 0.25}, key="r1"),
        lifecycle("LearningContradicted", "L1", {"contradicted_with": "L2", "contradiction_multiplier": 0.5},
                  key="c1"),
        lifecycle("LearningArchived", "L2", {"reason": "stale"}, key="a1"),
    ])  # fmt: skip
    stats = backend.projection.project()
    assert stats.events == 5
    l1 = events.get_by_key("x1").event_id
    mem = backend.projection.memory(l1)
    assert mem is not None and mem.learning_id == "L1"
    assert mem.concepts == {"lint", "ruff"}
    assert mem.contradiction_count == 1
    initial = project_in_memory([events.get_by_key("x1")]).memories["L1"].reinforcement_score
    assert abs(mem.reinforcement_score - (initial + 0.25) * 0.5) < 1e-9
    assert backend.projection.memory(events.get_by_key("x2").event_id) is None  # archived
    assert backend.projection.snapshot()["edges"] == []  # the archived memory's edges went with it


def test_full_text_search_finds_content_and_concepts(backend):
    backend.events.append_many([
        extracted("L1", "pin dependencies with a constraints file", key="x1", concepts=["pip"]),
        extracted("L2", "the hook must never block the session", key="x2", concepts=["latency"]),
        extracted("L3", "constraints apply to transitive dependencies too", key="x3", concepts=["pip"]),
    ])  # fmt: skip
    backend.projection.project()
    ids = {lid: backend.events.get_by_key(f"x{lid[1]}").event_id for lid in ("L1", "L2", "L3")}
    assert set(backend.projection.search_text("constraints", 10)) == {ids["L1"], ids["L3"]}
    assert backend.projection.search_text("latency", 10) == [ids["L2"]]  # a concept, not in the content
    assert backend.projection.search_text("zebra", 10) == []
    assert backend.projection.search_text("!!!", 10) == []
    assert len(backend.projection.search_text("constraints hook", 1)) == 1

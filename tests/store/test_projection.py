"""Projection semantics, and the property that incremental projection equals full replay."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from eventgen import extracted, lifecycle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.store.db import open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.log.temporal import query_memories
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, project_in_memory
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import get_checkpoint, project, rebuild, snapshot, verify


def _memory(conn, lid):
    row = conn.execute("SELECT * FROM memories WHERE learning_id = ?", (lid,)).fetchone()
    return dict(row) if row else None


def _concepts(conn, lid):
    return {
        r[0]
        for r in conn.execute(
            "SELECT c.concept FROM concepts c JOIN memories m ON m.id = c.memory_id WHERE m.learning_id = ?", (lid,)
        )
    }


def test_each_event_type_changes_the_projection_as_specified(store, conn):
    store.append(extracted("A", concepts=["React", "  Hooks "], valid_from="2026-01-01"))
    store.append(extracted("B", "use class components", key="xb", concepts=["react"]))
    project(conn)
    a = _memory(conn, "A")
    assert a["id"] == 1 and a["reinforcement_score"] == 0.5 and a["valid_until"] is None
    assert _concepts(conn, "A") == {"react", "hooks"}

    store.append(lifecycle("LearningValidated", "A", {}, key="v"))
    store.append(lifecycle("LearningReinforced", "A", {"reinforcement_delta": 0.1}, key="r"))
    store.append(lifecycle("LearningWeakened", "A", {"reinforcement_delta": -0.2, "concepts": ["State"]}, key="w"))
    store.append(
        lifecycle("LearningContradicted", "B", {"contradicted_with": "A", "contradiction_multiplier": 0.7}, key="c")
    )
    store.append(
        lifecycle("LearningSuperseded", "B", {"superseded_by": "A"}, key="s", transaction_time="2026-05-01T00:00:00Z")
    )
    project(conn)
    a, b = _memory(conn, "A"), _memory(conn, "B")
    assert a["validated_at"] is not None
    assert a["reinforcement_score"] == pytest.approx(0.5 + 0.1 - 0.2)
    assert _concepts(conn, "A") == {"react", "hooks", "state"}  # OR-set union across events
    assert b["reinforcement_score"] == pytest.approx(0.5 * 0.7 * 0.5)
    assert b["valid_until"] == "2026-05-01T00:00:00.000000Z" and b["superseded_by"] == "A"
    edges = {tuple(r) for r in conn.execute("SELECT source_id, target_id, rel_type FROM edges")}
    assert edges == {(2, 1, "contradicts"), (1, 2, "supersedes")}
    # superseded memories stay in the projection but drop out of "valid now"
    assert {m.learning_id for m in query_memories(conn)} == {"A", "B"}
    assert {m.learning_id for m in query_memories(conn, as_at="2026-06-01")} == {"A"}

    store.append(lifecycle("LearningArchived", "A", {"reason": "user deleted"}, key="ar"))
    project(conn)
    assert _memory(conn, "A") is None
    assert conn.execute("SELECT count(*) FROM edges").fetchone()[0] == 0
    assert conn.execute("SELECT count(*) FROM memories_fts WHERE rowid = 1").fetchone()[0] == 0
    assert verify(conn).ok


def test_a_relearning_adds_the_quotes_it_was_said_with(store, conn):
    said = 'User preference: keep working through all remaining tasks without stopping to ask ("push all the way")'
    store.append(extracted("A", said))
    for n, quote in enumerate(["tackle them", "push all the way", "continue until all are done", "go on", "more"]):
        again = f'User preference: keep working through all remaining tasks without stopping to ask ("{quote}")'
        payload = {"reinforcement_delta": 0.1, "reason": "relearned", "content": again}
        store.append(lifecycle("LearningReinforced", "A", payload, key=f"r{n}"))
    store.append(lifecycle("LearningReinforced", "A", {"reinforcement_delta": 0.1, "content": '"feedback"'}, key="f"))
    project(conn)
    content = _memory(conn, "A")["content"]
    assert content == said + ' (also "tackle them") (also "continue until all are done") (also "go on")'
    assert conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'tackle'").fetchall()
    assert verify(conn).ok  # a replay of the same events writes the same content


def test_fts_indexes_content_and_concepts(store, conn):
    store.append(extracted("A", "Run pytest with -x to stop at the first failure", concepts=["testing"]))
    project(conn)
    hits = conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'failure'").fetchall()
    assert [h[0] for h in hits] == [1]
    assert conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH 'concepts:testing'").fetchall()


def test_as_of_replays_knowledge_state_at_transaction_time(store, conn):
    store.append(extracted("A", transaction_time="2026-01-01T00:00:00Z", valid_from="2026-01-01"))
    store.append(extracted("B", key="b", transaction_time="2026-02-01T00:00:00Z", valid_from="2026-02-01"))
    store.append(
        lifecycle("LearningArchived", "A", {"reason": "wrong"}, key="ar", transaction_time="2026-03-01T00:00:00Z")
    )
    project(conn)
    ids = lambda ms: sorted(m.learning_id for m in ms)  # noqa: E731
    assert ids(query_memories(conn)) == ["B"]
    assert ids(query_memories(conn, as_of="2026-01-15")) == ["A"]
    assert ids(query_memories(conn, as_of="2026-02-15")) == ["A", "B"]
    # bitemporal: known by 2026-02-15, and valid at 2026-01-15
    assert ids(query_memories(conn, as_of="2026-02-15", as_at="2026-01-15")) == ["A"]


def test_projecting_when_caught_up_changes_nothing(store, conn):
    store.append(extracted("A"))
    project(conn)
    before = snapshot(conn)
    stats = project(conn)
    assert stats.events == 0 and snapshot(conn) == before and get_checkpoint(conn) == 1


# ---------------------------------------------------------------- property: incremental == replay
LIDS = [f"L{i}" for i in range(6)]
CONCEPTS = ["python", "sqlite", "react", "testing", "docker", "git"]
BASE = datetime(2026, 1, 1, tzinfo=UTC)


@st.composite
def event_sequences(draw):
    events: list[LearningEvent] = []
    extracted_lids: list[str] = []
    n = draw(st.integers(1, 40))
    for i in range(n):
        tx = (BASE + timedelta(hours=i)).isoformat()
        uid = f"00000000-0000-4000-8000-{i:012d}"
        common = {"transaction_time": tx, "event_uuid": uid, "session": draw(st.sampled_from(["s1", "s2"]))}
        op = (
            draw(
                st.sampled_from(
                    ["extract", "extract", "reinforce", "weaken", "validate", "contradict", "supersede", "archive"]
                )
            )
            if extracted_lids
            else "extract"
        )
        lid = draw(st.sampled_from(LIDS if op == "extract" else extracted_lids))
        other = draw(st.sampled_from([x for x in LIDS if x != lid]))
        key = f"k{i}"
        if op == "extract":
            edges = draw(
                st.lists(
                    st.fixed_dictionaries(
                        {
                            "target": st.one_of(st.sampled_from(LIDS), st.integers(1, 30)),
                            "rel_type": st.sampled_from(["relates_to", "depends_on"]),
                            "weight": st.floats(0, 1),
                        }
                    ),
                    max_size=2,
                )
            )
            events.append(
                extracted(
                    lid,
                    f"content {i}",
                    key=key,
                    concepts=draw(st.lists(st.sampled_from(CONCEPTS), max_size=3)),
                    edges=edges,
                    valid_from=draw(st.sampled_from([None, "2025-12-01", "2026-01-02"])),
                    vector_clock={common["session"]: i + 1},
                    **common,
                )
            )
            extracted_lids.append(lid)
        elif op in ("reinforce", "weaken"):
            delta = draw(st.floats(0.01, 0.5)) * (1 if op == "reinforce" else -1)
            kind = "LearningReinforced" if op == "reinforce" else "LearningWeakened"
            events.append(lifecycle(kind, lid, {"reinforcement_delta": delta}, key=key, **common))
        elif op == "validate":
            events.append(lifecycle("LearningValidated", lid, {"concepts": ["validated"]}, key=key, **common))
        elif op == "contradict":
            events.append(
                lifecycle(
                    "LearningContradicted",
                    lid,
                    {"contradicted_with": other, "contradiction_multiplier": draw(st.floats(0.1, 1))},
                    key=key,
                    **common,
                )
            )
        elif op == "supersede":
            events.append(lifecycle("LearningSuperseded", lid, {"superseded_by": other}, key=key, **common))
        else:
            events.append(lifecycle("LearningArchived", lid, {"reason": "test"}, key=key, **common))
    return events


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=event_sequences(), data=st.data())
def test_incremental_projection_in_any_batch_split_equals_full_replay(tmp_path_factory, new_db, events, data):
    tmp = tmp_path_factory.mktemp("prop")
    incremental, full = new_db(tmp / "inc.db"), new_db(tmp / "full.db")
    try:
        # incremental: append in random chunks, project after each with a random batch size
        cuts = sorted(data.draw(st.sets(st.integers(1, len(events)), max_size=5)) | {len(events)})
        start = 0
        for cut in cuts:
            SqliteEventStore(incremental).append_many(events[start:cut])
            project(incremental, batch_size=data.draw(st.integers(1, 7)))
            start = cut
        SqliteEventStore(full).append_many(events)
        rebuild(full, batch_size=10_000)
        assert snapshot(incremental) == snapshot(full)

        # the pure in-memory replay agrees with the database projection
        mem = project_in_memory(SqliteEventStore(full).replay(0))
        rows = [tuple(m.row()) for m in mem.active()]
        assert rows == snapshot(full)["memories"]
        assert sorted((m.id, c) for m in mem.active() for c in m.concepts) == snapshot(full)["concepts"]

        # deterministic and idempotent: replay again, project again
        before = snapshot(full)
        rebuild(full, batch_size=3)
        assert snapshot(full) == before
        project(full)
        assert snapshot(full) == before
        assert verify(incremental).ok
    finally:
        incremental.close()
        full.close()


def test_memory_columns_match_table():
    conn = open_db(":memory:", create=True)
    cols = [r[1] for r in conn.execute("PRAGMA table_info(memories)")]
    assert tuple(cols) == MEMORY_COLUMNS

"""Reinforcement over time: decay as events idempotent per period, archival below the score, rotation per scope."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from eventgen import extracted, lifecycle
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.defs.assets.memory import partition_clock, retention
from nous_assets.defs.resources import NousResource
from nous_assets.reinforce.retention import apply_retention, idle_periods
from nous_assets.settings import Thresholds, load_settings
from nous_assets.store.db import open_db
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, rebuild, snapshot, verify

RECORDED = "2026-01-01T00:00:00Z"


def _at(day: str) -> datetime:
    return datetime.fromisoformat(day).replace(tzinfo=UTC)


def _events(conn, kind: str) -> list[dict]:
    rows = conn.execute("SELECT learning_id, payload_json FROM learning_events WHERE event_type = ? ORDER BY event_id",
                        (kind,))  # fmt: skip
    return [{"lid": lid, **json.loads(p)} for lid, p in rows]


def _score(conn, lid: str) -> float | None:
    row = conn.execute("SELECT reinforcement_score FROM memories WHERE learning_id = ?", (lid,)).fetchone()
    return None if row is None else row[0]


def test_an_idle_memory_halves_once_per_whole_idle_period_then_is_archived(store, conn):
    store.append(extracted("A", transaction_time=RECORDED, valid_from="2025-06-01"))
    t = Thresholds()
    periods = idle_periods(RECORDED, None, _at("2026-03-10"), 30)
    assert len(periods) == 1  # 2026-01-01 falls inside a period: only the next whole one counts
    stats = apply_retention(conn, _at("2026-03-10"), t)
    assert (stats.decayed, stats.archived_below) == (1, 0)
    project(conn)
    assert _score(conn, "A") == pytest.approx(0.25)
    accessed = conn.execute("SELECT accessed_at FROM memories").fetchone()[0]
    assert accessed is None  # decay is disuse, never a use: the memory stays as idle as it was

    again = apply_retention(conn, _at("2026-03-10"), t)  # the same day again: nothing new
    assert again.events_written == 0
    later = apply_retention(conn, _at("2026-06-01"), t)  # 0.25 -> 0.125 -> 0.0625 (< 0.1): archived there
    assert (later.decayed, later.archived_below) == (2, 1)
    project(conn)
    assert _score(conn, "A") is None  # out of the active set; every event kept
    decays = _events(conn, "LearningWeakened")
    assert [d["reason"] for d in decays] == ["decay"] * 3 and len({d["period"] for d in decays}) == 3
    assert [round(d["reinforcement_delta"], 6) for d in decays] == [-0.25, -0.125, -0.0625]
    (archived,) = _events(conn, "LearningArchived")
    assert archived["reason"] == "score_below_threshold" and archived["score"] == pytest.approx(0.0625)
    assert apply_retention(conn, _at("2027-01-01"), t).events_written == 0
    assert verify(conn).ok


def test_a_used_memory_does_not_decay_and_a_weakened_one_is_archived_without_waiting(store, conn):
    store.append(extracted("used", transaction_time=RECORDED))
    store.append(extracted("bad", "use npm", key="xb", transaction_time=RECORDED))
    store.append(lifecycle("LearningReinforced", "used", {"reinforcement_delta": 0.1}, key="r",
                           valid_from="2026-03-20T00:00:00Z"))  # fmt: skip
    for n in range(3):
        store.append(lifecycle("LearningWeakened", "bad", {"reinforcement_delta": -0.2}, key=f"w{n}",
                               transaction_time="2026-01-02T00:00:00Z"))  # fmt: skip
    stats = apply_retention(conn, _at("2026-04-10"), Thresholds())
    assert stats.archived_below == 1 and _events(conn, "LearningArchived")[0]["lid"] == "bad"
    assert [d["lid"] for d in _events(conn, "LearningWeakened") if d.get("reason") == "decay"] == []
    project(conn)
    assert _score(conn, "used") == pytest.approx(0.6)


def test_the_rotation_bound_archives_the_lowest_scored_beyond_it_per_scope(store, conn):
    for n in range(5):
        store.append(extracted(f"p{n}", f"project fact {n}", key=f"p{n}", transaction_time=RECORDED))
        if n:
            store.append(lifecycle("LearningReinforced", f"p{n}", {"reinforcement_delta": 0.1 * n}, key=f"r{n}"))
    for n in range(2):
        store.append(extracted(f"g{n}", f"global fact {n}", key=f"g{n}", project="other", transaction_time=RECORDED,
                               payload_extra={"scope": "global"}))  # fmt: skip
    stats = apply_retention(conn, _at("2026-01-02"), Thresholds(rotation_bound=3))
    assert stats.scopes_over_bound == ["project:p1"] and stats.archived_rotation == 2
    archived = _events(conn, "LearningArchived")
    assert sorted(a["lid"] for a in archived) == ["p0", "p1"]  # the two lowest scores
    assert {a["reason"] for a in archived} == {"rotation_bound"} and archived[0]["bound"] == 3
    assert apply_retention(conn, _at("2026-01-02"), Thresholds(rotation_bound=3)).events_written == 0
    project(conn)
    assert conn.execute("SELECT count(*) FROM memories WHERE project_id = 'p1'").fetchone()[0] == 3
    assert conn.execute("SELECT count(*) FROM learning_events").fetchone()[0] == 5 + 4 + 2 + 2  # no DELETE


def test_the_retention_asset_decides_as_of_its_partition_day(tmp_path: Path):
    settings = load_settings({"HOME": str(tmp_path / "home"), "NOUS_DATA_DIR": str(tmp_path / "data")})
    conn = open_db(settings.db_path, create=True)
    SqliteEventStore(conn).append(extracted("A", transaction_time=RECORDED))
    conn.close()
    assert partition_clock(["2026-03-01", "2026-02-01"]) == _at("2026-03-02")
    assert partition_clock(["2026-03-01"], now=_at("2026-03-01T12:00:00")) == _at("2026-03-01T12:00:00")
    result = dg.materialize([retention], partition_key="2026-03-15", resources={"nous": NousResource.of(settings)})
    (mat,) = result.asset_materializations_for_node("retention")
    assert mat.metadata["decay_events"].value == 1 and mat.metadata["clock"].value.startswith("2026-03-16")
    conn = open_db(settings.db_path)
    try:
        assert [d["period_end"] for d in _events(conn, "LearningWeakened")] == ["2026-02-28T00:00:00.000000Z"]
    finally:
        conn.close()


# ---------------------------------------------------------------- properties
LIDS = [f"L{i}" for i in range(5)]
BASE = datetime(2026, 1, 1, tzinfo=UTC)


@st.composite
def histories(draw):
    """Extractions, reinforcements and weakenings over about a year, with days retention runs on."""
    events, known = [], []
    for i in range(draw(st.integers(1, 14))):
        tx = (BASE + timedelta(days=draw(st.integers(0, 300)))).isoformat()
        common = {"transaction_time": tx, "event_uuid": f"00000000-0000-4000-8000-{i:012d}"}
        op = draw(st.sampled_from(["extract", "reinforce", "weaken"])) if known else "extract"
        lid = draw(st.sampled_from(LIDS if op == "extract" else known))
        if op == "extract":
            scope = {"scope": draw(st.sampled_from(["project", "global"]))}
            events.append(extracted(lid, f"fact {i}", key=f"k{i}", payload_extra=scope, **common))
            known.append(lid)
        else:
            delta = draw(st.floats(0.05, 0.4)) * (1 if op == "reinforce" else -1)
            kind = "LearningReinforced" if op == "reinforce" else "LearningWeakened"
            events.append(lifecycle(kind, lid, {"reinforcement_delta": delta}, key=f"k{i}", valid_from=tx, **common))
    clocks = draw(st.lists(st.integers(0, 500), min_size=1, max_size=4))
    return events, [BASE + timedelta(days=d) for d in clocks]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories(), data=st.data())
def test_with_decay_and_archival_incremental_projection_in_any_batch_split_equals_full_replay(
    tmp_path_factory, new_db, history, data
):
    events, clocks = history
    tmp = tmp_path_factory.mktemp("retention")
    incremental, full = new_db(tmp / "inc.db"), new_db(tmp / "full.db")
    t = Thresholds(rotation_bound=data.draw(st.integers(1, 4)))
    try:
        cuts = sorted(data.draw(st.sets(st.integers(1, len(events)), max_size=4)) | {len(events)})
        start = 0
        for n, cut in enumerate(cuts):  # appends, retention runs and projections interleaved in any split
            SqliteEventStore(incremental).append_many(events[start:cut])
            if n < len(clocks):
                apply_retention(incremental, clocks[n], t)
            project(incremental, batch_size=data.draw(st.integers(1, 5)))
            start = cut
        for clock in clocks[len(cuts):]:
            apply_retention(incremental, clock, t)
        project(incremental)
        log = list(SqliteEventStore(incremental).replay(0))
        SqliteEventStore(full).append_many([_as_input(e) for e in log])
        rebuild(full, batch_size=7)
        assert snapshot(incremental) == snapshot(full)
        assert verify(incremental).ok
    finally:
        incremental.close()
        full.close()


def _state(conn) -> list[tuple]:
    """The memories as a reader sees them (event ids aside: the two logs hold the same events in another order)."""
    skip = MEMORY_COLUMNS.index("last_event_id")
    return [tuple(v for i, v in enumerate(row) if i != skip) for row in snapshot(conn)["memories"]]


def _as_input(e):
    from nous_assets.store.log.events import LearningEvent

    return LearningEvent(e.event_type, e.learning_id, e.payload, e.session_id, e.project_id, e.source,
                         e.idempotency_key, e.schema_version, e.valid_from, e.valid_until, e.vector_clock_json,
                         e.parent_event_id, e.transaction_time, e.event_uuid)  # fmt: skip


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=histories())
def test_decay_is_idempotent_per_period_whatever_days_retention_runs_on(tmp_path_factory, new_db, history):
    """Running on several days, or only on the last, or twice, writes the same decay and archival events."""
    events, clocks = history
    tmp = tmp_path_factory.mktemp("idem")
    stepwise, once = new_db(tmp / "steps.db"), new_db(tmp / "once.db")
    t = Thresholds(rotation_bound=10_000)  # rotation ranks by the day's scores; decay and threshold do not
    try:
        for conn in (stepwise, once):
            SqliteEventStore(conn).append_many(events)
        for clock in sorted(clocks):
            apply_retention(stepwise, clock, t)
        apply_retention(once, max(clocks), t)
        assert apply_retention(once, max(clocks), t).events_written == 0  # the same day twice: nothing new

        def written(conn):
            return sorted(
                (r[0], r[1], round(json.loads(r[2])["reinforcement_delta"] if r[0] == "LearningWeakened" else 0, 9))
                for r in conn.execute("SELECT event_type, idempotency_key, payload_json FROM learning_events "
                                      "WHERE session_id = 'nous-retention'")  # fmt: skip
            )

        assert written(stepwise) == written(once)
        periods = [json.loads(p)["period"] for (p,) in stepwise.execute(
            "SELECT payload_json FROM learning_events WHERE json_extract(payload_json, '$.reason') = 'decay'")]
        lids = [r[0] for r in stepwise.execute(
            "SELECT learning_id FROM learning_events WHERE json_extract(payload_json, '$.reason') = 'decay'")]
        assert len(set(zip(lids, periods, strict=True))) == len(periods)  # one decay per memory and period
        project(stepwise)
        project(once)
        assert _state(stepwise) == _state(once)
    finally:
        stepwise.close()
        once.close()

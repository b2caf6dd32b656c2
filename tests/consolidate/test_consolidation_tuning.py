"""CX15 auto-tuning (consolidate/tuning.py, store/tuning.py): the cohesion gate moves with the observations'
quality, within the configured bounds, every move on an append-only trail."""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nous_assets.consolidate.run import consolidate
from nous_assets.consolidate.tuning import next_cohesion
from nous_assets.settings import Thresholds
from nous_assets.store import tuning as tuning_store
from nous_assets.store.reads.consolidation import Quality
from nous_assets.store.sqlite.events import SqliteEventStore

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
from eventgen import extracted  # noqa: E402


def _quality(judged=20, used=20, formed=20, contradicted=0) -> Quality:
    return Quality(formed, formed, judged, used, contradicted, 0, 0, 0, 0.0)


def test_unused_or_contradicted_observations_tighten_the_gate_good_ones_relax_it_within_bounds():
    assert next_cohesion(0.6, _quality(used=5), 0.6, 0.75).new == 0.65  # precision 0.25
    assert next_cohesion(0.6, _quality(contradicted=3), 0.6, 0.75).new == 0.65  # 15 % contradicted
    assert next_cohesion(0.75, _quality(used=5), 0.6, 0.75) is None  # at the bound already
    assert next_cohesion(0.7, _quality(used=19), 0.6, 0.75).new == 0.65  # precision 0.95: back towards 0.6
    assert next_cohesion(0.6, _quality(used=19), 0.6, 0.75) is None
    assert next_cohesion(0.6, _quality(judged=4, used=0), 0.6, 0.75) is None  # too few to judge
    assert next_cohesion(0.6, _quality(used=15), 0.6, 0.75) is None  # 0.75: within target


def _day(ago: float) -> str:
    return (datetime.now(UTC) - timedelta(days=ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def test_a_run_tightens_on_unused_observations_records_why_and_stops_at_the_bound(conn):
    extra = {"type": "knowledge", "kind": "observation", "domain": "consolidation"}
    backfilled = [extracted(f"b{n}", f"backfilled {n}", key=f"b{n}", valid_from=_day(400), payload_extra=extra)
                  for n in range(12)]  # formed today from last year's memories: too young to judge
    SqliteEventStore(conn).append_many(backfilled)
    assert consolidate(conn, source="fs_watch").cohesion == 0.6 and tuning_store.history(conn, "cohesion") == []
    SqliteEventStore(conn).append_many([extracted(f"o{n}", f"observation {n}", key=f"o{n}", valid_from=_day(90),
                                                  transaction_time=_day(60), payload_extra=extra)
                                        for n in range(12)])  # fmt: skip
    thresholds = Thresholds()
    runs = [consolidate(conn, source="fs_watch", thresholds=thresholds) for _ in range(5)]
    assert [r.cohesion for r in runs] == [0.65, 0.7, 0.75, 0.75, 0.75]  # 0 of 12 used in their first 30 days
    assert runs[-1].tuned == "" and [m["new"] for m in runs[-1].tuning_history] == [0.75, 0.7, 0.65]
    moves = tuning_store.history(conn, "cohesion")
    assert [(m["old"], m["new"]) for m in reversed(moves)] == [(0.6, 0.65), (0.65, 0.7), (0.7, 0.75)]
    assert moves[0]["reason"] == "tightened: precision 0.00 < 0.7"  # the 12 formed 60 days ago
    with pytest.raises(Exception, match="append-only"):  # noqa: B017 - the driver's IntegrityError
        conn.execute("UPDATE consolidation_tuning SET new_value = 0.6")
    assert consolidate(conn, source="fs_watch", thresholds=Thresholds(consolidation_cohesion_max=0.7)).cohesion == 0.7

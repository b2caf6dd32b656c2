"""Process mining with DuckDB: each metric against the same figure computed in plain Python from the same events.

Histories are generated (seeded), written through the real SqliteEventStore into a real cortex.db, projected, and
read back by ``nous_assets.metrics.mining`` through a read-only connection.
"""

from __future__ import annotations

import hashlib
import json
import random
import statistics
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from nous_assets.cli import main
from nous_assets.metrics.mining import RECURRENCE_FLAG, compute
from nous_assets.store.db import open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))
from eventgen import extracted, lifecycle  # noqa: E402

AS_OF = datetime(2026, 6, 30, tzinfo=UTC)
DOMAINS = ("git", "python", "docker", "testing")


def _day(offset_days: float) -> str:
    return (AS_OF - timedelta(days=offset_days)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _history(seed: int) -> tuple[list[LearningEvent], list[tuple]]:
    """Sessions over 80 days in two projects: extractions, re-learnings in later sessions, contradictions,
    supersessions; and injections with verdicts. Returns (events, access rows)."""
    rng = random.Random(seed)
    events: list[LearningEvent] = []
    learned: list[tuple[str, str, str, float]] = []  # (lid, project, domain, days ago)
    for s in range(60):
        ago = 80 - s * 80 / 60
        project_id, session = f"proj-{s % 2}", f"sess-{s}"
        for k in range(rng.randint(0, 3)):
            lid, domain = f"L{s}-{k}", rng.choice(DOMAINS)
            events.append(extracted(lid, f"learning {lid} about {domain}", key=f"x{lid}", session=session,
                                    project=project_id, valid_from=_day(ago),
                                    payload_extra={"domain": domain}))  # fmt: skip
            learned.append((lid, project_id, domain, ago))
        for lid, p, _, _ in rng.sample(learned, min(len(learned), rng.randint(0, 2))):
            if p == project_id and rng.random() < 0.7:
                events.append(lifecycle("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "relearned"},
                                        key=f"re{lid}{s}", session=session, project=project_id, valid_from=_day(ago),
                                        source="historical_backfill"))  # fmt: skip
    for n, (lid, p, _, ago) in enumerate(rng.sample(learned, len(learned) // 5)):
        other = next(o for o in learned if o[0] != lid)
        kind = "LearningContradicted" if n % 2 else "LearningSuperseded"
        payload = ({"contradicted_with": other[0], "contradiction_multiplier": 0.7} if n % 2
                   else {"superseded_by": other[0]})  # fmt: skip
        events.append(lifecycle(kind, lid, payload, key=f"c{lid}", project=p, valid_from=_day(max(ago - 1, 0))))
    accesses = []
    for n in range(40):
        useful = rng.choice((0, 1, None))
        accesses.append((n % 30 + 1, f"sess-{n}", useful, "hook", _day(rng.uniform(0, 60))))
    return events, accesses


def _store(tmp: Path, seed: int) -> tuple[Path, list[LearningEvent], list[tuple]]:
    events, accesses = _history(seed)
    db = tmp / "cortex.db"
    conn = open_db(db, create=True)
    SqliteEventStore(conn).append_many(events)
    project(conn)
    conn.executemany("INSERT INTO access_log(memory_id, session_id, was_useful, source, accessed_at) "
                     "VALUES (?, ?, ?, ?, ?)", accesses)  # fmt: skip
    conn.close()
    return db, events, accesses


def _when(e: LearningEvent) -> datetime:
    return datetime.fromisoformat(e.valid_from.replace("Z", "+00:00"))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_metrics_equal_the_same_figures_computed_in_python(tmp_path, seed):
    db, events, accesses = _store(tmp_path, seed)
    report = compute(db, as_of=AS_OF.isoformat())
    m = report.headline

    learns = [e for e in events if e.event_type == "LearningExtracted"]
    relearns = [e for e in events if e.event_type == "LearningReinforced"]
    sessions = {e.session_id for e in learns + relearns}
    sessions_of = {}
    for e in learns + relearns:
        sessions_of.setdefault(e.learning_id, set()).add(e.session_id)
    re_total = sum(len(s) - 1 for s in sessions_of.values())
    assert m["sessions"] == len(sessions) and m["learnings"] == len(learns)
    assert m["re_extractions"] == re_total
    assert m["recurrence_rate"] == pytest.approx(re_total / len(sessions), abs=1e-4)

    judged = [a for a in accesses if a[2] is not None]
    assert m["injections"] == len(accesses) and m["injections_judged"] == len(judged)
    assert m["injection_effectiveness"] == pytest.approx(sum(a[2] for a in judged) / len(judged), abs=1e-4)

    n7 = sum(1 for e in relearns if AS_OF - _when(e) < timedelta(days=7))
    n30 = sum(1 for e in relearns if AS_OF - _when(e) < timedelta(days=30))
    assert m["burst_index"] == pytest.approx((n7 / 7) / (n30 / 30) if n30 else 0.0, abs=1e-4)

    recent = [e for e in learns + relearns if AS_OF - _when(e) < timedelta(days=30)]
    new30 = sum(1 for e in recent if e.event_type == "LearningExtracted")
    assert m["learning_velocity_30d"] == pytest.approx(new30 / len({e.session_id for e in recent}), abs=1e-4)

    corrections = [e for e in events if e.event_type in ("LearningContradicted", "LearningSuperseded")]
    superseded = {e.learning_id for e in corrections if e.event_type == "LearningSuperseded"}
    active = len({e.learning_id for e in learns} - superseded)
    assert m["active_memories"] == active
    assert m["correction_density"] == pytest.approx(len(corrections) / active, abs=1e-4)

    assert sum(w["learnings"] for w in report.velocity_by_week) == sum(
        1 for e in learns if AS_OF - _when(e) < timedelta(days=84)
    )


def test_knowledge_decay_counts_days_since_last_injection_or_learning(tmp_path):
    db = tmp_path / "cortex.db"
    conn = open_db(db, create=True)
    SqliteEventStore(conn).append_many([
        extracted("A", "never injected, learned 40 days ago", key="a", valid_from=_day(40)),
        extracted("B", "learned 90 days ago, injected 10 days ago", key="b", valid_from=_day(90)),
        extracted("C", "learned 20 days ago", key="c", valid_from=_day(20)),
    ])  # fmt: skip
    project(conn)
    ids = dict(conn.execute("SELECT learning_id, id FROM memories").fetchall())
    conn.execute("INSERT INTO access_log(memory_id, session_id, source, accessed_at) VALUES (?, 's', 'hook', ?)",
                 (ids["B"], _day(10)))  # fmt: skip
    conn.close()
    m = compute(db, as_of=AS_OF.isoformat()).headline
    assert m["knowledge_decay_median_days"] == pytest.approx(statistics.median([40, 10, 20]), abs=0.1)
    assert m["memories_never_injected"] == 2


def test_hotspots_rank_domains_by_recurrence_plus_correction_density(tmp_path):
    db, events, _ = _store(tmp_path, 4)
    report = compute(db, as_of=AS_OF.isoformat())
    scores = [h.score for h in report.hotspots]
    assert scores == sorted(scores, reverse=True) and report.hotspots
    for h in report.hotspots:
        assert h.score == pytest.approx(h.recurrence_rate + h.correction_density, abs=1e-3)
        assert h.domain in DOMAINS and h.project_id in ("proj-0", "proj-1")
    assert all(f["rate"] > RECURRENCE_FLAG for f in report.flagged_learnings)


def test_as_of_ignores_later_events(tmp_path):
    db, events, _ = _store(tmp_path, 5)
    early = AS_OF - timedelta(days=50)
    m = compute(db, as_of=early.isoformat()).headline
    assert m["learnings"] == sum(1 for e in events if e.event_type == "LearningExtracted" and _when(e) <= early)


def test_metrics_only_read_the_database(tmp_path):
    db, _, _ = _store(tmp_path, 6)
    before = hashlib.sha256(db.read_bytes()).hexdigest()
    compute(db)
    assert hashlib.sha256(db.read_bytes()).hexdigest() == before
    with pytest.raises(FileNotFoundError):
        compute(tmp_path / "missing.db")
    assert not (tmp_path / "missing.db").exists()


def test_consolidation_figures_count_observations_their_use_within_30_days_and_contradictions(tmp_path):
    """CX15 from the log: precision over observations old enough to judge (30 days), contradiction rate over all."""
    db = tmp_path / "cortex.db"
    conn = open_db(db, create=True)

    def observation(lid: str, ago: float):
        extra = {"type": "knowledge", "kind": "observation", "domain": "consolidation"}
        return extracted(lid, f"observation {lid}", key=lid, valid_from=_day(ago + 100), transaction_time=_day(ago),
                         payload_extra=extra)  # formed `ago` days back, of members learned long before

    SqliteEventStore(conn).append_many([
        observation("used", 60), observation("unused", 45), observation("young", 5),
        extracted("plain", "a learning, not an observation", key="plain", valid_from=_day(60)),
        lifecycle("LearningContradicted", "unused", {"contradicted_with": "plain", "contradiction_multiplier": 0.7},
                  key="contra"),
    ])  # fmt: skip
    project(conn)
    ids = dict(conn.execute("SELECT learning_id, id FROM memories").fetchall())
    conn.executemany("INSERT INTO access_log(memory_id, session_id, source, accessed_at) VALUES (?, 's', 'hook', ?)",
                     [(ids["used"], _day(50)), (ids["unused"], _day(1)), (ids["plain"], _day(50))])  # fmt: skip
    conn.close()
    m = compute(db, as_of=AS_OF.isoformat()).headline
    assert m["observations"] == 3
    assert m["observation_precision_30d"] == 0.5  # "used" within 10 days of forming; "unused" only after 44
    assert m["observation_contradiction_rate"] == pytest.approx(1 / 3, abs=1e-4)
    assert compute(db, as_of=_day(58)).headline["observation_precision_30d"] is None  # none old enough yet


def test_empty_database_gives_zeros_not_errors(tmp_path):
    db = tmp_path / "cortex.db"
    open_db(db, create=True).close()
    report = compute(db)
    assert report.headline["sessions"] == 0 and report.headline["injection_effectiveness"] is None
    assert report.hotspots == []


def test_cli_metrics_table_and_json(nous_env, capsys):
    db = Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db"
    assert main(["metrics"]) == 1
    assert "run `nous init` first" in capsys.readouterr().err
    db.parent.mkdir(parents=True)
    _store(db.parent, 7)
    assert main(["metrics", "--as-of", AS_OF.isoformat()]) == 0
    text = capsys.readouterr().out
    for label in ("recurrence rate", "injection effectiveness", "burst index", "learning velocity",
                  "correction density", "knowledge decay", "complexity hotspots"):  # fmt: skip
        assert label in text
    assert main(["metrics", "--json", "--as-of", AS_OF.isoformat()]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["metrics"] == compute(db, as_of=AS_OF.isoformat()).headline
    assert main(["metrics", "--as-of", "last tuesday"]) == 1
    assert "--as-of" in capsys.readouterr().err


def test_metrics_are_shown_with_units_and_a_share_as_a_percentage():
    from nous_assets.cli.metrics import render
    from nous_assets.metrics.mining import MetricsReport

    text = render(MetricsReport(as_of="2026-03-01T00:00:00.000000Z", headline={
        "injection_effectiveness": 0.6667, "knowledge_decay_median_days": 3.25, "sessions": 4}))  # fmt: skip
    line = next(x for x in text.splitlines() if "injection effectiveness" in x)
    assert "66.7 %" in line and "0.667" not in line
    assert "3.2 d" in next(x for x in text.splitlines() if "knowledge decay (median)" in x)


def test_a_series_reads_once_and_equals_one_report_per_moment(tmp_path: Path):
    from nous_assets.metrics.mining import compute_series

    _store(tmp_path, 7)
    db = tmp_path / "cortex.db"
    moments = [(AS_OF - timedelta(days=d)).isoformat() for d in (20, 5, 0)]
    series = compute_series(db, moments)
    assert [r.headline for r in series] == [compute(db, as_of=m).headline for m in moments]
    assert series[0].headline != series[-1].headline


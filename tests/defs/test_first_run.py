"""The first `make run` ingests each day once: ranged runs over all the history on disk (`nous run --no-serve`,
the start of `make run`), then the watch sensor requests nothing already done or in flight, and new lines
request exactly their day, once. Real Dagster instance (the repo's dagster.yaml), real assets, real MiniLM."""

from __future__ import annotations

import json
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import dagster as dg
import pytest
from firstrun import History, dequeue, recent_days, reconcile, request_tags, runs_per_day, submit, watch

from nous_assets.cli import main
from nous_assets.defs.assets import ASSET_CHECKS, PIPELINE_ASSETS
from nous_assets.defs.backfill import MAX_RUN_DAYS, stretches
from nous_assets.defs.runs import WORKER_TAG, covered_days, range_tags, worker_id
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from nous_assets.store.ingest.floor import get_floor

pytestmark = pytest.mark.slow


def test_first_run_is_one_ranged_run_then_the_sensor_requests_only_new_lines_and_in_flight_runs_block_theirs(
    week: History, capsys
):
    assert main(["run", "--no-serve"]) == 0
    out = capsys.readouterr()
    assert f"7 day(s) with activity, {week.days[0]}..{week.days[-1]} in one run" in out.err
    assert "0 failed day(s)" in out.err and "DEBUG" not in out.out + out.err
    steps = len(PIPELINE_ASSETS) + len(ASSET_CHECKS)  # progress: one line per asset and check
    assert f"step 1/{steps} transcripts done" in out.err and "injection_cache done" in out.err
    instance = dg.DagsterInstance.get()
    runs = instance.get_runs()
    assert len(runs) == 1 and runs[0].job_name == "ingest_job" and runs[0].status == dg.DagsterRunStatus.SUCCESS
    assert covered_days(runs[0].tags) == week.days
    assert runs_per_day(instance) == {day: 1 for day in week.days}
    conn = open_db(load_settings().db_path)
    memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    conn.close()
    assert memories >= 7
    # the ranged run puts the metrics of each day on that day's materialisation: Dagster plots them by partition
    mats = {r.asset_materialization.partition: r.asset_materialization.metadata
            for r in instance.fetch_materializations(dg.AssetKey("metrics"), limit=100).records}  # fmt: skip
    assert sorted(mats) == week.days
    learned = [mats[day]["learnings"].value for day in week.days]
    assert learned == sorted(learned) and learned[0] < learned[-1]  # each as of its own day's end
    ends = [(datetime.fromisoformat(day) + timedelta(days=1)).date().isoformat() for day in week.days[:-1]]
    assert [mats[day]["as_of"].value[:10] for day in week.days] == [*ends, week.days[-1]]  # today: as of now
    assert isinstance(mats[week.days[-1]]["hotspots"], dg.TableMetadataValue)
    assert "injection_effectiveness_pct: %" in mats[week.days[-1]]["units"].value

    # the sensor, tick after tick, finds nothing the ranged run has not already done
    for _ in range(3):
        tick = watch(instance)
        assert tick.run_requests == []
        assert tick.skip_reason.skip_message == "no new transcript lines"

    # yesterday's session gains lines: exactly that day is requested
    yesterday, today = week.days[-2], week.days[-1]
    week.append(yesterday, 20, minute=40)
    first = watch(instance)
    assert [r.partition_key for r in first.run_requests] == [yesterday]
    assert first.run_requests[0].tags["nous/source"] == "fs_watch"
    queued = submit(instance, request_tags(first.run_requests[0]))

    # while its run waits in the queue, the file grows again and today's session too: only today is new
    week.append(yesterday, 21, minute=50)
    week.append(today, 22, minute=40)
    second = watch(instance)
    assert [r.partition_key for r in second.run_requests] == [today]
    assert watch(instance).run_requests[0].run_key == second.run_requests[0].run_key  # same files, same key
    running = submit(
        instance, request_tags(second.run_requests[0], **{WORKER_TAG: worker_id()}), dg.DagsterRunStatus.STARTED
    )
    third = watch(instance)
    assert third.run_requests == []
    assert f"new lines on {yesterday}, {today}, already covered" in third.skip_reason.skip_message
    assert reconcile(instance).skip_message

    # the queued run executes (and takes the lines that arrived while it waited); so does today's
    instance.delete_run(running)
    assert dequeue(instance, queued).success
    today_run = submit(instance, request_tags(second.run_requests[0]))
    assert dequeue(instance, today_run).success
    assert watch(instance).run_requests == []
    counts = runs_per_day(instance)
    assert counts == {**{day: 1 for day in week.days}, yesterday: 2, today: 2}
    conn = open_db(load_settings().db_path)
    texts = [r[0] for r in conn.execute("SELECT content FROM memories")]
    conn.close()
    assert sum("ruff" in t or "mypy" in t or "pytest" in t or "black" in t for t in texts) >= 1
    assert len(texts) > memories

    # in-flight runs block their days until their process is gone (the runs above all ended): new lines on the
    # last three days request them
    for n, day in enumerate(week.days[-3:]):
        week.append(day, 40 + n, minute=55)
    assert [r.partition_key for r in watch(instance).run_requests] == week.days[-3:]

    # a queued ranged run (a range launched from the UI, or by `nous backfill`) covers each of its days
    ranged = submit(instance, range_tags(week.days[-3], week.days[-1]))
    assert watch(instance).run_requests == []
    instance.report_run_canceled(instance.get_run_by_id(ranged))

    # a started run whose process was killed blocks nothing: it is marked failed and its day requested
    request = watch(instance).run_requests[-1]
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    dead = f"{worker_id().rsplit(':', 2)[0]}:{gone.stdout.strip()}:"
    stuck = submit(instance, request_tags(request, **{WORKER_TAG: dead}), dg.DagsterRunStatus.STARTED)
    alive = submit(instance, {"dagster/partition": week.days[-3], WORKER_TAG: worker_id()}, dg.DagsterRunStatus.STARTED)
    assert [r.partition_key for r in watch(instance).run_requests] == [week.days[-2], week.days[-1]]
    assert instance.get_run_by_id(stuck).status == dg.DagsterRunStatus.FAILURE
    assert instance.get_run_by_id(alive).status == dg.DagsterRunStatus.STARTED


def test_first_run_takes_all_the_history_on_disk_and_a_restart_takes_older_days_that_appear(machine, capsys):
    """Claude Code deletes transcripts after 30 days by default: what is on disk is all there will be, so `nous run`
    alone ends with memories and packets for history older than any window, in ranged runs with progress."""
    today = datetime.now(UTC).date()
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, [])
    old = [(today - timedelta(days=d)).isoformat() for d in (200, 150, 120)]
    for n, day in enumerate(old + recent_days(2)):
        history.write_day(day, n)
    # one session that started before 90 days ago and went on after
    straddle = (today - timedelta(days=91)).isoformat(), (today - timedelta(days=89)).isoformat()
    path = history.write_day(straddle[0], 9)
    history.files[straddle[1]] = path
    history.append(straddle[1], 10, minute=40)
    every = sorted([*old, *straddle, *recent_days(2)])

    assert main(["run", "--no-serve"]) == 0
    out = capsys.readouterr()
    assert "older history" not in out.out + out.err
    assert f"history: {len(every)} day(s) with transcript activity from {old[0]} to {every[-1]}" in out.err
    runs = len(stretches(every, max_span=MAX_RUN_DAYS))
    assert runs > 1 and f"in {runs} runs" in out.err
    assert f"history: {len(every)}/{len(every)} day(s) done, " in out.err and " memories so far" in out.err
    conn = open_db(load_settings().db_path)
    assert get_floor(conn) == old[0]
    memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    packets = conn.execute("SELECT count(*) FROM injection_cache").fetchone()[0]
    conn.close()
    assert memories > 0 and packets > 0
    assert (Path(machine["NOUS_DATA_DIR"]) / "first_day").read_text().strip() == old[0]  # the partitions start
    instance = dg.DagsterInstance.get()
    assert watch(instance).run_requests == []
    covered = runs_per_day(instance)  # a run covers its calendar range, the empty day inside the straddle too
    assert set(every) <= set(covered) and set(covered.values()) == {1}

    # a restart takes only what is new; transcripts older than everything, copied in later, count as new
    assert main(["run", "--no-serve"]) == 0
    assert "catch-up: no new transcript lines since the last run" in capsys.readouterr().out
    older = (today - timedelta(days=250)).isoformat()
    history.write_day(older, 20)
    assert main(["run", "--no-serve"]) == 0
    out = capsys.readouterr()
    assert f"catch-up: 1 older day(s) with transcript activity from {older} to {older} appeared" in out.out
    assert f"1 day(s) with activity, {older}..{older} in one run" in out.err
    conn = open_db(load_settings().db_path)
    assert get_floor(conn) == older
    conn.close()
    assert (Path(machine["NOUS_DATA_DIR"]) / "first_day").read_text().strip() == older
    assert runs_per_day(instance) == {**covered, older: 1}

    # new lines on a day already taken: a restart takes exactly that day again, in one run
    yesterday = recent_days(2)[0]
    history.append(yesterday, 30, minute=50)
    assert main(["run", "--no-serve"]) == 0
    assert f"1 day(s) with activity, {yesterday}..{yesterday} in one run" in capsys.readouterr().err
    assert runs_per_day(instance) == {**covered, older: 1, yesterday: 2}


def test_an_explicit_window_reports_older_history_not_taken_until_asked(machine, capsys):
    today = datetime.now(UTC).date()
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, [])
    old = (today - timedelta(days=120)).isoformat()
    for n, day in enumerate([old, *recent_days(1)]):
        history.write_day(day, n)
    assert main(["run", "--no-serve", "--since", "90d"]) == 0
    assert (
        f"older history: 1 day(s) with transcript activity from {old} to {old} not ingested; "
        f"take it with `nous backfill --since {old}`" in capsys.readouterr().out
    )
    instance = dg.DagsterInstance.get()
    assert watch(instance).run_requests == []  # the sensor does not take it either
    assert old not in runs_per_day(instance)
    assert main(["backfill", "--since", "all"]) == 0
    assert "older history" not in capsys.readouterr().out
    assert old in runs_per_day(instance)


def test_nothing_recent_but_older_history_says_so(machine, capsys):
    today = datetime.now(UTC).date()
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, [])
    day = (today - timedelta(days=100)).isoformat()
    history.write_day(day, 1)
    assert main(["backfill"]) == 0
    out = capsys.readouterr().out
    assert "no transcript activity in that range" not in out
    assert f"older history: 1 day(s) with transcript activity from {day} to {day} not ingested" in out
    assert not Path(machine["DAGSTER_HOME"]).exists()  # no run was even started


def test_embedding_budget_holds_and_the_reconcile_schedule_catches_up(week: History, machine):
    config = Path(machine["CLAUDE_CONFIG_DIR"]) / "nous" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"embed": {"run_budget_seconds": 0, "batch_size": 2}}))
    assert main(["run", "--no-serve"]) == 0
    instance = dg.DagsterInstance.get()
    mat = instance.fetch_materializations(dg.AssetKey("embeddings"), limit=1).records[0].asset_materialization
    assert mat.metadata["memory_vectors"].value <= 2  # one batch, then the (zero) budget stops it
    assert mat.metadata["chunks_embedded"].value == 0
    left = mat.metadata["memories_remaining"].value + mat.metadata["chunks_remaining"].value
    assert left > 0
    requests = reconcile(instance)
    assert [r.partition_key for r in requests] == [datetime.now(UTC).date().isoformat()]
    assert requests[0].tags["nous/reason"] == f"embedding backlog ({left})"

    config.write_text(json.dumps({"embed": {"batch_size": 2}}))  # the default budget (300 s) is ample here
    catch_up = submit(instance, request_tags(requests[0]))
    assert dequeue(instance, catch_up).success
    mat = instance.fetch_materializations(dg.AssetKey("embeddings"), limit=1).records[0].asset_materialization
    assert mat.metadata["memories_remaining"].value == 0 and mat.metadata["chunks_remaining"].value == 0
    assert isinstance(reconcile(instance), dg.SkipReason)


def test_a_day_that_cannot_be_written_fails_alone_and_is_taken_again(week: History, machine, capsys):
    blocked = week.days[3]
    lake = Path(machine["NOUS_DATA_DIR"]) / "lake" / "transcripts"
    lake.mkdir(parents=True)
    (lake / f"date={blocked}").write_text("not a directory")  # that day's partition cannot be written
    assert main(["run", "--no-serve"]) == 1
    err = capsys.readouterr().err
    assert "7 day(s) with activity" in err and "1 failed day(s)" in err
    assert f"{blocked} not ingested: " in err and "the next run retries it" in err
    instance = dg.DagsterInstance.get()
    assert [r.partition_key for r in watch(instance).run_requests] == [blocked]  # the others are done

    (lake / f"date={blocked}").unlink()
    assert main(["backfill", "--from", blocked, "--to", blocked]) == 0
    assert watch(instance).run_requests == []


def test_a_failed_run_is_summarised_and_exits_non_zero(week: History, machine, capsys):
    lake = Path(machine["NOUS_DATA_DIR"]) / "lake"
    lake.mkdir(parents=True)
    (lake / "transcripts").write_text("not a directory")  # no day can be written
    assert main(["backfill", "--since", "7d"]) == 1
    err = capsys.readouterr().err
    assert "FAILED in step transcripts: no day could be ingested" in err
    assert "nothing is lost" in err and f"nous backfill --from {week.days[0]} --to {week.days[-1]}" in err
    assert dg.DagsterInstance.get().get_runs()[0].status == dg.DagsterRunStatus.FAILURE

"""Incremental capture on real files: partial lines, truncation, the watch sensor, ranges, crashes, secrets."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import dagster as dg
import polars as pl
import pytest

from nous_assets.capture.lake import turns_path
from nous_assets.defs.assets.capture import learning_events, transcripts
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.sensors import transcript_watch
from nous_assets.store.ingest.floor import lower_floor

pytestmark = pytest.mark.slow

SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"  # spotter/short.jsonl
DAY = "2026-02-10"


def user_line(text: str, ts: str = "2026-02-10T22:00:00.000Z", session: str = SESSION) -> str:
    record = {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/demo/spotter",
        "sessionId": session,
        "version": "2.1.38",
        "gitBranch": "master",
        "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": str(uuid.uuid4()),
        "timestamp": ts,
    }
    return json.dumps(record)


@pytest.fixture
def project(tmp_path, shared_corpus):
    """One real transcript in a Claude-style projects tree."""
    folder = tmp_path / "home" / ".claude" / "projects" / "-home-demo-spotter"
    folder.mkdir(parents=True)
    target = folder / f"{SESSION}.jsonl"
    shutil.copyfile(shared_corpus / "spotter" / "short.jsonl", target)
    return target


def _lake_texts(pipe, day=DAY) -> list[str]:
    return pl.read_parquet(turns_path(pipe.settings.lake_dir, day))["text"].to_list()


def test_half_a_line_then_the_rest_yields_the_turn_once(project, pipeline_factory):
    pipe = pipeline_factory(str(project.parent.parent / "**" / "*.jsonl"))
    pipe.run([DAY])
    line = user_line("From now on always run mix format before committing any Elixir change.")
    with project.open("a") as fh:
        fh.write(line[:70])
    pipe.run([DAY])
    assert not any("mix format" in t for t in _lake_texts(pipe))
    events_before = pipe.count("SELECT count(*) FROM learning_events")
    with project.open("a") as fh:
        fh.write(line[70:] + "\n")
    pipe.run([DAY])
    assert sum("mix format" in t for t in _lake_texts(pipe)) == 1
    assert pipe.count("SELECT count(*) FROM memories WHERE content LIKE '%mix format%'") == 1
    assert pipe.count("SELECT count(*) FROM learning_events") > events_before
    pipe.run([DAY])  # and again: nothing new
    assert pipe.count("SELECT count(*) FROM memories WHERE content LIKE '%mix format%'") == 1


def test_truncating_and_rewriting_a_file_adds_no_duplicates(project, pipeline_factory):
    pipe = pipeline_factory(str(project.parent.parent / "**" / "*.jsonl"))
    pipe.run([DAY])
    events = pipe.count("SELECT count(*) FROM learning_events")
    turns = len(_lake_texts(pipe))
    original = project.read_bytes()
    project.write_bytes(original[: len(original) // 3])  # truncated (same inode)
    pipe.run([DAY])
    project.write_bytes(original)  # rewritten
    pipe.run([DAY])
    replacement = project.with_suffix(".tmp")
    replacement.write_bytes(original)
    os.replace(replacement, project)  # rotated (new inode)
    pipe.run([DAY])
    assert len(_lake_texts(pipe)) == turns
    assert pipe.count("SELECT count(*) FROM learning_events") == events
    conn = pipe.conn()
    offset = conn.execute("SELECT last_offset FROM ingest_cursors ORDER BY updated_at DESC LIMIT 1").fetchone()[0]
    conn.close()
    assert offset == len(original)


def test_watch_sensor_requests_exactly_the_days_that_gained_lines(project, pipeline_factory):
    pipe = pipeline_factory(str(project.parent.parent / "**" / "*.jsonl"))
    resources = {"nous": pipe.resource()}
    conn = pipe.conn()
    lower_floor(conn, "2026-01-01")  # as `nous backfill --since 2026-01-01` does: the sensor watches from there
    conn.close()
    first = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources=resources))
    assert [r.partition_key for r in first.run_requests] == [DAY]  # new file: its day
    assert first.run_requests[0].tags["nous/source"] == "fs_watch"
    pipe.run([DAY])
    quiet = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources=resources))
    assert quiet.run_requests == []
    # within the scan interval nothing is scanned, unless the Stop hook dropped its wake marker
    recent = str(time.time())
    skipped = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources=resources, cursor=recent))
    assert isinstance(skipped, dg.SkipReason)
    with project.open("a") as fh:
        fh.write(
            user_line("We deploy the spotter app to fly.io with the Dockerfile.", ts="2026-02-12T09:00:00Z") + "\n"
        )
    out = subprocess.run(
        [sys.executable, "-m", "resolver", "stop"],
        input="{}",
        text=True,
        env={**os.environ},
        capture_output=True,
        timeout=30,
    )
    assert out.returncode == 0 and pipe.settings.wake_marker.exists()
    woken = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources=resources, cursor=recent))
    assert [r.partition_key for r in woken.run_requests] == ["2026-02-12"]
    assert not pipe.settings.wake_marker.exists()
    # a half-written line is not new data yet
    pipe.run(["2026-02-12"])
    with project.open("a") as fh:
        fh.write(user_line("half")[:40])
    partial = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources=resources))
    assert partial.run_requests == []


def test_partition_range_backfill_in_one_run(tmp_path, shared_corpus, pipeline_factory):
    projects = tmp_path / "home" / ".claude" / "projects"
    shutil.copytree(shared_corpus / "spotter", projects / "spotter")
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    result = dg.materialize(
        [transcripts, learning_events, memories],
        instance=pipe.instance,
        resources={"nous": pipe.resource()},
        tags={"dagster/asset_partition_range_start": "2026-02-10", "dagster/asset_partition_range_end": "2026-02-12"},
    )
    assert result.success
    assert len(result.asset_materializations_for_node("transcripts")) == 3
    for day in ("2026-02-10", "2026-02-11", "2026-02-12"):
        assert turns_path(pipe.settings.lake_dir, day).exists()
    assert pipe.count("SELECT count(*) FROM memories") > 0
    assert pipe.count("SELECT count(*) FROM ingest_events WHERE status != 'completed'") == 0


def test_killed_backfill_completes_on_rerun_without_loss_or_duplicates(tmp_path, shared_corpus, corpus_pipeline):
    """A backfill killed (SIGKILL) once its extraction has written a first event, then run again: the same
    learnings as a clean run and the same brief. It takes the corpus's days before spotter's (its first ranged run
    is killed; spotter's three days, most of the corpus, would only add a clean run after the rerun): the clean
    reference is corpus_pipeline's store after the same days, with the same files on disk."""
    projects = tmp_path / "home" / ".claude" / "projects"
    shutil.copytree(shared_corpus, projects, ignore=shutil.ignore_patterns("*.md"))
    config = tmp_path / "home" / ".claude" / "nous" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"thresholds": {"queue_lease_seconds": 1, "queue_backoff_base_seconds": 0}}))
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
        "NOUS_DATA_DIR": str(tmp_path / "data"),
        "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl"),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
    }
    env.pop("NOUS_DB_PATH", None)
    last = corpus_pipeline.early_days[-1]
    cmd = [sys.executable, "-m", "nous_assets.cli", "backfill", "--from", "2025-09-01", "--to", last]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    db = tmp_path / "data" / "cortex.db"
    deadline = time.time() + 240
    import sqlite3

    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.2)
        try:
            raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
            n = raw.execute("SELECT count(*) FROM learning_events").fetchone()[0]
            raw.close()
        except sqlite3.Error:
            continue
        if n > 0:
            break
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    time.sleep(1.5)  # let the dead worker's leases expire
    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    raw = sqlite3.connect(db)
    events = raw.execute("SELECT count(*) FROM learning_events").fetchone()[0]
    keys = raw.execute("SELECT count(DISTINCT idempotency_key) FROM learning_events").fetchone()[0]
    not_done = raw.execute("SELECT count(*) FROM ingest_events WHERE status != 'completed'").fetchone()[0]
    learned, brief = raw.execute(LEARNED).fetchone()[0], raw.execute(BRIEF).fetchall()
    raw.close()
    assert not_done == 0 and events == keys and learned > 0
    # the extracted learnings are exactly a clean run's; the brief may pass through other versions on the way
    # (it is mined from the history seen so far) but ends the same
    clean = sqlite3.connect(corpus_pipeline.early_store)
    try:
        assert learned == clean.execute(LEARNED).fetchone()[0] and brief == [tuple(r) for r in clean.execute(BRIEF)]
    finally:
        clean.close()


LEARNED = ("SELECT count(*) FROM learning_events WHERE learning_id NOT IN "
           "(SELECT learning_id FROM memories WHERE slot LIKE 'brief:%')")  # fmt: skip
BRIEF = ("SELECT slot, content FROM memories WHERE slot LIKE 'brief:%' AND valid_until IS NULL "
         "AND superseded_by IS NULL ORDER BY slot")  # fmt: skip


def test_malformed_lines_are_quarantined_with_offsets_and_the_rest_processed(project, pipeline_factory):
    original = project.read_bytes().splitlines(keepends=True)
    garbage = [b'{"type": "user", "message": \n', b"\xff\xfe not utf-8 at all\n", b"[1, 2, 3]\n"]
    corrupted = original[:3] + garbage[:1] + original[3:6] + garbage[1:] + original[6:]
    project.write_bytes(b"".join(corrupted))
    pipe = pipeline_factory(str(project.parent.parent / "**" / "*.jsonl"))
    pipe.run([DAY])
    q = pl.read_parquet(pipe.settings.lake_dir / "quarantine" / f"date={DAY}" / "quarantine.parquet")
    assert q.height == 3
    data = project.read_bytes()
    for offset, reason in q.select("byte_offset", "reason").iter_rows():
        assert reason and data[offset:].split(b"\n", 1)[0] + b"\n" in garbage
    assert len(_lake_texts(pipe)) > 0  # every good line still became a turn

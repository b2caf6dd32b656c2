"""Nothing lost, on real Dagster runs over real files: out-of-order days, rotation and truncation,
and a database that vanishes before or during a backfill."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import dagster as dg
import pytest

from nous_assets.capture.lake import read_turns
from nous_assets.capture.parser import parse_file
from nous_assets.capture.scan import plan_new_data
from nous_assets.defs.assets.capture import learning_events, transcripts
from nous_assets.defs.backfill import run_days
from nous_assets.defs.sensors import reconcile_days, transcript_watch
from nous_assets.store.ingest.floor import lower_floor

pytestmark = pytest.mark.slow

SPOTTER = "55604662-cf2a-4331-851a-ec234028f8ca"  # spotter/short.jsonl, all on 2026-02-10


def capture(pipe, day: str) -> dict:
    """One real Dagster run of the capture assets for ``day`` (lake + events + cursor promotion);
    returns the transcripts asset's metadata."""
    result = dg.materialize(
        [transcripts, learning_events],
        partition_key=day,
        instance=pipe.instance,
        resources={"nous": pipe.resource()},
        raise_on_error=False,
    )
    assert result.success, [e.message for e in result.all_events if e.is_failure]
    (mat,) = result.asset_materializations_for_node("transcripts")
    return {k: v.value for k, v in mat.metadata.items()}


def lake_uuids(pipe, *days: str) -> list[str]:
    return [t.uuid for day in days for t in read_turns(pipe.settings.lake_dir, day)]


def cursor_offset(pipe, path: Path) -> int | None:
    conn = pipe.conn()
    try:
        row = conn.execute(
            "SELECT last_offset FROM ingest_cursors WHERE transcript_path = ? ORDER BY updated_at DESC LIMIT 1",
            (str(path),),
        ).fetchone()
    finally:
        conn.close()
    return None if row is None else row[0]


def planned(pipe) -> dict[str, list[str]]:
    conn = pipe.conn()
    try:
        return plan_new_data(pipe.settings, conn).dates
    finally:
        conn.close()


def line(text: str, ts: str, session: str = SPOTTER) -> bytes:
    rec = {
        "type": "user",
        "uuid": str(uuid.uuid4()),
        "parentUuid": None,
        "sessionId": session,
        "cwd": "/home/demo/spotter",
        "timestamp": ts,
        "message": {"role": "user", "content": text},
    }
    return json.dumps(rec).encode() + b"\n"


@pytest.fixture
def projects(tmp_path) -> Path:
    folder = tmp_path / "home" / ".claude" / "projects"
    folder.mkdir(parents=True)
    return folder


def test_out_of_order_days_are_ingested_fully_and_the_cursor_promoted(shared_corpus, projects, pipeline_factory):
    """large-conversation.jsonl has five turns dated the day before its first line, between later lines."""
    target = projects / "-home-demo-episodic" / "large-conversation.jsonl"
    target.parent.mkdir()
    shutil.copyfile(shared_corpus / "episodic-memory" / "large-conversation.jsonl", target)
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    expected = parse_file(target, "p").turns
    days = [(t.timestamp or "2025-09-20")[:10] for t in expected]  # undated summaries: the file's first day
    assert days.count("2025-09-19") == 5 and days.count("2025-09-20") == len(expected) - 5

    assert pipe.days() == ["2025-09-19", "2025-09-20"]  # backfill candidates: every day, not head..tail
    conn = pipe.conn()
    lower_floor(conn, "2025-09-01")  # as `nous backfill --since 2025-09-01` does: the sensor watches from there
    conn.close()
    sensor = transcript_watch(dg.build_sensor_context(instance=pipe.instance, resources={"nous": pipe.resource()}))
    requested = [r.partition_key for r in sensor.run_requests]
    assert requested == ["2025-09-19", "2025-09-20"]

    capture(pipe, requested[1])
    assert cursor_offset(pipe, target) is None  # the earlier day has not been read yet: no promotion
    assert list(planned(pipe)) == ["2025-09-19", "2025-09-20"]
    capture(pipe, requested[0])

    assert sorted(lake_uuids(pipe, *requested)) == sorted(t.uuid for t in expected)  # every turn reached the lake
    assert len(lake_uuids(pipe, "2025-09-19")) == 5
    assert cursor_offset(pipe, target) == target.stat().st_size
    assert planned(pipe) == {}  # a re-plan requests nothing ...
    assert reconcile_days(pipe.resource()) == []  # ... and the hourly reconcile stops re-running days


def test_rotation_and_truncation_keep_earlier_turns_in_the_lake(shared_corpus, projects, pipeline_factory):
    day = "2026-02-10"
    target = projects / "-home-demo-spotter" / f"{SPOTTER}.jsonl"
    target.parent.mkdir()
    shutil.copyfile(shared_corpus / "spotter" / "short.jsonl", target)
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    capture(pipe, day)
    original = lake_uuids(pipe, day)
    events = pipe.count("SELECT count(*) FROM learning_events")
    assert len(original) >= 5
    lines = target.read_bytes().splitlines(keepends=True)

    rotated = target.with_suffix(".new")
    rotated.write_bytes(b"".join(lines[len(lines) // 2 :]) + line("rotated in: pin node", f"{day}T23:00:00Z"))
    os.replace(rotated, target)  # rotation: a new inode holding only the later half plus a new line
    capture(pipe, day)
    after_rotation = lake_uuids(pipe, day)
    assert after_rotation[: len(original)] == original and len(after_rotation) == len(original) + 1
    assert cursor_offset(pipe, target) == target.stat().st_size

    with target.open("r+b") as fh:  # truncation: same inode, cut to its first line, then a new line
        fh.truncate(len(target.read_bytes().splitlines(keepends=True)[0]))
    with target.open("ab") as fh:
        fh.write(line("after truncation: use pnpm, not npm", f"{day}T23:30:00Z"))
    capture(pipe, day)
    after_truncation = lake_uuids(pipe, day)
    assert after_truncation[: len(after_rotation)] == after_rotation
    assert len(after_truncation) == len(after_rotation) + 1
    assert any("use pnpm" in t.text for t in read_turns(pipe.settings.lake_dir, day))
    assert cursor_offset(pipe, target) == target.stat().st_size
    assert pipe.count("SELECT count(*) FROM learning_events") >= events  # the events were never at risk

    capture(pipe, day)  # re-running changes nothing
    assert lake_uuids(pipe, day) == after_truncation
    assert planned(pipe) == {}


def test_a_truncated_file_cannot_skip_new_lines_of_another_day(projects, pipeline_factory):
    """Completions recorded for the old bytes of day 2 must not let a day-1 run move the cursor past new
    day-2 lines written after a truncation (same inode)."""
    target = projects / "-home-demo-x" / "s1.jsonl"
    target.parent.mkdir()
    day1 = b"".join(line(f"day one {i}", f"2026-03-01T10:0{i}:00Z", "s1") for i in range(3))
    day2 = b"".join(line(f"day two {i}", f"2026-03-02T10:0{i}:00Z", "s1") for i in range(3))
    target.write_bytes(day1 + day2)
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    capture(pipe, "2026-03-01")
    capture(pipe, "2026-03-02")
    assert cursor_offset(pipe, target) == len(day1 + day2)

    with target.open("r+b") as fh:
        fh.truncate(len(day1) - 10)  # cut inside day 1's last line ...
    with target.open("ab") as fh:
        fh.write(b"\n" + line("day two, written after the truncation", "2026-03-02T12:00:00Z", "s1"))
    assert sorted(planned(pipe)) == ["2026-03-01", "2026-03-02"]
    capture(pipe, "2026-03-01")
    assert cursor_offset(pipe, target) == 0  # rewound, and held until day 2 has read the new line
    assert "2026-03-02" in planned(pipe)
    capture(pipe, "2026-03-02")
    assert any("after the truncation" in t.text for t in read_turns(pipe.settings.lake_dir, "2026-03-02"))
    assert len(read_turns(pipe.settings.lake_dir, "2026-03-02")) == 4  # the three old day-2 turns are kept
    assert cursor_offset(pipe, target) == target.stat().st_size
    assert planned(pipe) == {}


def test_loops_and_repaired_lines_are_reported_in_the_asset_metadata(projects, pipeline_factory):
    target = projects / "-home-demo-x" / "s1.jsonl"
    target.parent.mkdir()
    latin1 = line("deploy to the caf\u00e9 box", "2026-03-01T10:01:00Z", "s1").decode().replace("\\u00e9", "\u00e9")
    target.write_bytes(line("hello", "2026-03-01T10:00:00Z", "s1") + latin1.encode("latin-1"))
    (projects / "a").symlink_to(".")
    (projects / "b").symlink_to("..")
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    meta = capture(pipe, "2026-03-01")
    assert meta["symlink_loops_skipped"] == 2 and meta["turns"] == 2 and meta["quarantined"] == 0
    assert meta["lines_with_replaced_bytes"] == 1
    texts = [t.text for t in read_turns(pipe.settings.lake_dir, "2026-03-01")]
    assert texts == ["hello", "deploy to the caf\ufffd box"]


# -- a database that vanishes -------------------------------------------------------------------
@pytest.fixture
def spotter_pipe(shared_corpus, projects, pipeline_factory):
    shutil.copytree(shared_corpus / "spotter", projects / "spotter")
    return pipeline_factory(str(projects / "**" / "*.jsonl"))


def test_backfill_fails_with_the_reason_when_the_database_vanished_between_days(spotter_pipe):
    pipe = spotter_pipe
    capture(pipe, "2026-02-10")  # the first day's run
    db = pipe.settings.db_path
    for path in db.parent.glob(db.name + "*"):
        path.unlink()
    later = run_days(["2026-02-11", "2026-02-12"], resource=pipe.resource(), instance=pipe.instance)
    assert [r.success for r in later] == [False, False]
    assert all("cortex.db is missing" in r.error and "deleted or moved" in r.error for r in later), later
    assert not db.exists()  # no fresh, empty database was created behind the user's back


class _DeletingLLM(BaseHTTPRequestHandler):
    """An OpenAI-compatible endpoint that deletes cortex.db when the first extraction call arrives."""

    protocol_version = "HTTP/1.1"

    def log_message(self, format, *args):  # noqa: A002 - stdlib signature
        pass

    def do_POST(self):  # noqa: N802 - stdlib name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        db: Path = self.server.state["db"]
        for path in db.parent.glob(db.name + "*"):
            path.unlink(missing_ok=True)
        self.server.state["calls"] += 1
        body = json.dumps(
            {
                "id": "c1",
                "object": "chat.completion",
                "created": 1770000000,
                "model": "test",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": '{"learnings": []}'},
                        "finish_reason": "stop",
                    }
                ],
            }
        ).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def test_backfill_fails_with_the_reason_when_the_database_is_deleted_mid_run(
    spotter_pipe, local_http_server, monkeypatch
):
    pipe = spotter_pipe
    state = {"db": pipe.settings.db_path, "calls": 0}
    port = local_http_server(_DeletingLLM, state)
    for key in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "OPENAI_BASE_URL"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("NOUS_EXTRACTOR", "openai")
    monkeypatch.setenv("NOUS_OPENAI_BASE_URL", f"http://127.0.0.1:{port}/v1")
    monkeypatch.setenv("NOUS_OPENAI_API_KEY", "test")
    results = run_days(["2026-02-10", "2026-02-11"], resource=pipe.resource(), instance=pipe.instance)
    assert state["calls"] >= 1  # the database really went away while extraction was running
    assert [r.success for r in results] == [False, False]
    assert "was deleted while this run was using it" in results[0].error
    assert "cortex.db is missing" in results[1].error
    assert not pipe.settings.db_path.exists()


def test_cli_backfill_reports_loops_then_exits_non_zero_when_the_database_vanished(shared_corpus, tmp_path):
    projects = tmp_path / "home" / ".claude" / "projects"
    target = projects / "-home-demo-spotter" / f"{SPOTTER}.jsonl"
    target.parent.mkdir(parents=True)
    shutil.copyfile(shared_corpus / "spotter" / "short.jsonl", target)
    (projects / "a").symlink_to(".")
    (projects / "b").symlink_to("..")
    env = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
        "NOUS_DATA_DIR": str(tmp_path / "data"),
        "DAGSTER_HOME": str(tmp_path / "dagster"),
    }
    for key in ("NOUS_DB_PATH", "NOUS_PROJECT_GLOB", "NOUS_CONFIG_FILE", "NOUS_EXTRACTOR", "XDG_DATA_HOME"):
        env.pop(key, None)
    cmd = [sys.executable, "-m", "nous_assets.cli", "backfill", "--from", "2026-02-01", "--to", "2026-02-28"]
    first = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    assert "nous: warning: transcript discovery" in first.stderr and "2 symlink loop(s) not followed" in first.stderr
    db = tmp_path / "data" / "cortex.db"
    assert db.exists()
    for path in db.parent.glob("cortex.db*"):
        path.unlink()
    second = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert second.returncode != 0
    assert "cortex.db is missing" in second.stderr and "deleted or moved" in second.stderr
    assert not db.exists()


def test_backfill_fails_with_the_reason_when_the_database_stays_locked(spotter_pipe, monkeypatch):
    pipe = spotter_pipe
    monkeypatch.setenv("NOUS_DB_BUSY_TIMEOUT_MS", "200")
    pipe.conn().close()  # create cortex.db
    # another process's writer that does not let go (POSIX locks do not separate connections of one process)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, str(pipe.settings.db_path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )
    try:
        assert holder.stdout.readline().strip() == b"locked"
        (result,) = run_days(["2026-02-10"], resource=pipe.resource(), instance=pipe.instance)
    finally:
        holder.communicate(b"", timeout=30)
    assert not result.success
    assert "locked by another process" in result.error and "NOUS_DB_BUSY_TIMEOUT_MS" in result.error
    capture(pipe, "2026-02-10")  # once the lock is gone the same day goes through
    assert lake_uuids(pipe, "2026-02-10")


HOLD_LOCK = """
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("BEGIN IMMEDIATE")
print("locked", flush=True)
sys.stdin.read()
conn.execute("ROLLBACK")
"""

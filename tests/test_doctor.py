"""``nous doctor`` on real files: Claude Code settings, cortex.db, a Dagster instance, the resolver's log."""

from __future__ import annotations

import json
import os
import sqlite3
import sys
import time
from pathlib import Path

import pytest

from nous_assets import doctor
from nous_assets.cli import main
from nous_assets.hooks import default_settings_path, install_hooks, resolver_command
from nous_assets.retrieve.cache_build import build_cache
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite import queue
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

# ##### FIXTURES


def learn(conn, lid: str, content: str, project_id: str = "-home-dev-app") -> None:
    SqliteEventStore(conn).append(LearningEvent("LearningExtracted", lid, {
        "content": content, "extractor_version": "t", "concepts": ["pytest"], "edges": [], "kind": "preference"},
        "s1", project_id, "historical_backfill", f"k-{lid}"))  # fmt: skip
    project(conn)


def enqueue(conn, source: str, key: str):
    return queue.enqueue(conn, source=source, project_id="-home-dev-app", session_id="s1",
                         transcript_path="/t/s1.jsonl", file_inode=None, file_offset=0, payload={},
                         idempotency_key=key)  # fmt: skip


def heartbeat(home: Path, age_s: float) -> None:
    """A sensor-daemon heartbeat written through Dagster's own instance API (what `dagster-daemon` does)."""
    import dagster as dg
    from dagster._daemon.types import DaemonHeartbeat

    with dg.DagsterInstance.from_config(str(home)) as instance:
        instance.add_daemon_heartbeat(DaemonHeartbeat(time.time() - age_s, "SENSOR", "test-daemon", None))


@pytest.fixture
def healthy(nous_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    """An initialised store with one memory, its packet, one completed ingest item, hooks, a live daemon."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    assert main(["init"]) == 0
    settings = load_settings()
    conn = open_db(settings.db_path)
    try:
        learn(conn, "a", "Always run pytest with -x in this app")
        build_cache(conn, settings, lake_dir=tmp_path / "no-lake")
        item, _ = enqueue(conn, "historical_backfill", "key-1")
        queue.claim(conn, "w")
        assert queue.complete(conn, item.ingest_id, "w")
    finally:
        conn.close()
    assert main(["hooks", "install"]) == 0
    home = settings.data_dir / "dagster"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    heartbeat(home, age_s=5)
    capsys.readouterr()
    return settings


def checks(fix: bool = False) -> dict[str, doctor.Check]:
    ctx = doctor.make_context(load_settings(), os.environ, fix=fix)
    return {c.name: c for c in doctor.run_checks(ctx)}


# ##### THE WHOLE CHAIN


def test_a_healthy_install_is_all_ok_and_exits_0(healthy, capsys) -> None:
    assert main(["doctor"]) == 0
    text = capsys.readouterr().out
    assert "FAIL" not in text and "WARN" not in text
    assert main(["doctor", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    names = ["hooks", "data dir", "database", "injection cache", "last ingest", "pipeline daemon", "resolver log",
             "auto-memory", "transcripts kept"]
    assert [c["name"] for c in report["checks"]] == names
    assert {c["status"] for c in report["checks"]} == {"OK"}


def test_missing_hooks_fail_with_the_fix_and_exit_1(healthy, capsys) -> None:
    assert main(["hooks", "uninstall"]) == 0
    capsys.readouterr()
    assert main(["doctor"]) == 1
    out = capsys.readouterr().out
    assert out.startswith("FAIL  hooks") and "nous hooks install" in out
    assert json.loads(_json_doctor(capsys))["checks"][0]["status"] == "FAIL"


def _json_doctor(capsys) -> str:
    main(["doctor", "--json"])
    return capsys.readouterr().out


# ##### HOOKS


def test_hooks_recording_another_data_dir_fail(healthy, tmp_path: Path) -> None:
    path = default_settings_path(healthy)
    install_hooks(path, sys.executable, data_dir=tmp_path / "elsewhere")
    check = checks()["hooks"]
    assert check.status == "FAIL" and str(tmp_path / "elsewhere" / "cortex.db") in check.message


def test_hooks_recording_nothing_fail_when_this_data_dir_is_not_the_default(healthy) -> None:
    path = default_settings_path(healthy)
    data = json.loads(path.read_text())
    for groups in data["hooks"].values():
        for group in groups:
            for entry in group["hooks"]:
                entry["command"] = entry["command"].split(" --data-dir")[0]  # as installed by an older version
    path.write_text(json.dumps(data))
    check = checks()["hooks"]
    assert check.status == "FAIL" and "records no data dir" in check.message and "NOUS_DATA_DIR" in check.message


@pytest.mark.parametrize(
    ("python", "expected"),
    [("/nonexistent/venv/bin/python", "does not exist"), ("/bin/sh", "cannot run the resolver")],
    ids=["gone", "not-a-python-with-nous"],
)
def test_hooks_with_a_broken_interpreter_fail(healthy, python: str, expected: str) -> None:
    install_hooks(default_settings_path(healthy), python, data_dir=healthy.data_dir)
    check = checks()["hooks"]
    assert check.status == "FAIL" and expected in check.message


def test_old_matcher_and_a_second_install_in_the_project_warn(healthy, tmp_path: Path) -> None:
    path = default_settings_path(healthy)
    data = json.loads(path.read_text())
    data["hooks"]["SessionStart"][0]["matcher"] = "startup|resume|clear|compact"
    path.write_text(json.dumps(data))
    install_hooks(tmp_path / ".claude" / "settings.json", sys.executable, data_dir=healthy.data_dir)  # cwd's project
    check = checks()["hooks"]
    assert check.status == "WARN"
    assert "skips fork" in check.message and "runs twice" in check.message


# ##### FILES


def test_loose_modes_warn_and_fix_makes_them_private(healthy) -> None:
    os.chmod(healthy.data_dir, 0o755)
    os.chmod(healthy.db_path, 0o644)
    check = checks()["data dir"]
    assert check.status == "WARN" and "readable by other users" in check.message and "--fix" in check.fix
    fixed = checks(fix=True)["data dir"]
    assert fixed.status == "OK" and "private" in fixed.message
    assert os.stat(healthy.data_dir).st_mode & 0o777 == 0o700 and os.stat(healthy.db_path).st_mode & 0o777 == 0o600


def test_missing_data_dir_and_database_fail(nous_env: dict[str, str], monkeypatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    found = checks()
    assert found["data dir"].status == "FAIL" and "nous init" in found["data dir"].fix
    assert found["database"].status == "FAIL" and found["injection cache"].status == "FAIL"


def test_an_older_schema_fails_with_the_upgrade_command(healthy) -> None:
    raw = sqlite3.connect(healthy.db_path)
    raw.execute("PRAGMA user_version = 1")
    raw.close()
    check = checks()["database"]
    assert check.status == "FAIL" and "schema version 1" in check.message and "nous init" in check.fix


# ##### PIPELINE OUTPUT


def test_memories_newer_than_their_packets_make_the_cache_stale(healthy) -> None:
    conn = open_db(healthy.db_path)
    try:
        learn(conn, "b", "Prefer ruff over flake8")
    finally:
        conn.close()
    check = checks()["injection cache"]
    assert check.status == "WARN" and "-home-dev-app" in check.message and "make run" in check.fix


def test_memories_without_any_packet_fail(healthy) -> None:
    conn = open_db(healthy.db_path)
    try:
        conn.execute("DELETE FROM injection_cache")
    finally:
        conn.close()
    check = checks()["injection cache"]
    assert check.status == "FAIL" and "no packet" in check.message


def test_last_ingest_reports_the_time_and_failing_items(healthy) -> None:
    check = checks()["last ingest"]
    assert check.status == "OK" and "ago" in check.message
    conn = open_db(healthy.db_path)
    try:
        item, _ = enqueue(conn, "fs_watch", "key-2")
        queue.claim(conn, "w")
        queue.fail(conn, item.ingest_id, "w", "extractor crashed", max_attempts=1)
    finally:
        conn.close()
    check = checks()["last ingest"]
    assert check.status == "WARN" and "1 dead-lettered" in check.message and "nous queue" in check.fix


# ##### DAEMON AND LOG


def test_daemon_heartbeat_decides_whether_the_sensor_runs(healthy) -> None:
    home = healthy.data_dir / "dagster"
    assert checks()["pipeline daemon"].status == "OK"
    from dagster import DagsterInstance

    with DagsterInstance.from_config(str(home)) as instance:
        instance.wipe_daemon_heartbeats()
    heartbeat(home, age_s=doctor.HEARTBEAT_FRESH_S + 60)
    stale = checks()["pipeline daemon"]
    assert stale.status == "WARN" and "not running" in stale.message and "make run" in stale.fix


def test_no_dagster_instance_warns(healthy) -> None:
    import shutil

    shutil.rmtree(healthy.data_dir / "dagster")
    check = checks()["pipeline daemon"]
    assert check.status == "WARN" and "no Dagster instance" in check.message
    assert not (healthy.data_dir / "dagster").exists()  # the doctor does not create one


def test_recent_resolver_failures_warn_old_ones_do_not(healthy) -> None:
    log = healthy.data_dir / "logs" / "resolver.log"
    log.parent.mkdir()
    old = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() - 3 * 86_400))
    log.write_text(f"{old} session-start pid=1 FileNotFoundError: /x/cortex.db; failed open, nothing injected\n")
    assert checks()["resolver log"].status == "OK"
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    with log.open("a") as fh:
        fh.write(f"{now} session-start pid=2 timed out after 450 ms; failed open, nothing injected\n")
    check = checks()["resolver log"]
    assert check.status == "WARN" and check.message.startswith("1 hook failure") and "timed out" in check.message


def test_resolver_command_used_by_the_doctor_is_the_installed_one(healthy) -> None:
    """The doctor's idea of 'our hook' is the command `nous hooks install` writes (same parser both ways)."""
    command = resolver_command(sys.executable, "session-start", data_dir=healthy.data_dir, db_path=healthy.db_path)
    installed = json.loads(default_settings_path(healthy).read_text())["hooks"]["SessionStart"][0]["hooks"][0]
    assert installed["command"] == command


# ##### BESIDE CLAUDE CODE: AUTO-MEMORY AND TRANSCRIPT CLEANUP


def test_auto_memory_status_and_its_load_cap_are_reported(healthy, tmp_path: Path, monkeypatch) -> None:
    from nous_assets.capture.native_memory import slug

    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    memory = healthy.claude_config_dir / "projects" / slug(str(tmp_path.resolve())) / "memory"
    assert checks()["auto-memory"].status == doctor.OK and "no MEMORY.md yet" in checks()["auto-memory"].message
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(250)))
    (memory / "testing.md").write_text("Never mock the database.\n")
    check = checks()["auto-memory"]
    assert check.status == doctor.WARN and "250 lines" in check.message and str(memory) in check.message
    assert "1 topic file" in check.message and "--target memory" in check.fix
    monkeypatch.setenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", "1")
    check = checks()["auto-memory"]
    assert check.status == doctor.OK and "off: CLAUDE_CODE_DISABLE_AUTO_MEMORY=1" in check.message


def test_transcripts_that_vanished_unread_warn_with_cleanup_period(healthy, tmp_path: Path) -> None:
    from nous_assets.store.ingest import cursors

    check = checks()["transcripts kept"]
    assert check.status == doctor.OK and "cleanupPeriodDays 30 (Claude Code's default)" in check.message
    config = healthy.claude_config_dir
    (config / "settings.json").write_text(json.dumps({**json.loads((config / "settings.json").read_text()),
                                                      "cleanupPeriodDays": 7}))  # fmt: skip
    kept, read, gone = tmp_path / "kept.jsonl", tmp_path / "read.jsonl", tmp_path / "gone.jsonl"
    kept.write_text("{}\n")
    conn = open_db(healthy.db_path)
    try:
        cursors.set_cursor(conn, kept, "1:1", 0, None)  # still on disk: nothing lost
        cursors.set_cursor(conn, read, "1:2", 120, None)  # read, then deleted: nothing lost
        cursors.set_cursor(conn, gone, "1:3", 0, None)  # seen, never read, deleted
    finally:
        conn.close()
    folder = config / "projects" / "-home-dev-app"
    folder.mkdir(parents=True)
    listed = str(folder / "0b1c2d3e-0000-4000-8000-000000000009.jsonl")  # listed by Claude Code, never seen
    (folder / "sessions-index.json").write_text(json.dumps({"version": 1, "entries": [
        {"sessionId": "x", "fullPath": listed}, {"sessionId": "y", "fullPath": str(kept)}]}))  # fmt: skip
    check = checks()["transcripts kept"]
    assert check.status == doctor.WARN and "cleanupPeriodDays 7" in check.message
    assert "2 transcript(s) vanished before Nous read them" in check.message and "gone.jsonl" in check.message
    assert "read.jsonl" not in check.message and "cleanupPeriodDays" in check.fix

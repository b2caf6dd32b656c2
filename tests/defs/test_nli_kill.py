"""Kill -9 during the nli_results asset, then run it again: the same events, labels and projection as a
clean run, and ``nous replay --verify`` agrees. Each batch of labels and its events is one transaction."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nous_assets.cli import main
from nous_assets.store.db import open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

SERVICES = 1000
RUNNER = """
import dagster as dg
from nous_assets.defs.assets.reconciliation import nli_results_asset
from nous_assets.defs.resources import NousResource
result = dg.materialize([nli_results_asset], partition_key="2026-01-05", resources={"nous": NousResource()},
                        instance=dg.DagsterInstance.ephemeral())
raise SystemExit(0 if result.success else 1)
"""


def seed(data_dir: Path) -> None:
    """Memories of many services, each stating its port three times with other values in other sessions."""
    data_dir.mkdir(parents=True)
    conn = open_db(data_dir / "cortex.db", create=True)
    events = []
    for s in range(SERVICES):
        for v, port in enumerate((7000 + s, 8000 + s, 9000 + s)):
            lid = f"svc{s}-v{v}"
            payload = {"content": f"The svc{s} worker listens on port {port}.", "extractor_version": "t-1",
                       "concepts": [f"svc{s}", "port"], "edges": []}  # fmt: skip
            events.append(LearningEvent("LearningExtracted", lid, payload, f"sess-{s}-{v}", "proj", "fs_watch",
                                        f"k-{lid}", valid_from=f"2026-01-0{1 + v}T00:00:00Z",
                                        vector_clock={f"sess-{s}-{v}": 1}))  # fmt: skip
    SqliteEventStore(conn).append_many(events)
    project(conn)
    conn.close()


def env_for(root: Path) -> dict[str, str]:
    config = root / "config.json"
    config.write_text(json.dumps({"nli": {"batch_size": 1}}))  # one transaction per pair: many places to die
    env = {**os.environ, "HOME": str(root), "NOUS_DATA_DIR": str(root / "data"), "NOUS_CONFIG_FILE": str(config),
           "NOUS_PROJECT_GLOB": str(root / "none" / "*.jsonl")}  # fmt: skip
    for key in ("NOUS_DB_PATH", "NOUS_NLI_CLASSIFIER", "DAGSTER_HOME"):
        env.pop(key, None)
    return env


def point_here(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """This process's environment as :func:`env_for` gives a subprocess's (runs here need no process start-up)."""
    env = env_for(root)
    for key in ("NOUS_DB_PATH", "NOUS_NLI_CLASSIFIER", "DAGSTER_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key in ("HOME", "NOUS_DATA_DIR", "NOUS_CONFIG_FILE", "NOUS_PROJECT_GLOB"):
        monkeypatch.setenv(key, env[key])


def counts(db: Path) -> dict[str, int]:
    raw = sqlite3.connect(db)
    try:
        return {
            "events": raw.execute("SELECT count(*) FROM learning_events").fetchone()[0],
            "keys": raw.execute("SELECT count(DISTINCT idempotency_key) FROM learning_events").fetchone()[0],
            "superseded": raw.execute(
                "SELECT count(*) FROM learning_events WHERE event_type = 'LearningSuperseded'"
            ).fetchone()[0],
            "labels": raw.execute("SELECT count(*) FROM nli_results").fetchone()[0],
        }
    finally:
        raw.close()


def labelled(db: Path) -> int:
    try:
        raw = sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=1)
        try:
            return raw.execute("SELECT count(*) FROM nli_results").fetchone()[0]
        finally:
            raw.close()
    except sqlite3.Error:
        return 0


def test_killed_nli_results_run_completes_on_rerun_like_a_clean_run(tmp_path, monkeypatch, capsys):
    clean, killed = tmp_path / "clean", tmp_path / "killed"
    seed(clean / "data")
    shutil.copytree(clean, killed)
    run = [sys.executable, "-c", RUNNER]

    point_here(clean, monkeypatch)  # the clean run is the runner's same code, in this process
    with pytest.raises(SystemExit) as done:
        exec(RUNNER, {})
    assert done.value.code == 0
    expected = counts(clean / "data" / "cortex.db")
    assert expected["labels"] == 3 * SERVICES and expected["superseded"] == 3 * SERVICES

    proc = subprocess.Popen(run, env=env_for(killed), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    db = killed / "data" / "cortex.db"
    deadline = time.time() + 300
    while time.time() < deadline and proc.poll() is None and labelled(db) < SERVICES // 2:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed mid-way"
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)
    partial = counts(db)
    assert 0 < partial["labels"] < expected["labels"]
    assert partial["superseded"] <= partial["labels"]  # never an event without its label: one transaction

    rerun = subprocess.run(run, env=env_for(killed), capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert counts(db) == expected
    for root in (clean, killed):  # `nous replay --verify`, in this process
        point_here(root, monkeypatch)
        capsys.readouterr()
        status = main(["replay", "--verify"])
        out = capsys.readouterr()
        assert status == 0 and "OK" in out.out, out.out + out.err

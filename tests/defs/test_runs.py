"""Run bookkeeping and the instance config: which days a run covers, how history splits into runs, dead
run processes, and the repo's dagster.yaml as the instance's configuration."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagster as dg

from nous_assets.defs.assets.retrieval import EMBED_POOL, embeddings
from nous_assets.defs.backfill import stretches
from nous_assets.defs.instance import REPO_DAGSTER_YAML, ensure_dagster_home
from nous_assets.defs.runs import covered_days, range_tags, worker_alive, worker_id
from nous_assets.settings import load_settings


def test_a_run_covers_its_partition_or_its_range():
    assert covered_days({"dagster/partition": "2026-02-11"}) == ["2026-02-11"]
    assert covered_days(range_tags("2026-02-27", "2026-03-02")) == [
        "2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"
    ]
    assert covered_days({"nous/source": "fs_watch"}) == []


def test_history_splits_into_runs_only_at_long_gaps():
    week = [f"2026-03-0{d}" for d in range(1, 8)]
    assert stretches(week) == [("2026-03-01", "2026-03-07")]
    weekdays = ["2026-03-05", "2026-03-06", "2026-03-09", "2026-03-10"]  # a weekend in between
    assert stretches(weekdays) == [("2026-03-05", "2026-03-10")]
    assert stretches(["2025-09-19", "2025-09-20", "2025-10-08", "2026-01-02", "2026-01-05"]) == [
        ("2025-09-19", "2025-09-20"), ("2025-10-08", "2025-10-08"), ("2026-01-02", "2026-01-05")
    ]
    assert stretches([]) == []


def test_a_dead_process_is_told_from_a_live_one():
    assert worker_alive(worker_id())
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    host = worker_id().rsplit(":", 2)[0]
    assert not worker_alive(f"{host}:{gone.stdout.strip()}:")
    assert not worker_alive(f"{worker_id().rsplit(':', 1)[0]}:1")  # this pid, but another start time
    assert worker_alive(f"another-host:{gone.stdout.strip()}:")  # cannot tell: assume alive
    assert worker_alive("garbage")


def test_the_instance_config_is_the_repos(nous_env, monkeypatch, tmp_path: Path):
    home = tmp_path / "dg"
    home.mkdir()
    (home / "dagster.yaml").write_text("telemetry:\n  enabled: true\n")  # user-edited or an older repo version
    monkeypatch.setenv("DAGSTER_HOME", str(home))
    path, backup = ensure_dagster_home(load_settings())
    assert path == home and (home / "dagster.yaml").read_bytes() == REPO_DAGSTER_YAML.read_bytes()
    assert backup is not None and backup.read_text() == "telemetry:\n  enabled: true\n"
    assert ensure_dagster_home(load_settings()) == (home, None)  # unchanged: nothing rewritten or backed up
    with dg.DagsterInstance.get() as instance:
        assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
        config = instance.get_concurrency_config()
        assert config.run_queue_config.max_concurrent_runs == 1
        assert config.run_queue_config.tag_concurrency_limits == [
            {"key": "dagster/partition", "value": {"applyLimitPerUniqueValue": True}, "limit": 1}
        ]
        assert config.pool_config.default_pool_limit == 1
        assert instance.run_monitoring_enabled and instance.run_monitoring_start_timeout_seconds == 180
    assert embeddings.op.pool == EMBED_POOL  # one embedding step at a time across runs


def test_default_home_is_in_the_data_dir(nous_env, monkeypatch):
    monkeypatch.delenv("DAGSTER_HOME", raising=False)
    home, _ = ensure_dagster_home(load_settings())
    assert home == Path(nous_env["NOUS_DATA_DIR"]) / "dagster" and (home / "dagster.yaml").exists()

"""The first transcript day recorded in the data dir, and the daily partitions that start on it."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime
from pathlib import Path

from nous_assets.capture import first_day

FLOOR = "2020-01-01"


def test_the_day_only_moves_back_and_reads_safely(tmp_path: Path):
    data = tmp_path / "data"
    env = {"NOUS_DATA_DIR": str(data)}
    assert first_day.recorded(FLOOR, env) == FLOOR  # nothing recorded: every day is covered
    assert first_day.record(data, date(2026, 3, 4)) == "2026-03-04"
    assert first_day.record(data, date(2026, 5, 1)) == "2026-03-04"  # transcripts deleted later: kept
    assert first_day.record(data, date(2025, 12, 31)) == "2025-12-31"  # older ones appeared: lowered
    assert first_day.recorded(FLOOR, env) == "2025-12-31"
    assert first_day.recorded("2026-01-01", env) == "2026-01-01"  # never before the floor
    assert first_day.recorded(FLOOR, {**env, "NOUS_FIRST_DAY": "2024-02-02"}) == "2024-02-02"
    assert first_day.recorded(FLOOR, {**env, "NOUS_FIRST_DAY": "soon"}) == "2025-12-31"
    (data / "first_day").write_text("not a date")
    assert first_day.recorded(FLOOR, env) == FLOOR
    assert first_day.record(data, date(2026, 1, 2)) == "2026-01-02"  # a damaged file is replaced
    assert not list(data.glob(".first_day.*"))  # no temporary file left behind
    assert first_day.recorded(FLOOR, {"NOUS_DATA_DIR": str(tmp_path / "missing" / "x")}) == FLOOR


def _partitions(env: dict[str, str]) -> list[str]:
    code = ("from nous_assets.defs.partitions import daily; keys = daily.get_partition_keys(); "
            "print(keys[0], len(keys))")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.split()


def test_the_partitions_start_on_the_recorded_day_when_the_graph_loads(tmp_path: Path):
    data = tmp_path / "data"
    env = {k: v for k, v in os.environ.items() if k not in ("NOUS_FIRST_DAY", "XDG_DATA_HOME")}
    env.update(NOUS_DATA_DIR=str(data), HOME=str(tmp_path))
    first_day.record(data, date(2026, 1, 1))
    start, count = _partitions(env)
    assert start == "2026-01-01"
    assert int(count) == (datetime.now(UTC).date() - date(2026, 1, 1)).days + 1  # through today (end offset 1)
    (data / "first_day").write_text("garbage")
    assert _partitions(env)[0] == FLOOR

"""`nous run` end to end as `make run` starts it: one ranged run with progress, then the Dagster UI and
daemon, quietly (no DEBUG, no deprecation or instance-config warnings), and a clean stop on Ctrl-C."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from firstrun import History, recent_days

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _get(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=2) as response:
            return response.status
    except OSError:
        return 0


def test_nous_run_serves_quietly_idles_silently_and_stops_on_interrupt(machine, tmp_path: Path):
    """`nous run` ingests, serves, then says nothing while idle: past the code servers' heartbeat timeout and the
    daemon's workspace reload (60 s) it used to print 'No heartbeat received in 20 seconds, shutting down' every
    ~66 s. Ctrl-C then stops it with status 0 and takes the UI down."""
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, recent_days(2))
    for n, day in enumerate(history.days):
        history.write_day(day, n)
    port = _free_port()
    log = tmp_path / "run.log"
    proc = _start(machine, port, log)
    url = f"http://127.0.0.1:{port}/server_info"
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline and proc.poll() is None and _get(url) != 200:
            time.sleep(1)
        assert _get(url) == 200, log.read_text()[-3000:]
        time.sleep(15)  # the daemon's first sensor tick and schedule check
        settled = log.read_text()
        time.sleep(100)
        idle = log.read_text()[len(settled):]
        assert proc.poll() is None
    finally:
        _ctrl_c(proc)
        rc = proc.wait(timeout=120)
    text = log.read_text()
    assert idle == "", f"printed while idle:\n{idle[-3000:]}"
    assert rc == 0, text[-3000:]
    assert f"2 day(s) with activity, {history.days[0]}..{history.days[1]} in one run" in text
    assert "serving Dagster" in text and f"http://127.0.0.1:{port}" in text
    for noise in ("DEBUG", "Warning", "superseded", "will not be used", "Traceback"):
        assert noise not in text, f"{noise!r} in:\n{text[-3000:]}"
    assert _get(url) == 0  # the webserver is gone
    assert (Path(machine["DAGSTER_HOME"]) / "nous-run.log").exists()


def _start(machine: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """`nous run` as a terminal starts it: the leader of its own foreground process group."""
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "nous_assets.cli", "run", "--port", str(port)],
            env={**os.environ, **machine}, stdout=out, stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2], start_new_session=True,
        )


def _ctrl_c(proc: subprocess.Popen) -> None:
    """What Ctrl-C in a terminal does: SIGINT to every process of the foreground group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)


def test_ctrl_c_at_random_moments_is_quiet(machine, tmp_path: Path):
    """Ten Ctrl-Cs at seeded random moments of `nous run` (importing, ingesting the first time and again after an
    interrupted run, starting the code server, serving): each stops it with status 0 and no traceback, and
    leaves no process serving the UI."""
    import random

    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, recent_days(3))
    for n, day in enumerate(history.days):
        history.write_day(day, n)
    rng = random.Random(21)
    moments = sorted(rng.uniform(0.05, 30.0) for _ in range(9))
    port = _free_port()
    url = f"http://127.0.0.1:{port}/server_info"
    seen = []
    for i, moment in enumerate([*moments, None]):  # the last one while serving
        log = tmp_path / f"run{i}.log"
        proc = _start(machine, port, log)
        started = time.monotonic()
        if moment is None:
            while time.monotonic() - started < 300 and proc.poll() is None and _get(url) != 200:
                time.sleep(1)
            assert _get(url) == 200, log.read_text()[-3000:]
        else:
            time.sleep(moment)
        _ctrl_c(proc)
        rc = proc.wait(timeout=120)
        text = log.read_text()
        seen.append(text)
        assert rc == 0, f"Ctrl-C after {moment}s: status {rc}\n{text[-3000:]}"
        assert "Traceback" not in text and "Error" not in text, f"Ctrl-C after {moment}s:\n{text[-3000:]}"
        assert _get(url) == 0
    # the moments did cover the start-up: some runs were stopped while ingesting, the last one while serving
    assert any("history" in t or "catch-up" in t for t in seen[:-1]) and "serving Dagster" in seen[-1]

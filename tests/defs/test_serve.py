"""`nous run` end to end as `make run` starts it: one ranged run with progress, then the Dagster UI and
daemon, quietly (no DEBUG, no deprecation or instance-config warnings), and a clean stop on Ctrl-C."""

from __future__ import annotations

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


def test_nous_run_serves_quietly_and_stops_on_interrupt(machine, tmp_path: Path):
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, recent_days(2))
    for n, day in enumerate(history.days):
        history.write_day(day, n)
    port = _free_port()
    log = tmp_path / "run.log"
    env = {**os.environ, **machine}
    with log.open("w") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "nous_assets.cli", "run", "--port", str(port)],
            env=env, stdout=out, stderr=subprocess.STDOUT, cwd=Path(__file__).resolve().parents[2],
        )
    url = f"http://127.0.0.1:{port}/server_info"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and proc.poll() is None and _get(url) != 200:
            time.sleep(1)
        assert _get(url) == 200, log.read_text()[-3000:]
        time.sleep(3)  # let the daemon start its sensor and scheduler
    finally:
        proc.send_signal(signal.SIGINT)
        rc = proc.wait(timeout=90)
    text = log.read_text()
    assert rc == 0, text[-3000:]
    assert f"2 day(s) with activity, {history.days[0]}..{history.days[1]} in one run" in text
    assert "serving Dagster" in text and f"http://127.0.0.1:{port}" in text
    for noise in ("DEBUG", "Warning", "superseded", "will not be used", "Traceback"):
        assert noise not in text, f"{noise!r} in:\n{text[-3000:]}"
    assert _get(url) == 0  # the webserver is gone

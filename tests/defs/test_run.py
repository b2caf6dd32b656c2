"""`nous run` end to end as `make run` starts it: one ranged run with progress, then the Dagster UI and
daemon, quietly (no DEBUG, no deprecation or instance-config warnings), and a clean stop on Ctrl-C at any
moment of it."""

from __future__ import annotations

import contextlib
import os
import re
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


# Where a Ctrl-C lands, one stop per phase of `nous run`, in this order on one machine (each run goes on from what
# the one before left): (what, log line to wait for, or None for a delay of 0.5 s). An interrupted first run has
# already set the ingest floor, so the next ones are catch-ups; a run's transcript cursors advance when its
# extraction step ends, so the run stopped mid-way after that gets new lines first (an exchange appended to today).
# The stop while serving is the last act of the idle test, on the other machine.
MOMENTS = [
    ("starting up (importing, launching its worker)", None),
    ("starting the first ingest", re.compile(r"^initialised ", re.M)),
    ("ingesting the history, after its first step", re.compile(r"^(?:history|catch-up): step 1/\d+ ", re.M)),
    ("ingesting again after an interrupted run, mid-run", re.compile(r"^(?:history|catch-up): step 7/\d+ ", re.M)),
    ("starting the code server", re.compile(r"^serving Dagster ", re.M)),
]


IDLE_SECONDS = 50
"""How long the test watches an idle `nous run` after it settled (15 s after the UI answers, itself ~20 s after
start): the old heartbeat message came ~66 s after start, so the window, ~35-85 s after start (later on a slower
machine, where the UI takes longer), holds the first one."""


def test_nous_run_serves_quietly_idles_silently_and_stops_on_interrupt(machine, tmp_path: Path):
    """`nous run` ingests, serves, then says nothing while idle: past the code servers' heartbeat timeout and the
    daemon's workspace reload (60 s) it used to print 'No heartbeat received in 20 seconds, shutting down' every
    ~66 s. Ctrl-C then stops it with status 0 and takes the UI down.

    The idle minutes are not spent waiting: meanwhile a second machine (its own home, data dir, Dagster
    instance and port) is stopped with Ctrl-C at each other phase of `nous run` (:data:`MOMENTS`)."""
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
        idle_from = time.monotonic()
        _stop_at_every_moment(tmp_path / "interrupted")
        time.sleep(max(0.0, idle_from + IDLE_SECONDS - time.monotonic()))
        idle = log.read_text()[len(settled):]
        assert proc.poll() is None
    finally:
        rc = _interrupt(proc, log, "serving")
    text = log.read_text()
    assert idle == "", f"printed while idle:\n{idle[-3000:]}"
    assert rc == 0, text[-3000:]
    assert f"2 day(s) with activity, {history.days[0]}..{history.days[1]} in one run" in text
    assert "serving Dagster" in text and f"http://127.0.0.1:{port}" in text
    for noise in ("DEBUG", "Warning", "superseded", "will not be used", "Traceback", "Error"):
        assert noise not in text, f"{noise!r} in:\n{text[-3000:]}"
    assert _get(url) == 0  # the webserver is gone
    assert (Path(machine["DAGSTER_HOME"]) / "nous-run.log").exists()


def _stop_at_every_moment(root: Path) -> None:
    """Ctrl-C at each of :data:`MOMENTS` on a machine under ``root``: each stops `nous run` with status 0 and no
    traceback or error, and leaves no process serving the UI."""
    projects = root / "home" / ".claude" / "projects"
    machine = {
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
        "NOUS_DATA_DIR": str(root / "data"),
        "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl"),
        "DAGSTER_HOME": str(root / "dg"),
    }
    history = History(projects, recent_days(3))
    for n, day in enumerate(history.days):
        history.write_day(day, n)
    port = _free_port()
    url = f"http://127.0.0.1:{port}/server_info"
    for i, (moment, line) in enumerate(MOMENTS):
        if moment.startswith("ingesting again"):
            history.append(history.days[-1], 7, minute=40)
        log = root / f"run{i}.log"
        proc = _start(machine, port, log)
        if line is None:
            time.sleep(0.5)
        else:
            deadline = time.monotonic() + 300
            while time.monotonic() < deadline and proc.poll() is None and not line.search(log.read_text()):
                time.sleep(0.1)
            assert line.search(log.read_text()), f"never reached {moment!r}:\n{log.read_text()[-3000:]}"
        rc = _interrupt(proc, log, moment)
        text = log.read_text()
        assert rc == 0, f"Ctrl-C {moment}: status {rc}\n{text[-3000:]}"
        assert "Traceback" not in text and "Error" not in text, f"Ctrl-C {moment}:\n{text[-3000:]}"
        assert _get(url) == 0


def _sigint_as_from_a_terminal() -> None:
    """In the child, before it execs `nous run`: a terminal starts a command with SIGINT at its default, while a
    shell that runs the tests in the background has it ignored, and the ignored disposition is inherited. (An
    interpreter in between that reset it before exec-ing was a window: a Ctrl-C sent 0.5 s after start on a loaded
    machine landed while it still ignored SIGINT, and `nous run` went on serving.)"""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(machine: dict[str, str], port: int, log: Path) -> subprocess.Popen:
    """`nous run` as a terminal starts it: the leader of its own foreground process group, SIGINT not ignored."""
    with log.open("w") as out:
        return subprocess.Popen(
            [sys.executable, "-m", "nous_assets.cli", "run", "--port", str(port)],
            env={**os.environ, **machine}, stdout=out, stderr=subprocess.STDOUT,
            cwd=Path(__file__).resolve().parents[2], start_new_session=True,
            preexec_fn=_sigint_as_from_a_terminal,
        )  # fmt: skip


def _interrupt(proc: subprocess.Popen, log: Path, moment: str) -> int:
    """Ctrl-C, then its exit status; one that does not stop within 120 s fails the test and is killed with its
    process group (left running, its daemon and servers took CPU from every later test)."""
    _ctrl_c(proc)
    try:
        return proc.wait(timeout=120)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=30)
        raise AssertionError(f"Ctrl-C {moment}: still running 120 s later\n{log.read_text()[-3000:]}") from None


def _ctrl_c(proc: subprocess.Popen) -> None:
    """What Ctrl-C in a terminal does: SIGINT to every process of the foreground group."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)

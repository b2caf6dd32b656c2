"""The Dagster processes ``nous run`` serves with: one code server, the webserver and the daemon, supervised.

One code server of our own, not one per process. Left to themselves, the webserver and the daemon each spawn a
code server for the workspace, and the daemon drops its own and spawns a new one every 60 s (it reloads the
workspace); the dropped server, no longer heartbeated, logs "No heartbeat received in 20 seconds, shutting down"
as a WARNING before it exits: one line every ~66 s while idle. ``dagster dev`` avoids this by starting the code
server itself and handing both processes a workspace that points at it (``grpc_server``); so does Nous, with
``dagster code-server start`` on a Unix socket (the UI's "Reload" restarts the code behind it).

Ctrl-C stops everything once, quietly. A terminal sends SIGINT to its whole foreground process group, so a
child in ours would be interrupted wherever it stands (a run worker importing scikit-learn printed a
131-line ``DagsterExecutionInterruptedError``). The children run in process groups of their own and only this
process reacts to Ctrl-C: it stops each group with SIGTERM (SIGKILL after a grace period). Their output reaches
the terminal through this process and is always appended to ``$DAGSTER_HOME/nous-run.log``; once stopping
begins it goes to the log only, so what they print while being torn down never reaches the terminal.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import BinaryIO

from nous_assets.cli.interrupts import STOP_SIGNAL, check_stop

LOCATION = "nous_assets.definitions"
"""The code location's name: the module, as the repo's workspace.yaml names it (sensor state is keyed by it)."""

CODE_SERVER_TIMEOUT = 600.0
"""Seconds the code server may take to load the definitions (about 20 s on a busy two-core machine)."""

STOP_GRACE = 20.0
"""Seconds the children get to exit on SIGTERM before SIGKILL."""

LOG_NAME = "nous-run.log"


class Children:
    """Child processes in their own process groups, their output forwarded line by line until stopping."""

    def __init__(self, log: Path) -> None:
        self.procs: dict[str, subprocess.Popen] = {}
        self.quiet = threading.Event()
        self.log: BinaryIO = log.open("ab")
        self.lock = threading.Lock()
        self.threads: list[threading.Thread] = []

    def start(self, name: str, command: list[str], cwd: Path) -> subprocess.Popen:
        proc = subprocess.Popen(command, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, process_group=0)
        self.procs[name] = proc
        thread = threading.Thread(target=self._forward, args=(proc.stdout,), name=f"nous-{name}", daemon=True)
        thread.start()
        self.threads.append(thread)
        return proc

    def _forward(self, pipe) -> None:
        out = getattr(sys.stdout, "buffer", None)
        for line in iter(pipe.readline, b""):
            with self.lock:
                self.log.write(line)
                self.log.flush()
                if not self.quiet.is_set():
                    try:
                        if out is not None:
                            out.write(line)
                        else:
                            sys.stdout.write(line.decode("utf-8", "replace"))
                        sys.stdout.flush()
                    except (OSError, ValueError):  # the terminal went away: the log still has it
                        pass

    def exited(self) -> tuple[str, int] | None:
        """(name, status) of a child that has exited, else None."""
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                return name, proc.returncode
        return None

    def stop(self) -> None:
        """SIGTERM to every child's group, SIGKILL after :data:`STOP_GRACE`; their output goes to the log only."""
        self.quiet.set()
        for proc in self.procs.values():
            _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE
        for proc in self.procs.values():
            try:
                proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
            except subprocess.TimeoutExpired:
                _signal_group(proc, signal.SIGKILL)
                proc.wait()
        for proc in self.procs.values():
            _signal_group(proc, signal.SIGKILL)  # anything left in the group (a run worker)
        for thread in self.threads:
            thread.join(timeout=2)
        with self.lock:
            self.log.close()


def _signal_group(proc: subprocess.Popen, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signum)


def _stopping(signum, frame):
    raise KeyboardInterrupt


def _wait_for(path: Path, proc: subprocess.Popen, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if path.exists():
            return True
        if proc.poll() is not None:
            return False
        time.sleep(0.2)
    return False


def serve(home: Path, host: str, port: int) -> int:
    """The code server, the Dagster UI and the daemon (sensor, schedule, run queue) until Ctrl-C (exit 0).

    ``dagster-webserver`` + ``dagster-daemon`` are what ``dagster dev`` starts, without its superseded command
    (a warning on every start) and its complaint about the repo's dagster.yaml (they run in the instance
    directory). The daemon logs at WARNING: at INFO it prints two lines per sensor tick (every 5 s); the
    runs themselves log at INFO (ingest_job's config). Any other exit of a child stops the rest (exit 1).
    """
    bin_dir = Path(sys.executable).parent
    repo = Path(__file__).resolve().parents[2]
    scratch = Path(tempfile.mkdtemp(prefix="nous-run-"))  # short: a Unix socket path has ~100 characters
    socket = scratch / "code.sock"
    workspace = scratch / "workspace.yaml"
    workspace.write_text(  # JSON is YAML
        f'{{"load_from": [{{"grpc_server": {{"socket": "{socket}", "location_name": "{LOCATION}"}}}}]}}\n'
    )
    where = ["-d", str(repo)] if (repo / "workspace.yaml").exists() else []
    code_server = [str(bin_dir / "dagster"), "code-server", "start", "-m", LOCATION, *where, "--socket", str(socket),
                   "--location-name", LOCATION, "--log-level", "warning"]
    others = {
        "dagster-webserver": [str(bin_dir / "dagster-webserver"), "-w", str(workspace), "-h", host, "-p", str(port),
                              "--dagster-log-level", "info"],
        "dagster-daemon": [str(bin_dir / "dagster-daemon"), "run", "-w", str(workspace), "--log-level", "warning"],
    }
    print(f"serving Dagster (DAGSTER_HOME={home}); UI at http://{host}:{port}; the watch sensor ingests new "
          "transcript lines. Ctrl-C to stop", flush=True)
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stopping)
    if signal.getsignal(signal.SIGINT) in (signal.SIG_IGN, signal.SIG_DFL, None):
        signal.signal(signal.SIGINT, signal.default_int_handler)  # started from a shell that ignores it
    children = Children(home / LOG_NAME)
    try:
        server = children.start("dagster code-server", code_server, home)
        if not _wait_for(socket, server, CODE_SERVER_TIMEOUT):
            print(f"nous: the Dagster code server did not start (see {home / LOG_NAME}); stopping", file=sys.stderr)
            return 1
        for name, command in others.items():
            children.start(name, command, home)
        while True:
            check_stop()
            gone = children.exited()
            if gone is not None:
                print(f"nous: {gone[0]} exited with status {gone[1]}; stopping", file=sys.stderr)
                return gone[1] or 1
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            signal.signal(signum, signal.SIG_IGN)  # a second Ctrl-C does not cut the stop short
        children.stop()
        shutil.rmtree(scratch, ignore_errors=True)


WORKER_ENV = "NOUS_RUN_WORKER"
"""Set in the process that does the work of a serving ``nous run`` (see :func:`in_own_group`)."""


def in_own_group(argv: list[str]) -> int:
    """Run ``nous run`` (``argv``: its arguments) as a child in a process group of its own; pass it Ctrl-C once.

    The terminal's SIGINT goes to every process of the foreground group: besides ``nous`` and the Dagster
    servers, the helpers Dagster starts while a run executes in process (``tail -F`` and ``watch_orphans.py``,
    which capture a step's output) would each be interrupted and print a traceback. The worker and everything
    it starts sit outside that group; this thin parent receives the Ctrl-C and hands it to the worker alone,
    which stops its run and its servers quietly. Returns the worker's status (0 after a Ctrl-C).
    """
    command = [sys.executable, "-m", "nous_assets.cli", "run", *argv]
    child: list[subprocess.Popen] = []
    asked: list[int] = []

    def forward(signum, frame):
        asked.append(signum)
        if child:
            with contextlib.suppress(ProcessLookupError):
                os.kill(child[0].pid, STOP_SIGNAL)  # first: the flag must be set when the SIGINT is handled
                os.kill(child[0].pid, signal.SIGINT)

    for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, forward)
    child.append(subprocess.Popen(command, env={**os.environ, WORKER_ENV: "1"}, process_group=0))
    if asked:  # Ctrl-C while it was being started
        forward(asked[-1], None)
    status = child[0].wait()
    if asked and status in (0, 130, -signal.SIGINT, -signal.SIGTERM, -STOP_SIGNAL):  # -STOP_SIGNAL: still importing
        return 0
    return status if status >= 0 else 128 - status


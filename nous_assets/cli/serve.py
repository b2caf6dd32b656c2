"""``nous run``: initialise, catch up on transcripts (or the demo corpus), then serve the Dagster UI + daemon."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from nous_assets.cli.common import EXIT_ERROR, AddCommand, export_env, open_store
from nous_assets.cli.database import cmd_init
from nous_assets.cli.ingest import backfill, ingest_range, older_history_note, since_all, window
from nous_assets.settings import Settings

DEMO_DIR = Path(__file__).resolve().parents[1] / "demo" / "projects"


def _demo_glob(settings: Settings) -> str:
    """Copy the shipped demo transcripts into the data dir (never into the user's Claude config)."""
    import shutil

    from nous_assets.filemodes import tighten

    target = settings.data_dir / "demo" / "projects"
    if not target.exists():
        shutil.copytree(DEMO_DIR, target)
        tighten([target])  # copytree copies the repo's 0644/0755 modes; the data dir stays private
    return str(target / "**" / "*.jsonl")


def _floor(settings: Settings) -> str | None:
    """Lowest day the watch sensor covers, or None before the first backfill."""
    from nous_assets.store.floor import get_floor

    with open_store(settings, create=True) as conn:
        return get_floor(conn)


def _new_days(settings: Settings, floor: str) -> list[str]:
    """Days from ``floor`` to today whose transcripts gained complete lines since their cursors."""
    from datetime import UTC, datetime

    from nous_assets.capture.scan import plan_new_data

    today = datetime.now(UTC).date().isoformat()
    with open_store(settings, create=True) as conn:
        return sorted(d for d in plan_new_data(settings, conn).dates if floor <= d <= today)


def _serve(home: Path, host: str, port: int) -> int:
    """The Dagster UI and daemon (sensor, schedule, run queue) until Ctrl-C; returns an exit status.

    ``dagster-webserver`` + ``dagster-daemon`` are what ``dagster dev`` starts, without its superseded
    command (a warning on every start) and its complaint about the repo's dagster.yaml (it runs in the
    instance directory). The daemon logs at WARNING: at INFO it prints two lines per sensor tick (every
    5 s); the runs themselves log at INFO (ingest_job's config).
    """
    import signal
    import subprocess

    workspace = Path(__file__).resolve().parents[2] / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.exists() else ["-m", "nous_assets.definitions"]
    bin_dir = Path(sys.executable).parent
    commands = {
        "dagster-webserver": [str(bin_dir / "dagster-webserver"), *target, "-h", host, "-p", str(port),
                              "--dagster-log-level", "info"],
        "dagster-daemon": [str(bin_dir / "dagster-daemon"), "run", *target, "--log-level", "warning"],
    }
    print(f"serving Dagster (DAGSTER_HOME={home}); UI at http://{host}:{port}; the watch sensor ingests new "
          "transcript lines. Ctrl-C to stop", flush=True)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started from a shell that ignores it
    procs: dict[str, subprocess.Popen] = {}
    sys.stdout.flush()  # our lines before theirs in a shared log
    try:
        for name, command in commands.items():
            procs[name] = subprocess.Popen(command, cwd=home)
        while True:
            for name, proc in procs.items():
                if proc.poll() is not None:
                    print(f"nous: {name} exited with status {proc.returncode}; stopping", file=sys.stderr)
                    return proc.returncode or EXIT_ERROR
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(procs)


def _stop(procs: dict) -> None:
    """Stop child processes: SIGTERM, then SIGKILL for any still alive after 30 s."""
    import subprocess

    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 30
    for proc in procs.values():
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """Initialise, ingest all the history on disk (ranged runs with progress), then serve the Dagster UI + daemon.

    Claude Code deletes transcripts after 30 days by default (``cleanupPeriodDays``): what is on disk is all
    there will be, so the first run takes every day of it (``--since all``), not a recent window. A restart
    takes only the days that gained lines since, plus older days that appeared and were never ingested.
    """
    from dataclasses import replace

    from nous_assets.capture.discovery import discover
    from nous_assets.defs.instance import ensure_dagster_home

    cmd_init(settings, args)
    if not discover(settings.project_glob).files:
        glob = _demo_glob(settings)
        print(f"no Claude Code transcripts under {settings.project_glob}; using the demo corpus ({glob})")
        export_env("NOUS_PROJECT_GLOB", glob)
        settings = replace(settings, project_glob=glob)
        args.since = "all"
    args.from_date = args.to_date = None
    start, end = window(settings, args)
    floor = _floor(settings)
    if floor is not None and (since_all(args) or floor <= start.isoformat()):  # a restart
        status = _catch_up(settings, floor, take_older=since_all(args))
    else:
        status = backfill(settings, start, end, label="history" if since_all(args) else "backfill")
    if args.no_serve:
        return status
    home, _ = ensure_dagster_home(settings)
    export_env("DAGSTER_HOME", home)
    return _serve(home, args.host, args.port)


def _catch_up(settings: Settings, floor: str, *, take_older: bool) -> int:
    """A restart: the days with new lines since the last run; older never-ingested days too when ``take_older``
    (transcripts copied in later), else a note about them."""
    from datetime import date

    from nous_assets.capture.history import older_history
    from nous_assets.cli.ingest import _record_floor

    days = _new_days(settings, floor)
    older = older_history(settings, date.fromisoformat(floor)) if take_older else []
    if older:
        _record_floor(settings, date.fromisoformat(older[0]), date.fromisoformat(floor))
        print(f"catch-up: {len(older)} older day(s) with transcript activity from {older[0]} to {older[-1]} "
              "appeared since the last run; taking them too")
    if days or older:
        status = ingest_range(settings, sorted({*days, *older}), label="catch-up")
    else:
        print("catch-up: no new transcript lines since the last run")
        status = 0
    if not take_older:
        note = older_history_note(settings, date.fromisoformat(floor))
        if note:
            print(note)
    return status


def register(add: AddCommand) -> None:
    """The ``run`` subparser."""
    p = add(
        "run",
        cmd_run,
        "The main job: init, ingest all the transcript history on disk like `nous backfill --since all`, in "
        "ranged runs with progress (on a restart: only days with new lines), or the shipped demo corpus when "
        "there are none, then serve the Dagster UI and daemon on 127.0.0.1: the watch sensor keeps up with new "
        "lines, one run at a time.",
    )
    p.add_argument("--since", default="all",
                   help="history to ingest first: all (default: every day on disk), 90d, 12w or YYYY-MM-DD")
    p.add_argument("--host", default="127.0.0.1", help="UI bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=3000, help="UI port (default 3000)")
    p.add_argument("--no-serve", action="store_true", help="stop after the initial ingest (do not serve)")

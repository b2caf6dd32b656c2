"""``nous run``: initialise, catch up on transcripts (or the demo corpus), then serve the Dagster UI + daemon."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nous_assets.cli.common import AddCommand, export_env, open_store
from nous_assets.cli.database import cmd_init
from nous_assets.cli.ingest import backfill, ingest_range, older_history_note, since_all, window
from nous_assets.cli.interrupts import stop_quietly_on_interrupt, watch_stop_signal
from nous_assets.cli.supervise import WORKER_ENV, in_own_group, serve
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
    from nous_assets.store.ingest.floor import get_floor

    with open_store(settings, create=True) as conn:
        return get_floor(conn)


def _new_days(settings: Settings, floor: str) -> list[str]:
    """Days from ``floor`` to today whose transcripts gained complete lines since their cursors."""
    from datetime import UTC, datetime

    from nous_assets.capture.scan import plan_new_data

    today = datetime.now(UTC).date().isoformat()
    with open_store(settings, create=True) as conn:
        return sorted(d for d in plan_new_data(settings, conn).dates if floor <= d <= today)


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """``nous run``; Ctrl-C at any moment stops it quietly with status 0 (what finished is kept).

    Serving, or at a terminal, the work runs in a child process outside the terminal's process group
    (:func:`in_own_group`); ``--no-serve`` without a terminal runs in this process (tests call it so).
    """
    import os
    import signal

    if os.environ.get(WORKER_ENV) != "1" and (not args.no_serve or (sys.stdin is not None and sys.stdin.isatty())):
        extra = ["--no-serve"] if args.no_serve else []
        return in_own_group(["--since", args.since, "--host", args.host, "--port", str(args.port), *extra])
    before = signal.getsignal(signal.SIGINT)
    stop_quietly_on_interrupt()  # also when started from a shell that ignores SIGINT
    watch_stop_signal()
    try:
        return _run(settings, args)
    except KeyboardInterrupt:
        print("nous: stopped; what finished is kept, the next `nous run` goes on from there", file=sys.stderr)
        return 0
    finally:
        signal.signal(signal.SIGINT, before if before is not None else signal.default_int_handler)


def _run(settings: Settings, args: argparse.Namespace) -> int:
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
    return serve(home, args.host, args.port)


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

"""Ingesting history: ``nous backfill`` and ``nous reextract``, and the ranged runs ``nous run`` also starts.

A range of days becomes one Dagster run per stretch of activity in the persistent instance (the UI shows
it), with a progress line and a summary; the watch sensor's window is extended down to the range.
"""

from __future__ import annotations

import argparse
import sys
import time
from contextlib import closing

from nous_assets.cli.common import EXIT_ERROR, AddCommand, Progress, export_env
from nous_assets.errors import NousError
from nous_assets.settings import Settings


def since_all(args: argparse.Namespace) -> bool:
    """``--since all`` (and no ``--from``): every day on disk."""
    from nous_assets.capture.history import ALL

    return not args.from_date and str(args.since).strip().lower() == ALL


def window(settings: Settings, args: argparse.Namespace):
    """The requested [start, end] days, clipped to ``partition_start`` (with a note); ``--since all`` starts on
    the first day with transcript activity (today when there is none)."""
    from datetime import UTC, date, datetime

    from nous_assets.capture.history import first_activity_day, parse_since

    today = datetime.now(UTC).date()
    if since_all(args):
        end = date.fromisoformat(args.to_date) if args.to_date else today
        return min(first_activity_day(settings, today) or today, end), end
    try:
        start = date.fromisoformat(args.from_date) if args.from_date else parse_since(args.since, today)
        end = date.fromisoformat(args.to_date) if args.to_date else today
    except ValueError as exc:
        raise NousError(f"bad date: {exc}") from None
    if end < start:
        raise NousError(f"--to {end} is before the start {start}")
    first = date.fromisoformat(settings.partition_start)
    if start < first:
        print(f"note: days before partition_start {first} are not ingested (set NOUS_PARTITION_START or "
              "config 'partition_start' to go further back)", file=sys.stderr)
        start = first
    return start, end


def _backfill_days(settings: Settings, args: argparse.Namespace) -> list[str]:
    from nous_assets.capture.history import activity_days

    start, end = window(settings, args)
    return activity_days(settings, start, end) if start <= end else []


class RunProgress:
    """Turns a ranged run's events into the progress line (on a terminal) or one line per step (in a log).

    Progress counts day-steps: every step of the run covers every day of the range; the transcripts step
    reports each day as it finishes it. Warnings and errors of the run are always printed on their own line.
    """

    def __init__(self, label: str, days: int, steps: int, stream=None) -> None:
        self.label, self.days, self.steps = label, days, steps
        self.bar = Progress(label, total=days * steps, stream=stream)
        self.finished = self.day_logs = 0
        self.step = ""

    def _line(self, text: str) -> None:
        stream = self.bar.stream
        if self.bar.tty:
            stream.write("\r\x1b[K")
        stream.write(f"{self.label}: {text}\n")
        stream.flush()

    def __call__(self, event) -> None:
        import logging

        if event.kind == "start":
            self.step, self.day_logs = event.step, 0
        elif event.kind == "done":
            self.finished += 1
            self.day_logs = 0
            if not self.bar.tty:
                self._line(f"step {self.finished}/{self.steps} {event.step} done")
        elif event.kind == "failed":
            self._line(f"step {event.step} failed: {event.message.splitlines()[-1] if event.message else ''}")
        elif event.level >= logging.WARNING:
            self._line(f"{event.step}: {event.message}")
        else:
            self.day_logs = min(self.day_logs + 1, self.days)
        self.bar.update(
            self.finished * self.days + self.day_logs,
            f"step {min(self.finished + 1, self.steps)}/{self.steps} {self.step}",
        )

    def done(self, summary: str) -> None:
        self.bar.done(summary)


def older_history_note(settings: Settings, before) -> str | None:
    """'older history: …' when transcripts have activity before ``before`` that was never ingested."""
    from nous_assets.capture.history import older_history

    older = older_history(settings, before)
    if not older:
        return None
    return (
        f"older history: {len(older)} day(s) with transcript activity from {older[0]} to {older[-1]} not "
        f"ingested; take it with `nous backfill --since {older[0]}` (or `--since all`)"
    )


def ingest_range(settings: Settings, days: list[str], *, label: str, source: str = "historical_backfill") -> int:
    """Ingest ``days`` in the persistent instance: one run per stretch of activity of at most a month (one run for
    a week of daily sessions), each with a progress display and a summary, and between runs the days done / total
    and the memories so far; non-zero when anything failed."""
    from datetime import date

    from nous_assets.capture import first_day

    # before the asset graph is imported (below): its daily partitions start on the recorded first day
    first_day.record(settings.data_dir, date.fromisoformat(min(days)))

    import dagster as dg

    from nous_assets.defs.backfill import MAX_RUN_DAYS, job_steps, stretches
    from nous_assets.defs.instance import ensure_dagster_home
    from nous_assets.defs.partitions import START
    from nous_assets.defs.runs import reap_dead_runs

    if min(days) < START:  # only when this process loaded the graph before the day was recorded
        raise NousError(f"{min(days)} is before the first partition ({START}) this process loaded; run it again")
    home, backup = ensure_dagster_home(settings)
    export_env("DAGSTER_HOME", home)
    if backup is not None:
        print(f"{label}: {home / 'dagster.yaml'} now follows the repo's dagster.yaml (previous one: {backup})")
    ranges = stretches(days, max_span=MAX_RUN_DAYS)
    started = time.monotonic()
    totals = {"turns": 0, "learnings": 0, "failed_days": 0, "failed_runs": 0}
    if len(ranges) > 1:
        print(f"{label}: {len(days)} day(s) with transcript activity from {days[0]} to {days[-1]}, "
              f"in {len(ranges)} runs", file=sys.stderr, flush=True)
    done = 0
    with dg.DagsterInstance.get() as instance:
        for run_id in reap_dead_runs(instance):
            print(f"{label}: run {run_id[:8]} had lost its process; marked failed (its days are ingested again)")
        steps = job_steps()
        for i, (first, last) in enumerate(ranges, 1):
            name = label if len(ranges) == 1 else f"{label} {i}/{len(ranges)}"
            stretch = [d for d in days if first <= d <= last]
            result = _ingest_stretch(instance, stretch, name, source, steps)
            totals["turns"] += result.turns
            totals["learnings"] += result.learnings
            totals["failed_days"] += len(result.failed_days)
            totals["failed_runs"] += not result.success
            done += len(stretch)
            if len(ranges) > 1:
                print(f"{label}: {done}/{len(days)} day(s) done, {_memories(settings):,} memories so far",
                      file=sys.stderr, flush=True)
    if len(ranges) > 1:
        print(
            f"{label}: {len(days)} day(s) with activity from {days[0]} to {days[-1]} in {len(ranges)} runs: "
            f"{totals['turns']:,} turns, {totals['learnings']:,} learnings, {totals['failed_runs']} failed run(s), "
            f"{totals['failed_days']} failed day(s) in {time.monotonic() - started:.1f}s",
            file=sys.stderr,
        )
    return EXIT_ERROR if totals["failed_runs"] or totals["failed_days"] else 0


def _memories(settings: Settings) -> int:
    """Memories in the store now (for the progress between runs)."""
    from nous_assets.defs.resources import open_pipeline_db
    from nous_assets.store.reads.figures import memories_total

    with closing(open_pipeline_db(settings)) as conn:
        return memories_total(conn)


def _ingest_stretch(instance, days: list[str], label: str, source: str, steps: int):
    """One ranged run over ``days[0]..days[-1]``, shown as it goes and summarised."""
    from datetime import date

    from nous_assets.cli.interrupts import check_stop
    from nous_assets.defs.backfill import run_range
    from nous_assets.defs.runs import cancel_superseded

    first, last = days[0], days[-1]
    superseded = cancel_superseded(instance, first, last)
    if superseded:
        print(f"{label}: canceled {len(superseded)} queued run(s) of days this run covers")
    span = (date.fromisoformat(last) - date.fromisoformat(first)).days + 1
    progress = RunProgress(label, span, steps)
    result = run_range(first, last, instance=instance, source=source, on_event=progress)
    check_stop()  # a Ctrl-C Dagster held and dropped at the run's end
    what = f"{len(days)} day(s) with activity, {first}..{last} in one run ({result.run_id[:8]})"
    if not result.success:
        progress.done(f"{what} FAILED in step {result.failed_step or '?'}: {result.error}")
        print(
            f"{label}: nothing is lost: what the run finished is kept and file cursors only advance after "
            f"extraction; run `nous backfill --from {first} --to {last}` again to finish (idempotent)",
            file=sys.stderr,
        )
        return result
    progress.done(
        f"{what}: {result.turns:,} turns, {result.learnings:,} learnings, {len(result.failed_days)} failed day(s)"
    )
    for day, error in sorted(result.failed_days.items()):
        print(f"{label}: {day} not ingested: {error} (its files keep their cursors: the next run retries it)",
              file=sys.stderr)
    return result


def _record_floor(settings: Settings, first, last) -> None:
    """The watch sensor's window now reaches down to ``first`` (see :mod:`nous_assets.store.ingest.floor`)."""
    from nous_assets.defs.resources import open_pipeline_db
    from nous_assets.store.ingest.floor import lower_floor

    # like a run: refuses to recreate a cortex.db that vanished
    with closing(open_pipeline_db(settings)) as conn:
        lower_floor(conn, first.isoformat(), last.isoformat())


def backfill(settings: Settings, start, end, *, label: str) -> int:
    """Backfill [start, end]: extend the watched window, ingest the activity days, mention older history."""
    from nous_assets.capture.history import activity_days

    _record_floor(settings, start, end)
    days = activity_days(settings, start, end)
    older = older_history_note(settings, start)
    if not days:
        where = f"between {start} and {end}" if older else f"in that range ({settings.project_glob})"
        print(f"{label}: no transcript activity {where}")
        status = 0
    else:
        status = ingest_range(settings, days, label=label)
    if older:
        print(older)
    return status


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    start, end = window(settings, args)
    return backfill(settings, start, end, label="backfill")


def cmd_reextract(settings: Settings, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from nous_assets.extract.registry import get_extractor

    current = get_extractor(settings).version
    if args.to_version and args.to_version != current:
        raise NousError(
            f"--to-version {args.to_version} is not the configured extractor ({current}); "
            "set NOUS_EXTRACTOR / config 'extractor' first"
        )
    if not settings.reextract_on_version_change:
        raise NousError(
            "re-extraction emits compensating events and must be enabled explicitly: "
            "set NOUS_REEXTRACT_ON_VERSION_CHANGE=true"
        )
    days = _backfill_days(settings, args)
    settings = replace(settings, reextract_on_version_change=True)
    if not days:
        print(f"reextract: no transcript activity in that range ({settings.project_glob})")
        return 0
    return ingest_range(settings, days, label="reextract")



def add_range(p: argparse.ArgumentParser) -> None:
    """``--since`` / ``--from`` / ``--to``: the days a ranged command covers."""
    p.add_argument("--since", default="90d", help="how far back: 90d, 12w, YYYY-MM-DD or all (default 90d)")
    p.add_argument("--from", dest="from_date", metavar="DATE", help="first day (YYYY-MM-DD); overrides --since")
    p.add_argument("--to", dest="to_date", metavar="DATE", help="last day (YYYY-MM-DD; default today)")


def register(add: AddCommand) -> None:
    """The ingest commands' subparsers."""
    p = add(
        "backfill",
        cmd_backfill,
        "Ingest historical transcripts through the whole pipeline in one run per stretch of activity, recorded "
        "in the Dagster instance (the UI shows it), with progress and a summary; idempotent, safe to re-run. "
        "Days before the watched window are reported, not taken, until you backfill them: that extends the "
        "window the watch sensor keeps up to date.",
    )
    add_range(p)
    p = add(
        "reextract",
        cmd_reextract,
        "Re-run extraction with the configured extractor over a range of days, "
        "superseding learnings from an older extractor version (needs NOUS_REEXTRACT_ON_VERSION_CHANGE=true).",
    )
    add_range(p)
    p.add_argument("--from-version", help="the extractor version being replaced (informational)")
    p.add_argument("--to-version", help="must match the configured extractor's version")

"""Automation: a watch sensor on the transcript directory and an hourly reconcile schedule.

Both ask :func:`~nous_assets.capture.scan.plan_new_data` which days gained complete lines since
the file cursors; the schedule also re-requests days whose queue items are waiting for a retry, and
requests a catch-up run while embeddings are left over from a run's time budget. Neither requests
a day before the ingest floor (older history is taken explicitly with ``nous backfill --since``)
nor a day that a queued or running run already covers; ``dagster.yaml`` runs one run at a time.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Iterable
from datetime import UTC, datetime

import dagster as dg

from nous_assets.capture.scan import plan_new_data
from nous_assets.defs.assets import PIPELINE_ASSETS
from nous_assets.defs.assets.capture import SOURCE_TAG
from nous_assets.defs.partitions import daily
from nous_assets.defs.resources import NousResource
from nous_assets.defs.runs import in_flight_days, in_flight_runs
from nous_assets.embed.backlog import embedding_backlog
from nous_assets.extract.auto_memory import changed_since_ingest
from nous_assets.store.ingest.floor import floor_or_default
from nous_assets.store.sqlite.queue import days_awaiting_retry

INFO_CONSOLE = {"loggers": {"console": {"config": {"log_level": "INFO"}}}}
"""Runs log INFO and up to the terminal: Dagster's default (DEBUG) prints every engine event."""

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.assets(*PIPELINE_ASSETS),
    description="Capture, extract, judge session outcomes, project, embed, link and cache one day (or a range "
    "of days) of transcripts.",
    config=INFO_CONSOLE,
    executor_def=dg.in_process_executor,  # the steps form a chain: one process, one model load per run
)

WATCH_INTERVAL_SECONDS = 5
FULL_SCAN_SECONDS = 60


def _today() -> str:
    return datetime.now(UTC).date().isoformat()


def _partition_keys(instance: dg.DagsterInstance) -> set[str]:
    return set(daily.get_partition_keys(dynamic_partitions_store=instance))


def wanted_days(days: Iterable[str], floor: str, instance: dg.DagsterInstance) -> tuple[list[str], list[str]]:
    """(days to request, days skipped because a queued or running run covers them).

    Days before ``floor`` (the callers pass the later of the ingest floor and ``partition_start``) or outside
    the partitions are dropped silently.
    """
    keys = _partition_keys(instance)
    candidates = sorted(d for d in set(days) if d in keys and d >= floor)
    busy = in_flight_days(instance) if candidates else set()
    return [d for d in candidates if d not in busy], [d for d in candidates if d in busy]


def files_fingerprint(paths: Iterable[str]) -> str:
    """A short digest of the files' states (size, inode, mtime): equal while none of them changes."""
    states = []
    for path in sorted(set(paths)):
        try:
            st = os.stat(path)
        except OSError:
            continue
        states.append(f"{path}|{st.st_size}|{st.st_ino}|{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(states).encode()).hexdigest()[:16]


def _skip_reason(busy: list[str]) -> str:
    if busy:
        return f"new lines on {', '.join(busy)}, already covered by a queued or running run"
    return "no new transcript lines"


@dg.sensor(
    job=ingest_job,
    minimum_interval_seconds=WATCH_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Watches the Claude Code transcript directory; requests one run for each day whose files "
    "gained complete lines since their cursor, unless a queued or running run covers that day or it is "
    "before the ingest floor; when only Claude Code's auto-memory files changed, one run for today takes their "
    "notes in. The Stop hook's wake marker triggers an immediate scan.",
)
def transcript_watch(context: dg.SensorEvaluationContext, nous: NousResource):
    settings = nous.settings()
    last_scan = float(context.cursor or 0)
    woken = settings.wake_marker.exists()
    if not woken and time.time() - last_scan < FULL_SCAN_SECONDS:
        return dg.SkipReason("waiting for the next scan (or a wake signal from the Stop hook)")
    if woken:
        settings.wake_marker.unlink(missing_ok=True)
    with nous.connection() as conn:
        new = plan_new_data(settings, conn)
        floor = floor_or_default(conn, datetime.now(UTC).date())
        notes = changed_since_ingest(conn, settings.claude_config_dir) if not new.dates else None
    days, busy = wanted_days(new.dates, max(floor, settings.partition_start), context.instance)
    requests = [
        dg.RunRequest(
            partition_key=day,
            run_key=f"fs_watch:{day}:{files_fingerprint(new.dates[day])}",
            tags={SOURCE_TAG: "fs_watch"},
        )
        for day in days
    ]
    if notes is not None:  # Claude Code wrote an auto-memory note and no transcript line came with it
        today, _ = wanted_days([_today()], _today(), context.instance)
        requests += [dg.RunRequest(partition_key=d, run_key=f"fs_watch:auto-memory:{notes}",
                                   tags={SOURCE_TAG: "fs_watch", "nous/reason": "auto-memory changed"}) for d in today]
    return dg.SensorResult(
        run_requests=requests, cursor=str(time.time()), skip_reason=None if requests else _skip_reason(busy)
    )


def reconcile_days(nous: NousResource) -> list[str]:
    """Days with unread lines on or after the floor, plus days whose queue items wait for a retry."""
    settings = nous.settings()
    with nous.connection() as conn:
        floor = floor_or_default(conn, datetime.now(UTC).date())
        days = {d for d in plan_new_data(settings, conn).dates if d >= floor}
        retry = days_awaiting_retry(conn)
    return sorted(days | retry)


def catch_up_request(nous: NousResource, instance: dg.DagsterInstance, stamp: str) -> dg.RunRequest | None:
    """A run for today while vectors are left over from a run's embedding budget and no run is in flight."""
    if in_flight_runs(instance):
        return None  # the run in flight embeds too
    with nous.connection() as conn:
        left = embedding_backlog(conn)
    if not left:
        return None
    return dg.RunRequest(
        partition_key=_today(),
        run_key=f"fs_reconcile:embeddings:{stamp}",
        tags={SOURCE_TAG: "fs_reconcile", "nous/reason": f"embedding backlog ({left})"},
    )


@dg.schedule(
    cron_schedule="17 * * * *",
    job=ingest_job,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Hourly reconcile: re-scans every transcript and recovers anything the watcher missed "
    "(rotated/truncated files, failed extractions due for retry, embeddings left over from a run's time "
    "budget); skips days a queued or running run covers.",
)
def transcript_reconcile(context: dg.ScheduleEvaluationContext, nous: NousResource):
    stamp = context.scheduled_execution_time.strftime("%Y%m%dT%H%M") if context.scheduled_execution_time else "now"
    days, busy = wanted_days(reconcile_days(nous), nous.settings().partition_start, context.instance)
    requests = [
        dg.RunRequest(partition_key=day, run_key=f"fs_reconcile:{day}:{stamp}", tags={SOURCE_TAG: "fs_reconcile"})
        for day in days
    ]
    if not requests:
        catch_up = catch_up_request(nous, context.instance, stamp)
        if catch_up is not None:
            requests.append(catch_up)
    return requests if requests else dg.SkipReason(_skip_reason(busy))

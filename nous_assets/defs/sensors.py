"""Automation: a watch sensor on the transcript directory and an hourly reconcile schedule.

Both ask :func:`~nous_assets.capture.scan.plan_new_data` which days gained complete lines since
the file cursors; the schedule also re-requests days whose queue items are waiting for a retry.
"""

import time

import dagster as dg

from nous_assets.capture.scan import plan_new_data
from nous_assets.defs.assets.capture import SOURCE_TAG, learning_events, transcripts
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.retrieval import edges, embeddings, injection_cache
from nous_assets.defs.partitions import daily
from nous_assets.defs.resources import NousResource

ingest_job = dg.define_asset_job(
    "ingest_job",
    selection=dg.AssetSelection.assets(transcripts, learning_events, memories, embeddings, edges, injection_cache),
    description="Capture, extract, project, embed, link and cache one day of transcripts.",
)

WATCH_INTERVAL_SECONDS = 5
FULL_SCAN_SECONDS = 60


def _valid_days(days, context) -> list[str]:
    keys = set(daily.get_partition_keys(dynamic_partitions_store=context.instance))
    return sorted(d for d in days if d in keys)


@dg.sensor(
    job=ingest_job,
    minimum_interval_seconds=WATCH_INTERVAL_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Watches the Claude Code transcript directory; requests runs for exactly the days whose files "
    "gained complete lines since their cursor. The Stop hook's wake marker triggers an immediate scan.",
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
    days = _valid_days(new.dates, context)
    requests = [
        dg.RunRequest(partition_key=day, run_key=f"fs_watch:{day}:{new.fingerprint}", tags={SOURCE_TAG: "fs_watch"})
        for day in days
    ]
    return dg.SensorResult(
        run_requests=requests, cursor=str(time.time()), skip_reason=None if requests else "no new transcript lines"
    )


def reconcile_days(nous: NousResource) -> list[str]:
    """Days with unread lines, plus days whose queue items are pending or waiting for a retry."""
    settings = nous.settings()
    with nous.connection() as conn:
        days = set(plan_new_data(settings, conn).dates)
        rows = conn.execute(
            "SELECT DISTINCT json_extract(payload_json, '$.date') FROM ingest_events "
            "WHERE status IN ('pending', 'failed', 'processing')"
        ).fetchall()
    return sorted(days | {r[0] for r in rows if r[0]})


@dg.schedule(
    cron_schedule="17 * * * *",
    job=ingest_job,
    default_status=dg.DefaultScheduleStatus.RUNNING,
    description="Hourly reconcile: re-scans every transcript and recovers anything the watcher missed "
    "(rotated/truncated files, failed extractions due for retry).",
)
def transcript_reconcile(context: dg.ScheduleEvaluationContext, nous: NousResource):
    stamp = context.scheduled_execution_time.strftime("%Y%m%dT%H%M") if context.scheduled_execution_time else "now"
    keys = set(daily.get_partition_keys())
    return [
        dg.RunRequest(partition_key=day, run_key=f"fs_reconcile:{day}:{stamp}", tags={SOURCE_TAG: "fs_reconcile"})
        for day in reconcile_days(nous)
        if day in keys
    ]

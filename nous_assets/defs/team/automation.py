"""Team mode's job and sensor: a run per developer with new transcript lines, tagged with the developer.

The sensor adds a partition when a developer's folder appears and requests a run for each developer whose
files gained lines (or, at most hourly, whose queue holds items waiting for a retry), unless a queued or
running run already works for that developer. Every run of the job,
however launched (sensor, UI, backfill of the job), carries :data:`~nous_assets.defs.team.resources.DEVELOPER_TAG`, the
key of the per-developer limit in ``deploy/team/dagster.yaml``.
"""

from __future__ import annotations

from datetime import UTC, datetime

import dagster as dg

from nous_assets.capture.scan import plan_new_data
from nous_assets.defs.assets.capture import SOURCE_TAG
from nous_assets.defs.runs import IN_FLIGHT
from nous_assets.defs.sensors import INFO_CONSOLE
from nous_assets.defs.team.assets import TEAM_ASSETS
from nous_assets.defs.team.resources import DEVELOPER_TAG, TeamResource, developer_tags, developers
from nous_assets.store.sqlite.queue import days_awaiting_retry

TEAM_WATCH_SECONDS = 60

team_job = dg.define_asset_job(
    "team_job",
    selection=dg.AssetSelection.assets(*TEAM_ASSETS),
    config=dg.PartitionedConfig(
        partitions_def=developers,
        run_config_for_partition_key_fn=lambda _key: INFO_CONSOLE,
        tags_for_partition_key_fn=developer_tags,
    ),
    description="Extract one developer's new transcript days into the staging log, publish them to the "
    "team's PostgreSQL tenant, then project, run the lifecycle and build packets in the tenant's working database.",
    executor_def=dg.in_process_executor,  # two steps in a chain: one process per run
)


def busy_developers(instance: dg.DagsterInstance) -> set[str]:
    """Developers with a queued or running team run."""
    runs = instance.get_runs(dg.RunsFilter(job_name=team_job.name, statuses=IN_FLIGHT))
    return {r.tags[DEVELOPER_TAG] for r in runs if DEVELOPER_TAG in r.tags}


@dg.sensor(
    job=team_job,
    minimum_interval_seconds=TEAM_WATCH_SECONDS,
    default_status=dg.DefaultSensorStatus.RUNNING,
    description="Adds a partition per developer folder and requests a run for each developer whose "
    "transcripts gained complete lines, unless a run for that developer is queued or running.",
)
def team_watch(context: dg.SensorEvaluationContext, team: TeamResource) -> dg.SensorResult:
    found = team.developers()
    known = set(developers.get_partition_keys(dynamic_partitions_store=context.instance))
    added = [d for d in found if d not in known]
    busy = busy_developers(context.instance)
    requests = []
    hour = datetime.now(UTC).strftime("%Y-%m-%dT%H")
    for developer in found:
        if developer in busy:
            continue
        with team.staging(developer) as (settings, conn):
            new = plan_new_data(settings, conn)
            retry = bool(days_awaiting_retry(conn)) if not new.dates else False
        if new.dates or retry:  # retries (queue items waiting after a failure) at most once an hour
            key, source = (f"team:{developer}:{new.fingerprint}", "fs_watch") if new.dates else (
                f"team-retry:{developer}:{hour}", "fs_reconcile")  # fmt: skip
            requests.append(
                dg.RunRequest(
                    partition_key=developer, run_key=key, tags={**developer_tags(developer), SOURCE_TAG: source}
                )
            )
    return dg.SensorResult(
        run_requests=requests,
        dynamic_partitions_requests=[developers.build_add_request(added)] if added else [],
        skip_reason=None if requests or added else f"no new lines for {len(found)} developer(s) ({len(busy)} busy)",
    )

"""Team mode's assets, one partition per developer: the developer's new days extracted into the tenant's working
database, where the team's log is projected once (``team_learning_events``), published from there to the
team's PostgreSQL tenant, the log of record (``team_events``), then the working database brought up to date
with what other writers put in the tenant's log, run through the laptop's lifecycle and packed
(``team_packets``; :mod:`nous_assets.team.packets`).

Each asset calls the ingest steps of :mod:`nous_assets.pipeline` through the team's domain code
(:mod:`nous_assets.team`), the functions the laptop's assets call; which steps team mode runs where, and why
it skips the others, is :data:`nous_assets.team.steps.TEAM`. The laptop's graph (``PIPELINE_ASSETS``) does not
include these: they belong to ``nous_assets.defs.team.definitions`` only.
"""

import contextlib
from collections.abc import Iterator

import dagster as dg

from nous_assets.defs.assets.capture import run_source
from nous_assets.defs.team.resources import LLM_POOL, TeamResource, developers
from nous_assets.errors import ConfigError
from nous_assets.settings import Settings
from nous_assets.store.backend import Backend, engine, open_backend
from nous_assets.store.log.event_publish import publish_staging
from nous_assets.store.sqlite import queue
from nous_assets.team.developer import developer_run, pending_days, since_tag
from nous_assets.team.packets import build_tenant_packets

GROUP = "team"


@dg.asset(
    partitions_def=developers,
    pool=LLM_POOL,
    group_name=GROUP,
    kinds={"sqlite"},
    description="One developer's new transcript days parsed, redacted and extracted (the configured extractor, "
    "an LLM in team mode: pool nous_llm_extraction caps calls in flight) into the tenant's working cortex.db, "
    "each learning compared with the team's memories there (the log is projected there, once), then each touched "
    "project's history read (its brief, memories a later removal superseded), as on a laptop. The developer's "
    "lake, queue and cursors stay in its staging cortex.db.",
)
def team_learning_events(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    with team.staging(developer) as (settings, conn), team.working(settings) as log:
        days = pending_days(settings, conn, since_tag(context.run.tags))
        run = developer_run(
            settings, conn, log, days, source=run_source(context), worker=f"dagster-{context.run.run_id[:8]}"
        )
        counts = queue.counts(conn)
    stats = run.stats
    for day, reason in run.failed.items():
        context.log.error(f"{developer} {day}: not ingested ({reason}); it is retried by the next run")
    for err in stats.errors[:5]:
        context.log.warning(f"{developer}: extraction failed (will retry / dead-letter): {err}")
    context.log.info(f"{developer}: {len(days)} day(s), {run.turns} turns, {stats.events_written} events written")
    return dg.MaterializeResult(
        metadata={
            "developer": dg.MetadataValue.text(developer),
            "days": dg.MetadataValue.json(days),
            "failed_days": dg.MetadataValue.json(run.failed),
            "turns": dg.MetadataValue.int(run.turns),
            "learnings": dg.MetadataValue.int(stats.learnings),
            "events_written": dg.MetadataValue.int(stats.events_written),
            "events_projected": dg.MetadataValue.int(run.events_projected),
            "brief_items": dg.MetadataValue.int(run.history.items),
            "history_events_written": dg.MetadataValue.int(run.history.events_written),
            "queue_items_failed": dg.MetadataValue.int(stats.failed),
            "queue_items_dead_lettered": dg.MetadataValue.int(stats.dead_lettered),
            "queue_status": dg.MetadataValue.json(counts),
        }
    )


@contextlib.contextmanager
def shared_backend(settings: Settings) -> Iterator[Backend]:
    """The team's tenant of a backend that holds many tenants (PostgreSQL): what the team shares lives there.
    Refused before anything is opened: a one-tenant backend's file would be a developer's staging database."""
    if engine(settings).capabilities.one_tenant:
        raise ConfigError("team mode shares through PostgreSQL: set NOUS_BACKEND=postgres and NOUS_PG_DSN")
    with open_backend(settings) as shared:
        yield shared


@dg.asset(
    partitions_def=developers,
    deps=[team_learning_events],
    group_name=GROUP,
    kinds={"postgres"},
    description="The events the tenant's working cortex.db holds and the team's tenant (NOUS_TENANT) of the shared "
    "PostgreSQL log lacks, appended there through the EventStore protocol (idempotent: keys kept; resumed from a "
    "checkpoint in the working database, written after each committed batch). Not projected there: the working "
    "database, where the packets are built, projects each event once.",
)
def team_events(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    settings = team.developer_settings(developer)
    with shared_backend(settings) as shared, team.working(settings) as log:
        stats = publish_staging(log, shared.events, settings.tenant_id)  # into the team's tenant (NOUS_TENANT)
    context.log.info(f"{developer}: {stats.published} events published, {stats.already_present} already there")
    return dg.MaterializeResult(
        metadata={
            "developer": dg.MetadataValue.text(developer),
            "tenant_id": dg.MetadataValue.text(settings.tenant_id),
            "events_published": dg.MetadataValue.int(stats.published),
            "events_already_present": dg.MetadataValue.int(stats.already_present),
            "resumed_after_staging_event": dg.MetadataValue.int(stats.resumed_after),
            "tenant_last_event_id": dg.MetadataValue.int(stats.target_last_event_id),
        }
    )


@dg.asset(
    partitions_def=developers,
    deps=[team_events],
    group_name=GROUP,
    kinds={"sqlite", "postgres"},
    description="Injection packets of the developer's tenant, for `nous pull`: what is new in the tenant's log (every "
    "developer's, and other writers') copied into the tenant's working cortex.db under the staging root and "
    "projected there once; then the laptop's steps over it (retention, project, embed, link, NLI, interventions, "
    "packets), the events they wrote published back to the tenant, and the packets written per project to the "
    "tenant's injection_cache (memory ids and built_from_event_id in the tenant's event ids; a project whose "
    "packets are unchanged is not rewritten).",
)
def team_packets(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    settings = team.developer_settings(developer)
    staging_root = team.staging_dir(team.base_settings())
    with shared_backend(settings) as shared:
        stats = build_tenant_packets(settings, staging_root, shared.events, shared.cache, source=run_source(context),
                                     worker=f"dagster-{context.run.run_id[:8]}")  # fmt: skip
    if stats.memories_left_to_embed:
        context.log.warning(f"{stats.tenant_id}: {stats.memories_left_to_embed} memories left to embed next run")
    context.log.info(
        f"{developer} (tenant {stats.tenant_id}): {stats.events_mirrored} events mirrored, "
        f"{stats.projects_written} project(s) written, {stats.projects_unchanged} unchanged"
    )
    return dg.MaterializeResult(
        metadata={
            "developer": dg.MetadataValue.text(developer),
            "tenant_id": dg.MetadataValue.text(stats.tenant_id),
            "mirror": dg.MetadataValue.path(str(stats.mirror)),
            "events_mirrored": dg.MetadataValue.int(stats.events_mirrored),
            "events_already_mirrored": dg.MetadataValue.int(stats.events_already_mirrored),
            "tenant_last_event_id": dg.MetadataValue.int(stats.tenant_last_event_id),
            "events_projected": dg.MetadataValue.int(stats.events_projected),
            "retention_events": dg.MetadataValue.int(stats.retention_events),
            "memories_embedded": dg.MetadataValue.int(stats.memories_embedded),
            "memories_left_to_embed": dg.MetadataValue.int(stats.memories_left_to_embed),
            "edges_written": dg.MetadataValue.int(stats.edges_written),
            "contradictions_found": dg.MetadataValue.int(stats.contradictions_found),
            "interventions_active": dg.MetadataValue.int(stats.interventions_active),
            "events_published_to_tenant": dg.MetadataValue.int(stats.events_published),
            "projects_rebuilt_in_mirror": dg.MetadataValue.int(stats.projects_rebuilt),
            "projects_written": dg.MetadataValue.int(stats.projects_written),
            "projects_unchanged": dg.MetadataValue.int(stats.projects_unchanged),
            "projects_emptied": dg.MetadataValue.int(stats.projects_emptied),
            "packets_written": dg.MetadataValue.int(stats.packets_written),
        }
    )


TEAM_ASSETS = [team_learning_events, team_events, team_packets]

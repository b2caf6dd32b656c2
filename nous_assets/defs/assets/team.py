"""Team mode's assets, one partition per developer: extract into the developer's staging log, then publish
it to the team's tenant of the PostgreSQL backend and project it there, then build the tenant's injection
packets (``nous pull`` fetches them) over a mirror of the tenant's log (:mod:`nous_assets.team.packets`).

They call the same domain functions as the laptop's ``transcripts`` and ``learning_events`` assets; only the
settings differ (per developer, from :class:`~nous_assets.defs.team.TeamResource`). The local graph
(``PIPELINE_ASSETS``) does not include them: they belong to ``nous_assets.team_definitions`` only.
"""

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime

import dagster as dg

from nous_assets.capture.lake import read_turns
from nous_assets.capture.scan import (
    capture_day,
    plan_new_data,
    promote_cursors,
    read_manifest,
    record_file_progress,
)
from nous_assets.defs.assets.capture import above_floor, run_source
from nous_assets.defs.team import LLM_POOL, SINCE_TAG, TeamResource, developers
from nous_assets.embed.registry import get_embedder
from nous_assets.errors import ConfigError, NousError, storage_error
from nous_assets.extract.registry import get_extractor
from nous_assets.extract.worker import DrainStats, drain, enqueue_partition, incomplete_paths
from nous_assets.history.update import HistoryStats, update_projects
from nous_assets.identity import update as identity
from nous_assets.settings import Settings
from nous_assets.store.backend import open_backend
from nous_assets.store.db import Connection
from nous_assets.store.ingest.floor import floor_or_default, get_floor, lower_floor
from nous_assets.store.log.event_publish import publish_staging
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.sqlite import queue
from nous_assets.team.packets import build_tenant_packets

GROUP = "team"


def pending_days(settings: Settings, conn: Connection, since: str | None = None) -> list[str]:
    """Days with lines past the file cursors (on or after the ingest floor), and days awaiting a retry.

    The developer's first run records the floor (the default 90-day window), as a laptop's first run does,
    so the window does not slide; ``since`` (run tag ``nous/since``) lowers it to take older history.
    """
    floor = lower_floor(conn, since or floor_or_default(conn, datetime.now(UTC).date()))
    floor = max(floor, settings.partition_start)
    fresh = {d for d in plan_new_data(settings, conn).dates if d >= floor}
    return sorted(fresh | queue.days_awaiting_retry(conn))


def since_tag(tags: Mapping[str, str]) -> str | None:
    """The ``nous/since`` day of a run (ISO date), or None; a malformed one is a one-line error."""
    raw = tags.get(SINCE_TAG)
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw.strip()).isoformat()
    except ValueError:
        raise ConfigError(f"run tag {SINCE_TAG}={raw!r} must be a day (YYYY-MM-DD)") from None


@dataclass
class DeveloperRun:
    """What one developer's run did: turns read, days that failed (retried by the next run), extraction."""

    turns: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    stats: DrainStats = field(default_factory=DrainStats)
    history: HistoryStats = field(default_factory=HistoryStats)


def capture_and_extract(
    settings: Settings, conn: Connection, days: list[str], *, source: str, worker: str
) -> DeveloperRun:
    """Lake partitions and queue items for ``days``, the queue drained, each touched project's history read (its
    brief, what later removals superseded: the laptop's ``project_history`` step), cursors promoted.

    As on a laptop, one bad day does not stop the others: its files keep their cursors, so the next run
    retries it; storage failures (read-only, full, locked) stop the run with the reason.
    """
    extractor = get_extractor(settings)
    result = DeveloperRun()
    done = []
    for day in days:
        try:
            capture_day(settings, conn, day)
        except Exception as exc:
            if storage_error(exc) is not None:
                raise
            result.failed[day] = f"{type(exc).__name__}: {exc}"
            continue
        turns = read_turns(settings.lake_dir, day)
        result.turns += len(turns)
        identity.observe(conn, turns)
        enqueue_partition(conn, day, turns, source=source, extractor_version=extractor.version)
        done.append(day)
    if days and not done:
        raise NousError(f"no day could be ingested: {next(iter(result.failed.values()))}")
    identity.refresh(conn, lake_dir=settings.lake_dir)
    result.stats = drain(conn, settings, extractor, worker_id=worker, reextract=settings.reextract_on_version_change)
    policy = Policy.of(settings.thresholds)
    result.history = update_projects(conn, settings.lake_dir, done, source=source, policy=policy)
    floor = get_floor(conn)
    for day in done:
        scan = above_floor(read_manifest(settings.lake_dir, day), floor)
        record_file_progress(conn, scan, {f.path for f in scan.files} - incomplete_paths(conn, day))
        promote_cursors(conn, scan)
    return result


@dg.asset(
    partitions_def=developers,
    pool=LLM_POOL,
    group_name=GROUP,
    kinds={"sqlite"},
    description="One developer's new transcript days parsed, redacted and extracted (the configured extractor, "
    "an LLM in team mode: pool nous_llm_extraction caps calls in flight) into the developer's staging log, then "
    "each touched project's history read (its brief, memories a later removal superseded), as on a laptop.",
)
def team_learning_events(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    with team.staging(developer) as (settings, conn):
        days = pending_days(settings, conn, since_tag(context.run.tags))
        run = capture_and_extract(
            settings, conn, days, source=run_source(context), worker=f"dagster-{context.run.run_id[:8]}"
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
            "brief_items": dg.MetadataValue.int(run.history.items),
            "history_events_written": dg.MetadataValue.int(run.history.events_written),
            "queue_items_failed": dg.MetadataValue.int(stats.failed),
            "queue_items_dead_lettered": dg.MetadataValue.int(stats.dead_lettered),
            "queue_status": dg.MetadataValue.json(counts),
        }
    )


def _on_postgres(settings: Settings) -> Settings:
    """The settings, once they name PostgreSQL: what the team shares lives there."""
    if settings.backend != "postgres":
        raise ConfigError("team mode shares through PostgreSQL: set NOUS_BACKEND=postgres and NOUS_PG_DSN")
    return settings


@dg.asset(
    partitions_def=developers,
    deps=[team_learning_events],
    group_name=GROUP,
    kinds={"postgres"},
    description="The developer's staging events appended to the team's tenant (NOUS_TENANT) of the shared PostgreSQL "
    "log through the EventStore protocol (idempotent: keys kept; resumed from a checkpoint in the staging "
    "database, written after each committed batch), then projected there.",
)
def team_events(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    with team.staging(developer) as (settings, conn), open_backend(_on_postgres(settings)) as shared:
        stats = publish_staging(conn, shared.events, settings.tenant_id)  # into the team's tenant (NOUS_TENANT)
        projected = shared.projection.project(policy=Policy.of(settings.thresholds))
        checkpoint = shared.projection.checkpoint()
    context.log.info(f"{developer}: {stats.published} events published, {stats.already_present} already there")
    return dg.MaterializeResult(
        metadata={
            "developer": dg.MetadataValue.text(developer),
            "tenant_id": dg.MetadataValue.text(settings.tenant_id),
            "events_published": dg.MetadataValue.int(stats.published),
            "events_already_present": dg.MetadataValue.int(stats.already_present),
            "resumed_after_staging_event": dg.MetadataValue.int(stats.resumed_after),
            "tenant_last_event_id": dg.MetadataValue.int(stats.target_last_event_id),
            "events_projected": dg.MetadataValue.int(projected.events),
            "projection_checkpoint": dg.MetadataValue.int(checkpoint),
        }
    )


@dg.asset(
    partitions_def=developers,
    deps=[team_events],
    group_name=GROUP,
    kinds={"sqlite", "postgres"},
    description="Injection packets of the developer's tenant, for `nous pull`: the tenant's whole log (every "
    "developer's) copied into a per-tenant mirror cortex.db under the staging root, projected, embedded, linked "
    "and packed there by the laptop's steps, then written per project to the tenant's injection_cache (memory "
    "ids and built_from_event_id in the tenant's event ids; a project whose packets are unchanged is not "
    "rewritten).",
)
def team_packets(context: dg.AssetExecutionContext, team: TeamResource) -> dg.MaterializeResult:
    developer = context.partition_key
    settings = _on_postgres(team.developer_settings(developer))
    staging_root = team.staging_dir(team.base_settings())
    with open_backend(settings) as shared:
        stats = build_tenant_packets(
            settings, staging_root, shared.events, shared.cache, embedder=get_embedder(settings)
        )
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
            "memories_embedded": dg.MetadataValue.int(stats.memories_embedded),
            "memories_left_to_embed": dg.MetadataValue.int(stats.memories_left_to_embed),
            "edges_written": dg.MetadataValue.int(stats.edges_written),
            "projects_rebuilt_in_mirror": dg.MetadataValue.int(stats.projects_rebuilt),
            "projects_written": dg.MetadataValue.int(stats.projects_written),
            "projects_unchanged": dg.MetadataValue.int(stats.projects_unchanged),
            "projects_emptied": dg.MetadataValue.int(stats.projects_emptied),
            "packets_written": dg.MetadataValue.int(stats.packets_written),
        }
    )


TEAM_ASSETS = [team_learning_events, team_events, team_packets]

"""Memory layer: session outcomes folded into the event log, then the bi-temporal projection of the log.

Every event reaches the log through an asset upstream of ``memories``, and only ``memories`` projects
(with the configured :class:`~nous_assets.store.projection.memory_state.Policy`), so the graph shows each write.
"""

import dagster as dg

from nous_assets.defs.assets.capture import ingest_run, learning_events
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import derived as steps
from nous_assets.pipeline.run import partition_clock, run_clock  # noqa: F401  (partition_clock: its old home)
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads import figures
from nous_assets.store.sqlite.projection import verify

GROUP = "memory"


@daily_asset(
    group_name=GROUP,
    deps=[learning_events],
    kinds={"sqlite"},
    description="Session outcomes: memories injected into the day's sessions are judged against what the "
    "session then talked about and corrected, and Reinforced/Weakened events appended to the log (each "
    "injection judged once). Injections the SessionStart hook spooled while the database was busy are "
    "moved into access_log first.",
)
def session_outcomes(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        judged = steps.outcomes(ingest_run(context, nous, conn))
    outcomes = judged.outcomes
    return dg.MaterializeResult(
        metadata={
            "accesses_from_spool": dg.MetadataValue.int(judged.spooled),
            "sessions_judged": dg.MetadataValue.int(judged.sessions),
            "outcomes_reinforced": dg.MetadataValue.int(outcomes.reinforced),
            "outcomes_weakened": dg.MetadataValue.int(outcomes.weakened),
            "outcomes_untouched": dg.MetadataValue.int(outcomes.untouched),
        }
    )


@daily_asset(
    group_name=GROUP,
    deps=[learning_events, session_outcomes],
    kinds={"sqlite"},
    description="Retention: memories idle for a whole 30-day period decay (LearningWeakened, reason decay, once "
    "per memory and period), those below archive_below and those beyond the rotation bound of their scope are "
    "archived (LearningArchived with the reason). Decided as of the end of the run's last partition day.",
)
def retention(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        run = ingest_run(context, nous, conn)
        clock = run_clock(run)
        stats = steps.retention(run)
    return dg.MaterializeResult(
        metadata={
            "clock": dg.MetadataValue.text(clock.isoformat()),
            "memories_judged": dg.MetadataValue.int(stats.memories),
            "decay_events": dg.MetadataValue.int(stats.decayed),
            "archived_below_threshold": dg.MetadataValue.int(stats.archived_below),
            "archived_by_rotation": dg.MetadataValue.int(stats.archived_rotation),
            "events_written": dg.MetadataValue.int(stats.events_written),
        }
    )


@daily_asset(
    group_name=GROUP,
    deps=[learning_events],
    kinds={"sqlite"},
    description="What each project's whole history shows (every project with turns in the partition; its sessions "
    "read back from the lake): the project brief (nous_assets/brief: canonical commands, quality gate, release and "
    "deploy procedures, repository rules, a one-paragraph layout; each item a memory on a brief:<key> slot with its "
    "status and evidence; a changed item supersedes the one it replaces, the same brief writes nothing), and "
    "memories citing a path a later session deleted or moved, superseded with the command as evidence.",
)
def project_history(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = steps.history(ingest_run(context, nous, conn))
    return dg.MaterializeResult(
        metadata={
            "projects": dg.MetadataValue.int(stats.projects),
            "brief_items": dg.MetadataValue.int(stats.items),
            "items_learned_or_changed": dg.MetadataValue.int(stats.learned),
            "items_replaced": dg.MetadataValue.int(stats.replaced),
            "items_retired": dg.MetadataValue.int(stats.retired),
            "paths_removed": dg.MetadataValue.int(stats.removed_paths),
            "superseded_by_removal": dg.MetadataValue.int(stats.superseded_by_removal),
            "events_written": dg.MetadataValue.int(stats.events_written),
        }
    )


@daily_asset(
    group_name=GROUP,
    deps=[learning_events, project_history, session_outcomes, retention],
    kinds={"sqlite"},
    description="Current memories projected from learning_events with the configured policy (incremental "
    "from its checkpoint; re-materialising a partition is a no-op once caught up). The only step that "
    "projects.",
)
def memories(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = steps.project(ingest_run(context, nous, conn))
        total = figures.memories_total(conn)
        on_days = figures.memories_valid_from(conn, context.partition_keys)
    return dg.MaterializeResult(
        metadata={
            "events_projected": dg.MetadataValue.int(stats.events),
            "projection_checkpoint": dg.MetadataValue.int(stats.last_event_id),
            "memories_total": dg.MetadataValue.int(total),
            "memories_valid_from_partition": dg.MetadataValue.int(on_days),
        }
    )


@dg.asset_check(
    asset=memories,
    description="A full replay of the event log (cold archive segments included) into a scratch database equals "
    "the live projection.",
)
def replay_equals_projection(nous: NousResource) -> dg.AssetCheckResult:
    from nous_assets.lifecycle.archive import cold_event_count, verify_all_tiers

    settings = nous.settings()
    policy = Policy.of(settings.thresholds)
    with nous.connection() as conn:
        if cold_event_count(conn):
            report = verify_all_tiers(conn, settings.archive_dir, settings.db_path.parent, policy)
        else:
            report = verify(conn, policy=policy, scratch_dir=settings.data_dir)
    return dg.AssetCheckResult(
        passed=report.ok,
        metadata={
            "events_replayed": report.events_replayed,
            "memories": report.memories,
            "differences": dg.MetadataValue.json(report.differences[:20]),
        },
    )

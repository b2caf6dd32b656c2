"""Memory layer: the bi-temporal projection of the event log."""

import dagster as dg

from nous_assets.defs.assets.capture import learning_events
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.store.projection import Policy
from nous_assets.store.projector import project, verify


def policy_from(nous: NousResource) -> Policy:
    t = nous.settings().thresholds
    return Policy(t.initial_reinforcement, t.superseded_multiplier, t.contradiction_multiplier)


@daily_asset(
    group_name="memory",
    deps=[learning_events],
    kinds={"sqlite"},
    description="Current memories projected from learning_events (incremental from its checkpoint; "
    "re-materialising a partition is a no-op once caught up).",
)
def memories(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = project(conn, policy=policy_from(nous))
        total = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        by_day = {
            day: conn.execute(
                "SELECT count(*) FROM memories WHERE substr(coalesce(valid_from, created_at), 1, 10) = ?", (day,)
            ).fetchone()[0]
            for day in context.partition_keys
        }
    return dg.MaterializeResult(
        metadata={
            "events_projected": dg.MetadataValue.int(stats.events),
            "projection_checkpoint": dg.MetadataValue.int(stats.last_event_id),
            "memories_total": dg.MetadataValue.int(total),
            "memories_valid_from_partition": dg.MetadataValue.int(sum(by_day.values())),
        }
    )


@dg.asset_check(
    asset=memories, description="A full replay of the event log into a scratch database equals the live projection."
)
def replay_equals_projection(nous: NousResource) -> dg.AssetCheckResult:
    settings = nous.settings()
    with nous.connection() as conn:
        report = verify(conn, policy=policy_from(nous), scratch_dir=settings.data_dir)
    return dg.AssetCheckResult(
        passed=report.ok,
        metadata={
            "events_replayed": report.events_replayed,
            "memories": report.memories,
            "differences": dg.MetadataValue.json(report.differences[:20]),
        },
    )

"""Observers and interventions: conditions read from the log and read models, reduced to active interventions."""

import dagster as dg

from nous_assets.defs.assets.capture import ingest_run
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import derived as steps

GROUP = "memory"


@daily_asset(
    group_name=GROUP,
    deps=[memories, dg.AssetKey("nli_results")],  # contradiction density reads the cached labels
    kinds={"sqlite"},
    description="Observers over the event log and read models (a user correction repeated across sessions, a "
    "learning re-learned but never injected, a command failing the same way in several sessions, a domain "
    "dense with contradictions) append intervention candidates (none whose text the packet guard would hold); "
    "the reducer applies the confidence threshold, TTL, cooldown and dedupe into active_interventions, every "
    "change audited. Packets carry the active ones.",
)
def interventions(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = steps.interventions(ingest_run(context, nous, conn))
    if stats.reduced.approved:
        context.log.info(f"{stats.reduced.approved} intervention(s) approved; {stats.active} active")
    return dg.MaterializeResult(
        metadata={
            "candidates_new": dg.MetadataValue.int(stats.candidates_new),
            "approved": dg.MetadataValue.int(stats.reduced.approved),
            "suppressed": dg.MetadataValue.int(stats.reduced.suppressed),
            "expired": dg.MetadataValue.int(stats.reduced.expired),
            "active": dg.MetadataValue.int(stats.active),
            "findings_by_reason": dg.MetadataValue.json(stats.findings),
            "candidates_by_state": dg.MetadataValue.json(stats.by_state),
        }
    )

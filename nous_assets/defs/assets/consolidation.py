"""Consolidation layer: alike memories of a scope grouped into observations (seed 003's CX14, no LLM)."""

import dagster as dg

from nous_assets.consolidate.topics import map_markdown
from nous_assets.defs.assets.capture import ingest_run
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.retrieval import edges, embeddings
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import derived as steps

GROUP = "reconcile"


@daily_asset(
    name="consolidation",
    group_name=GROUP,
    deps=[memories, embeddings, edges, dg.AssetKey("nli_results")],
    kinds={"sqlite"},
    description="Current verified, stated and observed memories of each project (and the global scope) clustered "
    "by HDBSCAN on a composite signal (embedding cosine, shared cited files and commands, concepts, edges) behind "
    "a cohesion gate and a recall gate (its key terms must find its members); each cluster becomes an observation "
    "(a knowledge memory of kind observation: the best-evidenced member's text plus the others' novel details, "
    "citing every member), written as a LearningExtracted "
    "keyed by its member set; an observation whose members no longer form a cluster is superseded or retired. "
    "Packets show an observation in place of its members when it is shorter. Each project's memories also fall "
    "into topics (Louvain communities over similarity, stored and co-occurrence edges): the map in `topic_map`, "
    "`nous review map` and MCP `timeline`.",
)
def consolidation(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = steps.consolidation(ingest_run(context, nous, conn))
    return dg.MaterializeResult(
        metadata={
            "scopes": dg.MetadataValue.int(stats.scopes),
            "memories_considered": dg.MetadataValue.int(stats.memories),
            "memories_clustered": dg.MetadataValue.int(stats.clustered),
            "observations": dg.MetadataValue.int(stats.observations),
            "observations_formed": dg.MetadataValue.int(stats.formed),
            "observations_superseded": dg.MetadataValue.int(stats.superseded),
            "observations_retired": dg.MetadataValue.int(stats.retired),
            "clusters_deferred": dg.MetadataValue.int(stats.deferred),
            "compression_ratio": dg.MetadataValue.float(stats.compression or 0.0),
            "cluster_sizes": dg.MetadataValue.json({str(k): v for k, v in sorted(stats.sizes.items())}),
            "events_written": dg.MetadataValue.int(stats.events_written),
            "cohesion": dg.MetadataValue.float(stats.cohesion),
            "cohesion_tuned": dg.MetadataValue.text(stats.tuned or "unchanged"),
            "cohesion_moves": dg.MetadataValue.json(stats.tuning_history),
            **{f"cx15_{k}": dg.MetadataValue.float(v) for k, v in stats.cx15().items() if v is not None},
            "topics": dg.MetadataValue.int(sum(len(t) for t in stats.topics.values())),
            "topic_map": dg.MetadataValue.md(map_markdown(stats.topics)),
        }
    )

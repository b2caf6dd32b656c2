"""Retrieval layer: embeddings (memories + episodic chunks), graph edges, and the injection cache."""

import dagster as dg

from nous_assets.defs.assets.capture import ingest_run
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.observe import interventions
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import derived as steps
from nous_assets.pipeline.derived import task_offsets  # noqa: F401  (its old home)
from nous_assets.store.reads import figures

GROUP = "retrieval"
EMBED_POOL = "nous_embeddings"  # dagster.yaml: one step per pool at a time, so two runs never embed the same rows


@daily_asset(
    group_name=GROUP,
    deps=[memories],
    kinds={"sqlite", "pytorch"},
    pool=EMBED_POOL,
    description="Vectors (sqlite-vec, cosine) for every memory and for the day's episodic transcript chunks, "
    "from the configured embedding model; stale vectors (model/dimension change, edited text) are re-embedded "
    "in resumable batches while retrieval falls back to FTS for the rest. A run embeds for at most "
    "embed.run_budget_seconds (model load included); the hourly reconcile requests a run for what is left.",
)
def embeddings(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        run = steps.embed(ingest_run(context, nous, conn))
        total_chunks = figures.chunks_total(conn)
        vectors = figures.memory_vectors_total(conn)
    stats, budget, chunk_left = run.memories, run.budget, run.chunks_left
    if stats.remaining or chunk_left:
        context.log.warning(
            f"embedding budget ({budget:g}s) reached: {stats.remaining} memories and {chunk_left} transcript chunks "
            "left for the next run (the hourly reconcile requests one); memories use FTS-only scoring until then"
        )
    return dg.MaterializeResult(
        metadata={
            "model": dg.MetadataValue.text(f"{run.model} ({run.dimensions}d)"),
            "memories_embedded": dg.MetadataValue.int(stats.embedded),
            "memories_reused_from_cache": dg.MetadataValue.int(stats.reused_from_cache),
            "memories_remaining": dg.MetadataValue.int(stats.remaining),
            "memory_vectors": dg.MetadataValue.int(vectors),
            "chunks_new": dg.MetadataValue.int(run.chunks_new),
            "chunks_changed": dg.MetadataValue.int(run.chunks_changed),
            "chunk_concepts_indexed": dg.MetadataValue.int(run.concepts_indexed),
            "chunks_embedded": dg.MetadataValue.int(run.chunks_embedded),
            "chunks_remaining": dg.MetadataValue.int(chunk_left),
            "chunks_skipped": dg.MetadataValue.int(run.chunks_skipped),
            "chunks_total": dg.MetadataValue.int(total_chunks),
            "budget_seconds": dg.MetadataValue.float(budget),
        }
    )


@daily_asset(
    group_name=GROUP,
    deps=[embeddings],
    kinds={"sqlite"},
    description="Graph edges derived from the projection: relates_to (concept/vector similarity) and causes "
    "(consecutive learnings of a session; subagent briefing/debriefing). Event edges come from the log.",
)
def edges(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    with nous.connection() as conn:
        stats = steps.link(ingest_run(context, nous, conn))
        counts = figures.edges_by_type(conn)
    return dg.MaterializeResult(
        metadata={
            "memories_linked": dg.MetadataValue.int(stats.memories),
            "relates_to_written": dg.MetadataValue.int(stats.relates_to),
            "causes_written": dg.MetadataValue.int(stats.causes),
            "edges_by_type": dg.MetadataValue.json(counts),
        }
    )


@daily_asset(
    group_name=GROUP,
    deps=[edges, interventions, dg.AssetKey("nli_results"), dg.AssetKey("consolidation")],  # packets read both
    kinds={"sqlite"},
    description="Precomputed SessionStart packets per project (one per likely fingerprint: default and recent "
    "branches) and a global packet, sanitised, redacted and under the character budget, framed as recalled "
    "notes; memories the packet guard flags (remote code, force-push to main, skipped permissions, disabled "
    "checks, exfiltration, secrets) are held out for `nous review`; only verified, stated and observed memories "
    "whose evidence reaches thresholds.packet_min_confidence enter, and none whose citations no longer resolve in "
    "the project's checkout (listed as stale by `nous review`); the active interventions of a packet's scope "
    "come first, under Notes.",
)
def injection_cache(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    settings = nous.settings()
    with nous.connection() as conn:
        stats = steps.packets(ingest_run(context, nous, conn))
        rows = figures.packets(conn)
    return dg.MaterializeResult(
        metadata={
            "projects_rebuilt": dg.MetadataValue.int(stats.projects_rebuilt),
            "projects_unchanged": dg.MetadataValue.int(stats.projects_unchanged),
            "packets_written": dg.MetadataValue.int(stats.packets),
            "packets_total": dg.MetadataValue.int(rows[0]),
            "largest_packet_chars": dg.MetadataValue.int(rows[1]),
            "memories_held_for_review": dg.MetadataValue.int(stats.held),
            "held_memories_left_out": dg.MetadataValue.int(stats.held_skipped),
            "stale_memories_left_out": dg.MetadataValue.int(stats.stale),
            "budget_chars": dg.MetadataValue.int(settings.thresholds.injection_budget_chars),
        }
    )

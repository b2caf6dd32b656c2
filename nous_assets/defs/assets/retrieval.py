"""Retrieval layer: embeddings (memories + episodic chunks), graph edges, and the injection cache."""

import time

import dagster as dg

from nous_assets.capture.lake import read_links, read_turns
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.observe import interventions
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.embed.chunk_embedding import (
    embed_pending_chunks,
    pending_chunk_count,
    skipped_chunk_count,
    upsert_chunks,
)
from nous_assets.embed.memory_embedding import embed_pending
from nous_assets.embed.registry import get_embedder
from nous_assets.extract.worker import batch_session_id
from nous_assets.link.edges import derive_edges
from nous_assets.retrieve.episodic import index_chunk_concepts
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
    settings = nous.settings()
    budget = settings.embed.run_budget_seconds
    deadline = time.monotonic() + budget  # the model loads on the first batch: that counts against the budget
    embedder = get_embedder(settings)
    batch = settings.embed.batch_size
    new_chunks = changed_chunks = 0
    with nous.connection() as conn:
        for day in context.partition_keys:
            new, changed = upsert_chunks(conn, read_turns(settings.lake_dir, day))
            new_chunks, changed_chunks = new_chunks + new, changed_chunks + changed
        concepts_indexed = index_chunk_concepts(conn)  # cheap next to embedding; no budget needed
        stats = embed_pending(conn, embedder, batch_size=batch, deadline=deadline)
        chunk_done = 0
        if time.monotonic() < deadline:
            chunk_done, chunk_left = embed_pending_chunks(
                conn, embedder, batch_size=batch, deadline=deadline, min_words=settings.embed.min_words
            )
        else:
            chunk_left = pending_chunk_count(conn, embedder.model, embedder.dimensions)
        total_chunks = figures.chunks_total(conn)
        skipped = skipped_chunk_count(conn, embedder.model, embedder.dimensions)
        vectors = figures.memory_vectors_total(conn)
    if stats.remaining or chunk_left:
        context.log.warning(
            f"embedding budget ({budget:g}s) reached: {stats.remaining} memories and {chunk_left} transcript chunks "
            "left for the next run (the hourly reconcile requests one); memories use FTS-only scoring until then"
        )
    return dg.MaterializeResult(
        metadata={
            "model": dg.MetadataValue.text(f"{embedder.model} ({embedder.dimensions}d)"),
            "memories_embedded": dg.MetadataValue.int(stats.embedded),
            "memories_reused_from_cache": dg.MetadataValue.int(stats.reused_from_cache),
            "memories_remaining": dg.MetadataValue.int(stats.remaining),
            "memory_vectors": dg.MetadataValue.int(vectors),
            "chunks_new": dg.MetadataValue.int(new_chunks),
            "chunks_changed": dg.MetadataValue.int(changed_chunks),
            "chunk_concepts_indexed": dg.MetadataValue.int(concepts_indexed),
            "chunks_embedded": dg.MetadataValue.int(chunk_done),
            "chunks_remaining": dg.MetadataValue.int(chunk_left),
            "chunks_skipped": dg.MetadataValue.int(skipped),
            "chunks_total": dg.MetadataValue.int(total_chunks),
            "budget_seconds": dg.MetadataValue.float(float(budget)),
        }
    )


def task_offsets(lake_dir, days) -> dict[str, tuple[str, str, int]]:
    """Subagent batch session -> (parent batch session, parent transcript, byte offset of its Task call)."""
    out: dict[str, tuple[str, str, int]] = {}
    for day in days:
        links = read_links(lake_dir, day)
        if links.is_empty():
            continue
        offsets = {}
        for t in read_turns(lake_dir, day):
            for uuid, offset in zip(t.uuids, t.line_offsets, strict=False):
                offsets[uuid] = (batch_session_id(t), t.source_path, offset)
        for link in links.iter_rows(named=True):
            parent = offsets.get(link["parent_uuid"])
            if parent is None:
                continue
            out[f"{link['parent_session_id']}#agent-{link['agent_id']}"] = parent
    return out


@daily_asset(
    group_name=GROUP,
    deps=[embeddings],
    kinds={"sqlite"},
    description="Graph edges derived from the projection: relates_to (concept/vector similarity) and causes "
    "(consecutive learnings of a session; subagent briefing/debriefing). Event edges come from the log.",
)
def edges(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    settings = nous.settings()
    with nous.connection() as conn:
        stats = derive_edges(conn, task_offsets=task_offsets(settings.lake_dir, context.partition_keys))
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
    deps=[edges, interventions, dg.AssetKey("nli_results")],  # packets read cached contradictions
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
    from nous_assets.embed.registry import get_query_embedder
    from nous_assets.retrieve.cache_build import build_cache

    settings = nous.settings()
    with nous.connection() as conn:
        # a packet's few fingerprint queries need no torch: the torch-free encoder gives the same vectors in well
        # under a second, where loading the full model took most of the step (and of a correction's rebuild)
        stats = build_cache(conn, settings, embedder=get_query_embedder(settings))
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

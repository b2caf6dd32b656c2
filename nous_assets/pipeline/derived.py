"""The derived half of the step list: what turns the event log into memories, vectors, edges, contradictions,
interventions and packets. Each step works on the database it is given and on the run's days of the lake
(none for a tenant: its database has no lake, so no transcript chunks, no subagent offsets, default packets)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from nous_assets.capture.lake import read_links, read_turns
from nous_assets.consolidate.run import ConsolidationStats, consolidate
from nous_assets.embed.chunk_embedding import (
    embed_pending_chunks,
    pending_chunk_count,
    skipped_chunk_count,
    upsert_chunks,
)
from nous_assets.embed.memory_embedding import EmbedStats, embed_pending
from nous_assets.embed.registry import get_embedder, get_query_embedder
from nous_assets.extract.worker import batch_session_id
from nous_assets.history.update import HistoryStats, update_projects
from nous_assets.link.edges import EdgeStats, derive_edges
from nous_assets.observe.run import ObserveStats, observe_and_reduce
from nous_assets.pipeline.run import IngestRun, run_clock
from nous_assets.reconcile.nli.registry import get_classifier
from nous_assets.reconcile.nli.resolve import NliStats, reconcile_contradictions
from nous_assets.reinforce.outcomes import OutcomeStats, evaluate_sessions, ingest_access_spool
from nous_assets.reinforce.retention import RetentionStats, apply_retention
from nous_assets.retrieve.cache_build import CacheStats, build_cache
from nous_assets.retrieve.episodic import index_chunk_concepts
from nous_assets.retrieve.packet import withheld
from nous_assets.safety.guard import classify
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads.access_log import unjudged_sessions
from nous_assets.store.search.memory_lookup import corrections_by_session
from nous_assets.store.sqlite.projection import ProjectionStats
from nous_assets.store.sqlite.projection import project as project_log


def history(run: IngestRun) -> HistoryStats:
    """What each touched project's whole history shows: its brief, memories a later removal superseded."""
    return update_projects(run.conn, run.settings.lake_dir, run.days, source=run.source,
                           policy=Policy.of(run.settings.thresholds), log=run.log)  # fmt: skip


def session_evidence(lake_dir: Path, days: list[str], wanted: set[str]) -> dict[str, str]:
    """Per session of ``wanted`` (those with injected memories still to judge), the text of its conversation.

    Only those sessions are read into memory: a long backfill range holds far more text than the judgement
    needs, and on a first run no session has been injected yet.
    """
    texts: dict[str, list[str]] = {}
    if not wanted:
        return {}
    for day in days:
        for t in read_turns(lake_dir, day):
            if t.kind == "message" and t.text and t.session_id in wanted:
                texts.setdefault(t.session_id, []).append(t.text)
    return {s: "\n".join(parts) for s, parts in texts.items()}


@dataclass
class OutcomesRun:
    """Accesses moved in from the hook's spool, sessions judged, and what the judgement wrote."""

    spooled: int
    sessions: int
    outcomes: OutcomeStats


def outcomes(run: IngestRun) -> OutcomesRun:
    """Memories injected into the days' sessions judged against what the session then said and corrected."""
    spooled = ingest_access_spool(run.conn, run.settings.access_spool)
    texts = session_evidence(run.settings.lake_dir, run.days, unjudged_sessions(run.conn))
    corrections = corrections_by_session(run.conn, sorted(texts))
    return OutcomesRun(spooled, len(texts), evaluate_sessions(run.conn, texts, corrections, run.settings.thresholds))


def retention(run: IngestRun) -> RetentionStats:
    """Decay, archive below ``archive_below`` and rotate, as of the run's clock (all as events)."""
    return apply_retention(run.conn, run_clock(run), run.settings.thresholds)


def project(run: IngestRun) -> ProjectionStats:
    """The event log projected into current memories with the configured policy (from its checkpoint)."""
    return project_log(run.conn, policy=Policy.of(run.settings.thresholds))


@dataclass
class EmbedRun:
    """Memory and transcript-chunk vectors written, and what the time budget left for the next run."""

    model: str
    dimensions: int
    budget: float
    memories: EmbedStats
    chunks_new: int = 0
    chunks_changed: int = 0
    concepts_indexed: int = 0
    chunks_embedded: int = 0
    chunks_left: int = 0
    chunks_skipped: int = 0


def embed(run: IngestRun) -> EmbedRun:
    """Vectors for every memory and for the days' transcript chunks, for at most ``embed.run_budget_seconds``
    (the model loads on the first batch: that counts against the budget)."""
    settings = run.settings
    budget = settings.embed.run_budget_seconds
    deadline = time.monotonic() + budget
    embedder = get_embedder(settings)
    batch = settings.embed.batch_size
    new_chunks = changed_chunks = 0
    for day in run.days:
        new, changed = upsert_chunks(run.conn, read_turns(settings.lake_dir, day))
        new_chunks, changed_chunks = new_chunks + new, changed_chunks + changed
    concepts = index_chunk_concepts(run.conn)  # cheap next to embedding; no budget needed
    stats = embed_pending(run.conn, embedder, batch_size=batch, deadline=deadline)
    out = EmbedRun(embedder.model, embedder.dimensions, float(budget), stats, new_chunks, changed_chunks, concepts)
    if time.monotonic() < deadline:
        out.chunks_embedded, out.chunks_left = embed_pending_chunks(
            run.conn, embedder, batch_size=batch, deadline=deadline, min_words=settings.embed.min_words
        )
    else:
        out.chunks_left = pending_chunk_count(run.conn, embedder.model, embedder.dimensions)
    out.chunks_skipped = skipped_chunk_count(run.conn, embedder.model, embedder.dimensions)
    return out


def task_offsets(lake_dir: Path, days: list[str]) -> dict[str, tuple[str, str, int]]:
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


def link(run: IngestRun) -> EdgeStats:
    """Edges derived from the projection: relates_to (concepts, vectors) and causes (a session's learnings in
    order; subagent briefing and debriefing, from the days' Task calls)."""
    return derive_edges(run.conn, task_offsets=task_offsets(run.settings.lake_dir, run.days))


@dataclass
class NliRun:
    classifier: str
    stats: NliStats


def nli(run: IngestRun) -> NliRun:
    """Contradictions between current memories, labelled by the configured classifier, cached per model."""
    classifier = get_classifier(run.settings)
    stats = reconcile_contradictions(run.conn, classifier, run.settings.thresholds, source=run.source,
                                     batch_size=run.settings.nli.batch_size)  # fmt: skip
    return NliRun(classifier.model_version, stats)


def consolidation(run: IngestRun) -> ConsolidationStats:
    """Each scope's alike memories grouped into observations behind the recall gate (the query embedder), stale
    ones closed, as events (issue 24). The observations it formed are embedded at once: they come after the embed
    step, and a run must not end owing vectors it could give (the reconcile schedule would start another run)."""
    settings = run.settings
    stats = consolidate(run.conn, source=run.source, thresholds=settings.thresholds,
                        embedder=get_query_embedder(settings))  # fmt: skip
    if stats.formed:
        embed_pending(run.conn, get_embedder(settings), batch_size=settings.embed.batch_size,
                      deadline=time.monotonic() + settings.embed.run_budget_seconds)  # fmt: skip
    return stats


def interventions(run: IngestRun) -> ObserveStats:
    """Observers append intervention candidates (none the packet guard would hold); the reducer keeps the
    active ones (confidence, TTL, cooldown, dedupe), every change audited."""
    return observe_and_reduce(run.conn, run.settings.thresholds, held=lambda text: classify(text).held,
                              withheld=withheld)


def packets(run: IngestRun) -> CacheStats:
    """SessionStart packets of every project whose memories moved, and the global one.

    A packet's few fingerprint queries need no torch: the torch-free encoder gives the same vectors in well
    under a second, where loading the full model took most of the step (and of a correction's rebuild).
    """
    return build_cache(run.conn, run.settings, embedder=get_query_embedder(run.settings))

"""The asset graph, listed once: ``Definitions``, ``ingest_job``, the sensors and ``run_days`` all use these."""

from nous_assets.defs.assets.capture import learning_events, transcripts, transcripts_schema
from nous_assets.defs.assets.consolidation import consolidation
from nous_assets.defs.assets.insight import metrics
from nous_assets.defs.assets.memory import (
    memories,
    project_history,
    replay_equals_projection,
    retention,
    session_outcomes,
)
from nous_assets.defs.assets.observe import interventions
from nous_assets.defs.assets.reconciliation import nli_results_asset
from nous_assets.defs.assets.retrieval import edges, embeddings, injection_cache

PIPELINE_ASSETS = [
    transcripts, learning_events, project_history, session_outcomes, retention, memories, embeddings, edges,
    nli_results_asset, consolidation, interventions, injection_cache, metrics,
]  # fmt: skip
"""Capture -> extract -> read each project's history (brief, removals) -> judge outcomes -> decay and archive ->
project -> embed -> link / find contradictions -> consolidate -> observe -> cache -> metrics, in dependency
order."""

ASSET_CHECKS = [transcripts_schema, replay_equals_projection]

"""The asset graph, listed once: ``Definitions``, ``ingest_job``, the sensors and ``run_days`` all use these."""

from nous_assets.defs.assets.capture import learning_events, transcripts, transcripts_schema
from nous_assets.defs.assets.insight import metrics
from nous_assets.defs.assets.memory import memories, replay_equals_projection, session_outcomes
from nous_assets.defs.assets.retrieval import edges, embeddings, injection_cache

PIPELINE_ASSETS = [
    transcripts, learning_events, session_outcomes, memories, embeddings, edges, injection_cache, metrics,
]  # fmt: skip
"""Capture -> extract -> judge outcomes -> project -> embed -> link -> cache -> metrics, in dependency order."""

ASSET_CHECKS = [transcripts_schema, replay_equals_projection]

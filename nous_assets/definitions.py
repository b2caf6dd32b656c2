"""The one Dagster ``Definitions`` for Nous; ``workspace.yaml`` points here."""

import dagster as dg

from nous_assets.defs.assets.capture import learning_events, transcripts, transcripts_schema
from nous_assets.defs.assets.memory import memories, replay_equals_projection
from nous_assets.defs.assets.retrieval import edges, embeddings, injection_cache
from nous_assets.defs.resources import NousResource
from nous_assets.defs.sensors import ingest_job, transcript_reconcile, transcript_watch

defs = dg.Definitions(
    assets=[transcripts, learning_events, memories, embeddings, edges, injection_cache],
    asset_checks=[transcripts_schema, replay_equals_projection],
    jobs=[ingest_job],
    sensors=[transcript_watch],
    schedules=[transcript_reconcile],
    resources={"nous": NousResource()},
)

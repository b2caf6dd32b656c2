"""The one Dagster ``Definitions`` for Nous; ``workspace.yaml`` points here."""

import dagster as dg

from nous_assets.defs.assets import ASSET_CHECKS, PIPELINE_ASSETS
from nous_assets.defs.resources import NousResource
from nous_assets.defs.sensors import ingest_job, transcript_reconcile, transcript_watch
from nous_assets.pipeline.steps import LAPTOP

PLAN = LAPTOP
"""The ingest steps this code location runs: all of them, one asset each (see ``defs/assets``)."""

defs = dg.Definitions(
    assets=PIPELINE_ASSETS,
    asset_checks=ASSET_CHECKS,
    jobs=[ingest_job],
    sensors=[transcript_watch],
    schedules=[transcript_reconcile],
    resources={"nous": NousResource()},
)

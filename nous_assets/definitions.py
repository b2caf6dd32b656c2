"""The one Dagster ``Definitions`` for Nous; ``workspace.yaml`` points here."""

import dagster as dg

defs = dg.Definitions(assets=[])

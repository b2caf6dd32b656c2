"""Daily partitions: the UTC date of transcript activity."""

from __future__ import annotations

import warnings

import dagster as dg

from nous_assets.settings import load_settings


def daily_partitions() -> dg.DailyPartitionsDefinition:
    """Start date from settings (``partition_start`` / ``NOUS_PARTITION_START``); today is included."""
    return dg.DailyPartitionsDefinition(start_date=load_settings().partition_start, end_offset=1)


# BackfillPolicy.single_run() is how a whole date range runs as one run (CLI and UI); it is "beta" in 1.13.
warnings.filterwarnings("ignore", category=dg.BetaWarning)

daily = daily_partitions()

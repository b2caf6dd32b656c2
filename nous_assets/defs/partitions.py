"""Daily partitions: the UTC date of transcript activity, and the decorator every daily asset uses.

The partitions start on the first transcript day, recorded in the data dir by ``nous run`` / ``nous backfill``
before they load the graph (:mod:`nous_assets.capture.first_day`: one small file, no config, never fails),
so the UI shows no "missing" days before the user's history began; with nothing recorded they start on
:data:`~nous_assets.settings.FIRST_PARTITION_DAY`, which covers every day a setting allows.
``partition_start`` only chooses which days get ingested.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dagster as dg

from nous_assets.capture import first_day
from nous_assets.settings import FIRST_PARTITION_DAY

START = first_day.recorded(FIRST_PARTITION_DAY)
"""The first partition ('YYYY-MM-DD'), read once when the graph is imported."""

daily = dg.DailyPartitionsDefinition(start_date=START, end_offset=1)
"""One partition per UTC day from :data:`START` through today (``end_offset=1``)."""


def daily_asset(**kwargs: Any) -> Callable[[Callable[..., Any]], dg.AssetsDefinition]:
    """``@dg.asset`` on the daily partitions whose date ranges run as ONE run (``BackfillPolicy.single_run``).

    A range in one run is how ``nous backfill`` and the UI ingest history without a run per day; the assets
    loop over ``context.partition_keys``. Dagster 1.13 flags the ``backfill_policy`` parameter as beta: we
    depend on it knowingly, so its BetaWarning is silenced for these decorator calls only (never globally).
    """

    def decorate(fn: Callable[..., Any]) -> dg.AssetsDefinition:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", dg.BetaWarning)
            return dg.asset(partitions_def=daily, backfill_policy=dg.BackfillPolicy.single_run(), **kwargs)(fn)

    return decorate

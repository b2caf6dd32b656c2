"""Daily partitions: the UTC date of transcript activity, and the decorator every daily asset uses.

The partitions start on a constant day (:data:`~nous_assets.settings.FIRST_PARTITION_DAY`), so importing
the asset graph reads no settings; ``partition_start`` only chooses which of these days get ingested.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import dagster as dg

from nous_assets.settings import FIRST_PARTITION_DAY

daily = dg.DailyPartitionsDefinition(start_date=FIRST_PARTITION_DAY, end_offset=1)
"""One partition per UTC day from :data:`FIRST_PARTITION_DAY` through today (``end_offset=1``)."""


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

"""`nous backfill`: run the capture -> extract -> project assets for a range of days, in-process.

Each day is one Dagster run (``materialize``) recorded in the persistent instance, so backfills
show up in the UI exactly like the ones launched from it.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg

from nous_assets.capture.days import file_days
from nous_assets.capture.scan import candidate_files
from nous_assets.datadir import check_data_dir
from nous_assets.defs.assets.capture import SOURCE_TAG, learning_events, transcripts
from nous_assets.defs.assets.memory import memories
from nous_assets.defs.assets.retrieval import edges, embeddings, injection_cache
from nous_assets.defs.failures import failure_reason
from nous_assets.defs.resources import NousResource
from nous_assets.errors import NousError
from nous_assets.settings import Settings

REPO_DAGSTER_YAML = Path(__file__).resolve().parents[2] / "dagster.yaml"


def parse_since(text: str, today: date | None = None) -> date:
    """'90d', '12w' or an ISO date."""
    today = today or datetime.now(UTC).date()
    text = text.strip().lower()
    try:
        if text.endswith("d"):
            return today - timedelta(days=int(text[:-1]))
        if text.endswith("w"):
            return today - timedelta(weeks=int(text[:-1]))
        return date.fromisoformat(text)
    except ValueError:
        raise NousError(f"--since expects a duration like 90d or 12w, or a date YYYY-MM-DD; got {text!r}") from None


def activity_days(settings: Settings, start: date, end: date) -> list[str]:
    """Days in [start, end] on which some transcript has records (every timestamp of every file, no parsing)."""
    lo, hi = start.isoformat(), end.isoformat()
    days: set[str] = set()
    files, _, _ = candidate_files(settings)
    for f in files:
        info = file_days(f.path)
        if info is not None:
            days.update(d for d in (info.days or {info.fallback}) if lo <= d <= hi)
    return sorted(days)


def ensure_dagster_home(settings: Settings) -> Path:
    """Use $DAGSTER_HOME, or $NOUS_DATA_DIR/dagster with the repo's instance settings.

    Checks first that the data directory and Dagster's storage can be written (one clear line,
    not a SQLAlchemy traceback, when they are read-only or full).
    """
    home = Path(os.environ.get("DAGSTER_HOME") or settings.data_dir / "dagster")
    check_data_dir(settings, home)
    if not (home / "dagster.yaml").exists() and REPO_DAGSTER_YAML.exists():
        shutil.copyfile(REPO_DAGSTER_YAML, home / "dagster.yaml")
    os.environ["DAGSTER_HOME"] = str(home)
    return home


@dataclass
class DayResult:
    day: str
    success: bool
    learnings: int
    turns: int
    error: str | None = None


def _metadata_int(result: dg.ExecuteInProcessResult, asset: str, key: str) -> int:
    for mat in result.asset_materializations_for_node(asset):
        value = mat.metadata.get(key)
        if value is not None:
            return int(value.value)
    return 0


def run_days(
    days: list[str],
    *,
    source: str = "historical_backfill",
    resource: NousResource | None = None,
    instance: dg.DagsterInstance | None = None,
    on_day: Callable[[DayResult], None] | None = None,
) -> list[DayResult]:
    results = []
    for day in days:
        result = dg.materialize(
            [transcripts, learning_events, memories, embeddings, edges, injection_cache],
            partition_key=day,
            resources={"nous": resource or NousResource()},
            instance=instance,
            tags={SOURCE_TAG: source},
            raise_on_error=False,
        )
        error = None if result.success else failure_reason(result)
        outcome = DayResult(
            day,
            result.success,
            _metadata_int(result, "learning_events", "learnings") if result.success else 0,
            _metadata_int(result, "transcripts", "turns") if result.success else 0,
            error,
        )
        results.append(outcome)
        if on_day:
            on_day(outcome)
    return results

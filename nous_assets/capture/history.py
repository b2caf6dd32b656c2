"""What history is on disk: the days with transcript activity, the first of them, and which were never ingested.

No Dagster here: ``nous run`` and ``nous backfill`` read these (and record the first day, see
:mod:`nous_assets.capture.first_day`) *before* the asset graph is imported, because the daily partitions
start on the recorded first day when the graph is loaded.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

from nous_assets.capture.days import file_days
from nous_assets.capture.lake import turns_path
from nous_assets.capture.scan import candidate_files
from nous_assets.errors import NousError
from nous_assets.settings import Settings

ALL = "all"
"""``--since all``: every day on disk from ``partition_start`` on (Claude Code deletes old transcripts, so what
is on disk is all there will ever be)."""


def parse_since(text: str, today: date | None = None) -> date:
    """'90d', '12w' or an ISO date ('all' is resolved by the caller, which knows the first day on disk)."""
    today = today or datetime.now(UTC).date()
    text = text.strip().lower()
    try:
        if text.endswith("d"):
            return today - timedelta(days=int(text[:-1]))
        if text.endswith("w"):
            return today - timedelta(weeks=int(text[:-1]))
        return date.fromisoformat(text)
    except ValueError:
        raise NousError(
            f"--since expects a duration like 90d or 12w, a date YYYY-MM-DD or 'all'; got {text!r}"
        ) from None


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


def first_activity_day(settings: Settings, today: date | None = None) -> date | None:
    """The first day with transcript activity on or after ``partition_start`` (None: no transcripts)."""
    today = today or datetime.now(UTC).date()
    days = activity_days(settings, date.fromisoformat(settings.partition_start), today)
    return date.fromisoformat(days[0]) if days else None


def older_history(settings: Settings, before: date) -> list[str]:
    """Days before ``before`` (from ``partition_start``) with transcript activity that were never ingested."""
    first = date.fromisoformat(settings.partition_start)
    end = before - timedelta(days=1)
    if end < first:
        return []
    return [d for d in activity_days(settings, first, end) if not turns_path(settings.lake_dir, d).exists()]

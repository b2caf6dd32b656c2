"""The first transcript day, recorded in the data dir so the Dagster daily partitions start there.

Partitions from a constant day (2020-01-01) made the UI show every asset "0 % filled, 2,516 missing" after a
successful ingest. The partitions definition is built when the asset graph is imported, so it must be cheap
and must never fail: it reads one small file (:func:`recorded`) named by the environment alone (no config
file), and falls back to :data:`~nous_assets.settings.FIRST_PARTITION_DAY` (the oldest day any setting allows)
when nothing is recorded, so a graph loaded before the first ingest still covers every day.

``nous run`` and ``nous backfill`` record the day before they import the graph (:func:`record`). The day only
ever moves back: transcripts Claude Code deleted after ingestion keep their partitions (the lake holds
them), and older transcripts that appear later lower it on the next ``nous run`` or ``nous backfill``. A
Dagster process loaded before that keeps its start until it reloads (``nous run`` restarts, or "Reload" in
the UI); its sensor never requests a day before the start it loaded (``defs/sensors.py``).
"""

from __future__ import annotations

import os
from datetime import date
from pathlib import Path

from resolver import paths

NAME = "first_day"
"""File in the data dir holding one ISO date."""

ENV = "NOUS_FIRST_DAY"
"""Overrides the recorded day (tests pin the partitions with it; a value that is not a date is ignored)."""


def path(data_dir: Path) -> Path:
    return data_dir / NAME


def _valid(text: str | None, floor: str) -> str | None:
    text = (text or "").strip()
    try:
        day = date.fromisoformat(text).isoformat()
    except ValueError:
        return None
    return max(day, floor)


def recorded(floor: str, env: dict[str, str] | None = None) -> str:
    """The partitions' first day: ``NOUS_FIRST_DAY``, else the recorded day, else ``floor``; never before
    ``floor`` and never raises (an unreadable data dir reads as nothing recorded)."""
    pinned = _valid((os.environ if env is None else env).get(ENV), floor)
    if pinned:
        return pinned
    try:
        text = path(paths.data_dir(env)).read_text(encoding="utf-8")  # None: as installed (resolver.paths)
    except (OSError, ValueError, UnicodeDecodeError):
        return floor
    return _valid(text, floor) or floor


def record(data_dir: Path, day: date) -> str:
    """Lower the recorded first day to ``day`` (never raise it); atomic and idempotent. Returns the day kept."""
    target = path(data_dir)
    try:
        current = _valid(target.read_text(encoding="utf-8"), "0001-01-01")
    except (OSError, UnicodeDecodeError):
        current = None
    if current is not None and current <= day.isoformat():
        return current
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{NAME}.{os.getpid()}.tmp")
    tmp.write_text(day.isoformat() + "\n", encoding="utf-8")
    os.replace(tmp, target)
    return day.isoformat()

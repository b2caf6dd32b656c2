"""One developer's run in team mode: the developer's new days captured into its lake, extracted, cursors
promoted, each touched project's history read, by the laptop's own steps.

The lake, queue, cursors and project identity are the developer's (its staging ``cortex.db``); the events go
into the tenant's working database, where the team's log is projected and its packets are built: extraction
compares each learning with the team's memories there, and no event is projected anywhere else.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime

from nous_assets.capture.scan import plan_new_data
from nous_assets.errors import ConfigError
from nous_assets.extract.worker import DrainStats
from nous_assets.history.update import HistoryStats
from nous_assets.pipeline.capture import capture
from nous_assets.pipeline.run import IngestRun
from nous_assets.pipeline.steps import run_steps
from nous_assets.settings import Settings
from nous_assets.store.db import Connection
from nous_assets.store.ingest.floor import floor_or_default, lower_floor
from nous_assets.store.sqlite import queue
from nous_assets.store.sqlite.projection import get_checkpoint
from nous_assets.team.steps import DEVELOPER_STEPS

SINCE_TAG = "nous/since"
"""Run tag (a day, ``YYYY-MM-DD``) that makes a developer's run take history back to that day."""


def pending_days(settings: Settings, conn: Connection, since: str | None = None) -> list[str]:
    """Days with lines past the file cursors (on or after the ingest floor), and days awaiting a retry.

    The developer's first run records the floor (the default 90-day window), as a laptop's first run does,
    so the window does not slide; ``since`` (run tag ``nous/since``) lowers it to take older history.
    """
    floor = lower_floor(conn, since or floor_or_default(conn, datetime.now(UTC).date()))
    floor = max(floor, settings.partition_start)
    fresh = {d for d in plan_new_data(settings, conn).dates if d >= floor}
    return sorted(fresh | queue.days_awaiting_retry(conn))


def since_tag(tags: Mapping[str, str]) -> str | None:
    """The ``nous/since`` day of a run (ISO date), or None; a malformed one is a one-line error."""
    raw = tags.get(SINCE_TAG)
    if raw is None:
        return None
    try:
        return date.fromisoformat(raw.strip()).isoformat()
    except ValueError:
        raise ConfigError(f"run tag {SINCE_TAG}={raw!r} must be a day (YYYY-MM-DD)") from None


@dataclass
class DeveloperRun:
    """What one developer's run did: turns read, days that failed (retried by the next run), extraction."""

    turns: int = 0
    failed: dict[str, str] = field(default_factory=dict)
    stats: DrainStats = field(default_factory=DrainStats)
    history: HistoryStats = field(default_factory=HistoryStats)
    cursors_promoted: int = 0
    events_projected: int = 0


def developer_run(
    settings: Settings, conn: Connection, log: Connection, days: list[str], *, source: str, worker: str
) -> DeveloperRun:
    """:data:`~nous_assets.team.steps.DEVELOPER_STEPS` over ``days``: capture, then the days that came in are
    extracted into ``log`` (the tenant's working database), their cursors promoted and each touched project's
    history read.

    As on a laptop, one bad day does not stop the others (its files keep their cursors, so the next run
    retries it); storage failures stop the run with the reason, and so does a run where no day came in.
    """
    run = IngestRun(settings, conn, days, source, worker, log=log)
    captured = capture(run)
    captured.require_some_day(days)
    before = get_checkpoint(log)
    done = run_steps(replace(run, days=captured.done), [s for s in DEVELOPER_STEPS if s != "capture"])
    return DeveloperRun(done["extract"].turns, captured.failed, done["extract"].drain, done["history"],
                        done["promote_cursors"], get_checkpoint(log) - before)  # fmt: skip

"""What every ingest step is given: the settings, the open database, the days of the run and who runs it."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from nous_assets.settings import Settings
from nous_assets.store.db import Connection


@dataclass
class IngestRun:
    """One run over ``days`` of one database: the steps read their inputs from here, never from the environment.

    ``days`` are the partition days the run covers (empty for a tenant's derived steps: the tenant has no lake);
    ``source`` is what started it (``fs_watch``, ``fs_reconcile``, ``historical_backfill``, ``user_review``),
    recorded on the events it writes; ``worker`` names the queue claims of its extraction. ``log`` holds the event
    log and its projection when ``conn`` does not (team mode: a developer's run keeps its lake, queue, cursors and
    identity in its staging database and writes its events into the tenant's working database, where they are
    projected once).
    """

    settings: Settings
    conn: Connection
    days: list[str] = field(default_factory=list)
    source: str = "historical_backfill"
    worker: str = "nous"
    clock: datetime | None = None  # retention's "as of"; None: the end of the last day, never later than now
    log: Connection | None = None


def partition_clock(partition_keys: list[str], now: datetime | None = None) -> datetime:
    """The end of the last day a run covers, never later than now: what retention is decided as of."""
    end = datetime.fromisoformat(max(partition_keys)).replace(tzinfo=UTC) + timedelta(days=1)
    return min(end, now or datetime.now(UTC))


def run_clock(run: IngestRun) -> datetime:
    """The run's retention clock: given, else the end of its last day, else (no days: a tenant) now."""
    if run.clock is not None:
        return run.clock
    return partition_clock(run.days) if run.days else datetime.now(UTC)

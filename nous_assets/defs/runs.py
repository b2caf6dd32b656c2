"""What the Dagster instance knows about ingest runs: the days they cover, which are in flight, dead ones.

The watch sensor and the reconcile schedule must never request a day that a queued or running run
already covers: before this, every scan re-requested a day while its run waited (with a new run key
whenever a transcript grew), and the first ``make run`` launched 15 runs for 7 days. A run covers
days through its partition tag or its partition-range tags (the ranged run of ``nous backfill``).

A run whose process was killed (``kill -9``, a closed laptop lid that never woke the run, a crash)
stays STARTED in the instance forever: it would block its days and keep its concurrency-pool slot.
So every run records the process executing it (:data:`WORKER_TAG`: set at creation by the CLI's
in-process runs, when the run's resources start otherwise) and :func:`reap_dead_runs` marks runs
whose process is gone as failed and frees their slots.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Iterable, Mapping
from datetime import date, timedelta
from pathlib import Path

import dagster as dg

PARTITION_TAG = "dagster/partition"
RANGE_START_TAG = "dagster/asset_partition_range_start"
RANGE_END_TAG = "dagster/asset_partition_range_end"
WORKER_TAG = "nous/worker"  # host:pid:start-time of the process executing the run

IN_FLIGHT = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]
_HAS_PROCESS = {  # statuses in which a run tagged with its worker depends on that process being alive
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
}


def range_tags(first: str, last: str) -> dict[str, str]:
    """Tags that make one run materialise every day from ``first`` to ``last`` (single-run backfill policy)."""
    return {RANGE_START_TAG: first, RANGE_END_TAG: last}


def covered_days(tags: Mapping[str, str]) -> list[str]:
    """The days a run materialises, from its partition or partition-range tags (none for other runs)."""
    if PARTITION_TAG in tags:
        return [tags[PARTITION_TAG]]
    if RANGE_START_TAG not in tags or RANGE_END_TAG not in tags:
        return []
    try:
        day, last = date.fromisoformat(tags[RANGE_START_TAG]), date.fromisoformat(tags[RANGE_END_TAG])
    except ValueError:
        return []
    days = []
    while day <= last:
        days.append(day.isoformat())
        day += timedelta(days=1)
    return days


def in_flight_runs(instance: dg.DagsterInstance) -> list[dg.DagsterRun]:
    """Runs that are queued, starting, running or cancelling."""
    return list(instance.get_runs(filters=dg.RunsFilter(statuses=IN_FLIGHT)))


def in_flight_days(instance: dg.DagsterInstance) -> set[str]:
    """Days covered by a queued or running run (after marking runs with a dead process as failed)."""
    reap_dead_runs(instance)
    return {day for run in in_flight_runs(instance) for day in covered_days(run.tags)}


def _process_start(pid: int) -> str:
    """The process's start time in clock ticks since boot (Linux), so a reused pid is not mistaken for it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return ""
    fields = stat.rsplit(")", 1)[-1].split()
    return fields[19] if len(fields) > 19 else ""


def worker_id() -> str:
    """This process, as recorded in :data:`WORKER_TAG`."""
    pid = os.getpid()
    return f"{socket.gethostname()}:{pid}:{_process_start(pid)}"


def worker_alive(worker: str) -> bool:
    """False only when the recorded process is certainly gone (same host, no such pid or a different start)."""
    parts = worker.rsplit(":", 2)
    if len(parts) != 3 or not parts[1].isdigit():
        return True
    host, pid, started = parts[0], int(parts[1]), parts[2]
    if host != socket.gethostname():
        return True  # another machine's process: we cannot tell
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return not started or _process_start(pid) in ("", started)


def reap_dead_runs(instance: dg.DagsterInstance, runs: Iterable[dg.DagsterRun] | None = None) -> list[str]:
    """Mark started runs whose recorded process is gone as failed and free their pool slots; returns their ids.

    Nothing is lost by this: the assets are idempotent and file cursors only advance after extraction
    completed, so the days of a reaped run are simply requested again.
    """
    reaped = []
    for run in in_flight_runs(instance) if runs is None else runs:
        worker = run.tags.get(WORKER_TAG)
        if run.status not in _HAS_PROCESS or not worker or worker_alive(worker):
            continue
        instance.report_run_failed(run, f"the process executing this run ({worker}) is gone; marked failed by Nous")
        if instance.event_log_storage.supports_global_concurrency_limits:
            instance.event_log_storage.free_concurrency_slots_for_run(run.run_id)
        reaped.append(run.run_id)
    return reaped


def cancel_superseded(instance: dg.DagsterInstance, first: str, last: str) -> list[str]:
    """Cancel queued (not yet started) runs whose days all lie in ``first``..``last``: a run over that range is
    about to ingest them, and the queue would only run them again afterwards. Returns their ids."""
    span = set(covered_days(range_tags(first, last)))
    canceled = []
    for run in instance.get_runs(filters=dg.RunsFilter(statuses=[dg.DagsterRunStatus.QUEUED])):
        days = covered_days(run.tags)
        if days and set(days) <= span:
            instance.report_run_canceled(run, f"superseded by a run over {first}..{last}")
            canceled.append(run.run_id)
    return canceled

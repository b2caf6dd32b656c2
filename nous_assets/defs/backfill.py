"""`nous backfill` and the start of `nous run`: history as ranged runs of ``ingest_job``, in-process.

One run over a whole stretch of days (the assets loop over ``context.partition_keys``; single-run
backfill policy) instead of a run per day: the projection, embedding, edge and cache steps run once,
and the instance shows one run for the stretch, exactly like a range launched from the UI. History
with long gaps (months without a session) is split at the gaps (:func:`stretches`), still one run
per day at most. Runs are recorded in the persistent instance, so the watch sensor sees their days
as in flight and never requests them again meanwhile. Their events drive progress callbacks.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date

import dagster as dg

from nous_assets.capture.history import activity_days, older_history, parse_since  # noqa: F401  (their old home)
from nous_assets.defs.assets import PIPELINE_ASSETS
from nous_assets.defs.assets.capture import SOURCE_TAG
from nous_assets.defs.failures import failure_reason
from nous_assets.defs.resources import NousResource
from nous_assets.defs.runs import WORKER_TAG, range_tags, worker_id

QUIET_CONSOLE = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
"""In-process runs of the CLI print nothing themselves: their events drive the progress line instead."""


MAX_GAP_DAYS = 3
"""Empty days a range bridges between days with activity; a longer gap starts the next run. Every day of a
range costs a dozen event-log writes even when it has no transcripts (measured: ~0.7 s a day on the 2-core
dev machine), while another run costs ~2 s: weekends stay inside one run, months without sessions do not."""


MAX_RUN_DAYS = 31
"""Calendar days one ranged run covers at most: a long history becomes several runs, so the CLI can show days
done / total and the memories so far between them, and an interrupted first run keeps every finished run
(each extra run costs ~2 s and one pass of the whole-store steps)."""


def stretches(days: list[str], max_gap: int = MAX_GAP_DAYS, max_span: int | None = None) -> list[tuple[str, str]]:
    """(first, last) of each stretch of ``days`` whose gaps are at most ``max_gap`` empty days and which spans at
    most ``max_span`` calendar days (None: no limit)."""
    out: list[tuple[str, str]] = []
    for day in sorted(set(days)):
        current = date.fromisoformat(day)
        if out and (current - date.fromisoformat(out[-1][1])).days <= max_gap + 1 and (
            max_span is None or (current - date.fromisoformat(out[-1][0])).days < max_span
        ):
            out[-1] = (out[-1][0], day)
        else:
            out.append((day, day))
    return out


@dataclass(frozen=True)
class RunEvent:
    """What a run just did, for a progress display: a step started, finished or failed, or a log message."""

    kind: str  # start | done | failed | log
    step: str
    message: str = ""
    level: int = logging.INFO


def run_event(entry: dg.EventLogEntry) -> RunEvent | None:
    """The progress-relevant part of a Dagster event log entry (None for engine chatter)."""
    if entry.is_dagster_event:
        event = entry.get_dagster_event()
        kind = {"STEP_START": "start", "STEP_SUCCESS": "done", "STEP_FAILURE": "failed"}.get(event.event_type_value)
        if kind is None or not entry.step_key:
            return None
        message = ""
        if kind == "failed" and event.step_failure_data.error is not None:
            if event.step_failure_data.error.cls_name == "DagsterExecutionInterruptedError":
                return None  # Ctrl-C: the CLI says it stopped, the step did not fail
            message = event.step_failure_data.error.message.strip()
        return RunEvent(kind, entry.step_key, message, entry.level)
    if entry.step_key and entry.user_message and entry.level >= logging.INFO:
        return RunEvent("log", entry.step_key, entry.user_message, entry.level)
    return None


@dataclass
class RangeResult:
    """What one ranged run did: its outcome and the totals the CLI summarises."""

    run_id: str
    first: str
    last: str
    success: bool
    turns: int = 0
    learnings: int = 0
    failed_days: dict[str, str] = field(default_factory=dict)  # days the transcripts step could not ingest
    failed_step: str | None = None
    error: str | None = None


def _first_metadata(result: dg.ExecuteInProcessResult, asset: str, key: str):
    """A range materialises every day with the run's totals attached to each: read them once."""
    for mat in result.asset_materializations_for_node(asset):
        value = mat.metadata.get(key)
        if value is not None:
            return value.value
    return None


def _listener(on_event: Callable[[RunEvent], None]) -> Callable[[dg.EventLogEntry], None]:
    def listen(entry: dg.EventLogEntry) -> None:
        try:
            event = run_event(entry)
            if event is not None:
                on_event(event)
        except Exception:  # a display problem must never fail the run
            logging.getLogger(__name__).debug("progress callback failed", exc_info=True)

    return listen


@contextmanager
def _own_state_storage(instance: dg.DagsterInstance) -> Iterator[None]:
    """Resolve definitions against ``instance``'s defs-state storage for the length of a run.

    Dagster reads that storage from a context variable an instance sets when it is entered; an instance
    entered earlier in the same process can leave it set after being collected, and resolving the job then
    fails with "Attempted to resolve undefined DagsterInstance weakref". Runs started here never depend on
    what ran before them in the process.
    """
    from nous_assets.defs.dagster_internals import set_defs_state_storage

    with set_defs_state_storage(instance.defs_state_storage):
        yield


def job_steps() -> int:
    """How many steps a run of ``ingest_job`` has (assets and their checks), for a progress total."""
    from nous_assets.definitions import defs

    return len(defs.resolve_job_def("ingest_job").graph.nodes)


def run_range(
    first: str,
    last: str,
    *,
    instance: dg.DagsterInstance,
    source: str = "historical_backfill",
    resource: NousResource | None = None,
    on_event: Callable[[RunEvent], None] | None = None,
) -> RangeResult:
    """Run ``ingest_job`` once over every day from ``first`` to ``last``, in this process, recorded in ``instance``.

    Never raises for a failed run: the result says which step failed and why. Nothing done before a
    failure is lost (lake partitions, events and vectors are written idempotently; file cursors only
    advance once extraction completed), so running the same range again finishes the work.
    """
    from nous_assets.definitions import defs
    from nous_assets.defs.dagster_internals import check_captured_interrupt

    run_id = str(uuid.uuid4())
    interrupted = []

    def listen(entry: dg.EventLogEntry) -> None:
        # Dagster holds a Ctrl-C during the run until the next step checkpoint, which may never come (the last
        # step was running): seen here, on the run's own events, it is never lost
        if check_captured_interrupt():
            interrupted.append(True)
        if on_event is not None:
            progress(entry)

    progress = _listener(on_event) if on_event is not None else None
    instance.add_event_listener(run_id, listen)
    with _own_state_storage(instance):
        result = defs.resolve_job_def("ingest_job").execute_in_process(
            run_config=QUIET_CONSOLE,
            instance=instance,
            partition_key=first if first == last else None,
            tags={SOURCE_TAG: source, WORKER_TAG: worker_id(), **({} if first == last else range_tags(first, last))},
            run_id=run_id,
            raise_on_error=False,
            resources={"nous": resource} if resource is not None else None,
        )
    if interrupted or _interrupted(result):
        raise KeyboardInterrupt  # the CLI stops (what finished is kept); never "FAILED" and on to the next range
    outcome = RangeResult(run_id, first, last, result.success)
    outcome.turns = int(_first_metadata(result, "transcripts", "turns") or 0)
    outcome.learnings = int(_first_metadata(result, "learning_events", "learnings") or 0)
    outcome.failed_days = dict(_first_metadata(result, "transcripts", "failed_days") or {})
    if not result.success:
        failed = next((e for e in result.all_events if e.is_step_failure), None)
        outcome.failed_step = failed.step_key if failed is not None else None
        outcome.error = failure_reason(result).removeprefix(f"{outcome.failed_step}: ")
    return outcome


def _interrupted(result: dg.ExecuteInProcessResult) -> bool:
    """The run ended because this process got SIGINT (Dagster: a run failure of reason UNEXPECTED_TERMINATION)."""
    from nous_assets.defs.dagster_internals import RunFailureReason

    return any(
        getattr(event.event_specific_data, "failure_reason", None) == RunFailureReason.UNEXPECTED_TERMINATION
        for event in result.all_events
        if event.event_type_value == "PIPELINE_FAILURE"
    )


@dataclass
class DayResult:
    day: str
    success: bool
    learnings: int
    turns: int
    error: str | None = None


def _metadata_int(result: dg.ExecuteInProcessResult, asset: str, key: str) -> int:
    return int(_first_metadata(result, asset, key) or 0)


def run_days(
    days: list[str],
    *,
    source: str = "historical_backfill",
    resource: NousResource | None = None,
    instance: dg.DagsterInstance | None = None,
    on_day: Callable[[DayResult], None] | None = None,
) -> list[DayResult]:
    """One run per day (tests and benchmarks that step through days); the CLI uses :func:`run_range`."""
    results = []
    instance = instance or dg.DagsterInstance.ephemeral()
    for day in days:
        with _own_state_storage(instance):
            result = dg.materialize(
                PIPELINE_ASSETS,
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

"""Runs resolve the job against their own instance, whatever an earlier instance in the process left behind."""

from __future__ import annotations

import gc

import dagster as dg
from dagster._core.storage.defs_state.base import DefsStateStorage, set_defs_state_storage

from nous_assets.defs.backfill import run_days, run_range


def test_a_collected_instance_left_as_the_current_state_storage_does_not_break_runs(pipeline_factory, tmp_path):
    """Seen in CI: a persistent instance entered by an earlier test left Dagster's defs-state context variable
    pointing at its storage; once collected, resolving any job failed with "undefined DagsterInstance weakref"."""
    pipe = pipeline_factory(str(tmp_path / "none" / "**" / "*.jsonl"))
    (tmp_path / "dagster").mkdir()
    gone = dg.DagsterInstance.local_temp(str(tmp_path / "dagster"))  # persistent: it has a state storage
    stale = set_defs_state_storage(gone.defs_state_storage)
    stale.__enter__()
    try:
        del gone
        gc.collect()
        assert DefsStateStorage.get() is not None  # the stale storage is what the next resolve would read
        (day,) = run_days(["2026-01-05"], resource=pipe.resource())
        assert day.success, day.error
        instance = dg.DagsterInstance.ephemeral()
        ranged = run_range("2026-01-05", "2026-01-06", instance=instance, resource=pipe.resource())
        assert ranged.success, ranged.error
    finally:
        stale.__exit__(None, None, None)

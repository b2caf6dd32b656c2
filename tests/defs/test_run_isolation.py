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
    storage = gone.defs_state_storage
    del gone
    # collected before the storage is made current: a collection can also finalize a context manager an earlier
    # test abandoned, whose exit sets the variable to None (which is how this test once failed in CI)
    gc.collect()
    stale = set_defs_state_storage(storage)
    stale.__enter__()
    try:
        assert DefsStateStorage.get() is storage  # the stale storage (its instance gone) the next resolve would read
        (day,) = run_days(["2026-01-05"], resource=pipe.resource())
        assert day.success, day.error
        instance = dg.DagsterInstance.ephemeral()
        ranged = run_range("2026-01-05", "2026-01-06", instance=instance, resource=pipe.resource())
        assert ranged.success, ranged.error
    finally:
        stale.__exit__(None, None, None)

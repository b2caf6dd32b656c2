"""The only door from product code into Dagster's private modules (``dagster._core``, ``dagster._utils``).

Checked against dagster 1.13.27 (the pin in ``constraints.txt``). Dagster may move or change these between
releases without notice, so when the pin moves, check each one here and bump the version named above
(``tests/test_import_layers.py`` fails until this docstring names the pinned version). What each is for:

``set_defs_state_storage``
    a context manager setting the defs-state storage Dagster resolves definitions against; an in-process run
    (``defs.backfill``) sets its own instance's, so a collected instance entered earlier in the process cannot
    break it ("undefined DagsterInstance weakref"). No public API sets it.
``check_captured_interrupt``
    whether Dagster captured (and is holding) a Ctrl-C during an in-process run; ``defs.backfill`` checks it on
    every run event so a Ctrl-C held until a step checkpoint that never comes is not lost.
``RunFailureReason``
    why a run failed; ``UNEXPECTED_TERMINATION`` is how Dagster records that this process got SIGINT, which
    ``defs.backfill`` turns back into a ``KeyboardInterrupt`` (not a failed range).
``InstigatorType``
    the kind of a schedule or sensor state; ``nous doctor`` lists the SENSOR states to find the watch sensor's
    status and last tick (``DagsterInstance.all_instigator_state`` takes it and the top-level package does not
    export it).
"""

from __future__ import annotations

from dagster._core.events import RunFailureReason
from dagster._core.scheduler.instigation import InstigatorType
from dagster._core.storage.defs_state.base import set_defs_state_storage
from dagster._utils.interrupts import check_captured_interrupt

__all__ = ["InstigatorType", "RunFailureReason", "check_captured_interrupt", "set_defs_state_storage"]

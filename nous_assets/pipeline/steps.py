"""The ingest step, one ordered list of named steps, and what each code location runs of it.

The order is the laptop's dependency order: capture -> extract -> auto-memory notes -> promote cursors ->
project history -> session outcomes -> retention -> project -> embed -> link -> NLI -> consolidation ->
interventions -> packets. A code location declares a :class:`Plan`: which steps it runs and, for every other
step, why not; a plan that forgets a step (neither run nor skipped with a reason) is refused when it is built.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from nous_assets.pipeline import capture, derived
from nous_assets.pipeline.run import IngestRun


@dataclass(frozen=True)
class Step:
    """One named step: the function that does it over an :class:`IngestRun`, and what it does, in a line."""

    name: str
    run: Callable[[IngestRun], Any]
    does: str


INGEST_STEPS: tuple[Step, ...] = (
    Step("capture", capture.capture, "the days' transcripts parsed, de-duplicated and redacted into the lake"),
    Step("extract", capture.extract, "the days' turns queued and extracted into the event log"),
    Step("auto_memory", capture.auto_memory, "Claude Code's auto-memory notes in as learnings"),
    Step("promote_cursors", capture.promote, "file cursors moved past the lines extracted"),
    Step("history", derived.history, "each touched project's brief and removals, as events"),
    Step("outcomes", derived.outcomes, "injected memories judged by the session that followed"),
    Step("retention", derived.retention, "decay, archival and rotation, as events"),
    Step("project", derived.project, "the log projected into current memories"),
    Step("embed", derived.embed, "memory and transcript-chunk vectors"),
    Step("link", derived.link, "relates_to and causes edges"),
    Step("nli", derived.nli, "contradictions between current memories"),
    Step("consolidate", derived.consolidation, "alike memories grouped into observations"),
    Step("interventions", derived.interventions, "observers and the reducer: active interventions"),
    Step("packets", derived.packets, "SessionStart packets per project and the global one"),
)

STEP_NAMES: tuple[str, ...] = tuple(s.name for s in INGEST_STEPS)
_BY_NAME = {s.name: s for s in INGEST_STEPS}


def step(name: str) -> Step:
    """The step called ``name`` (a KeyError names the unknown step)."""
    return _BY_NAME[name]


def in_order(names: Iterable[str]) -> tuple[str, ...]:
    """``names`` in the step list's order; an unknown name is an error, not a silently skipped step."""
    wanted = set(names)
    unknown = wanted - set(STEP_NAMES)
    if unknown:
        raise ValueError(f"unknown ingest step(s): {', '.join(sorted(unknown))}")
    return tuple(n for n in STEP_NAMES if n in wanted)


def run_steps(run: IngestRun, names: Iterable[str]) -> dict[str, Any]:
    """Run the named steps over ``run`` in the list's order; returns each step's stats by name."""
    return {name: step(name).run(run) for name in in_order(names)}


@dataclass(frozen=True)
class Plan:
    """What one code location runs of the step list, and why it skips the rest (every step is one or the other)."""

    location: str
    runs: tuple[str, ...]
    skips: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "runs", in_order(self.runs))
        both = set(self.runs) & set(self.skips)
        forgotten = set(STEP_NAMES) - set(self.runs) - set(self.skips)
        if both or forgotten or not all(self.skips.values()) or set(self.skips) - set(STEP_NAMES):
            raise ValueError(
                f"plan {self.location!r}: every step is run or skipped with a reason "
                f"(run and skipped: {sorted(both)}, neither: {sorted(forgotten)})"
            )


LAPTOP = Plan("laptop (nous_assets.definitions)", runs=STEP_NAMES)
"""The laptop runs every step, one asset each (``extract``, ``auto_memory`` and ``promote_cursors`` are the
``learning_events`` asset); ``metrics`` reads what they wrote and is no ingest step."""

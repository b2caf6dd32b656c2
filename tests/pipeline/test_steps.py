"""The ingest step list and the plans of the two code locations: every step is run or skipped with a reason,
and the laptop's assets call the step functions themselves (read from their source with ``ast``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from nous_assets.pipeline.steps import INGEST_STEPS, LAPTOP, STEP_NAMES, Plan, in_order
from nous_assets.team.steps import DEVELOPER_STEPS, SKIPPED, TEAM, TENANT_STEPS

ASSETS = Path(__file__).resolve().parents[2] / "nous_assets" / "defs" / "assets"


def test_the_list_is_in_the_laptops_dependency_order():
    assert STEP_NAMES == ("capture", "extract", "auto_memory", "promote_cursors", "history", "outcomes", "retention",
                          "project", "embed", "link", "nli", "consolidate", "interventions", "packets")  # fmt: skip
    assert in_order(["packets", "capture", "project"]) == ("capture", "project", "packets")
    with pytest.raises(ValueError, match="unknown ingest step"):
        in_order(["capture", "compact"])


@pytest.mark.parametrize(
    ("runs", "skips"),
    [
        (STEP_NAMES[:-1], {}),  # packets forgotten
        (STEP_NAMES, {"packets": "twice"}),  # run and skipped
        (STEP_NAMES[:-1], {"packets": ""}),  # skipped without a reason
        (STEP_NAMES, {"compact": "no such step"}),
    ],
)
def test_a_plan_that_forgets_a_step_or_gives_no_reason_is_refused(runs, skips):
    with pytest.raises(ValueError, match="every step is run or skipped"):
        Plan("somewhere", runs=runs, skips=skips)


def test_team_mode_runs_the_developer_and_tenant_steps_and_names_what_it_skips():
    assert TEAM.runs == DEVELOPER_STEPS + TENANT_STEPS
    assert set(SKIPPED) == {"auto_memory", "outcomes"}
    assert {"retention", "nli", "interventions"} <= set(TENANT_STEPS)  # the tenant's lifecycle is a laptop's
    assert LAPTOP.runs == STEP_NAMES and not LAPTOP.skips


def test_the_laptops_assets_call_every_step_function():
    called = set()
    for path in ASSETS.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            func = node.func if isinstance(node, ast.Call) else None
            if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "steps":
                called.add(func.attr)
    assert {s.run.__name__ for s in INGEST_STEPS} <= called

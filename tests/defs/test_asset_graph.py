"""The asset graph as text, compared with a committed snapshot, so a change to the graph shows as a diff.

The snapshot names every asset (its deps, group, kinds, pool, partitions, backfill policy and checks),
every job (the assets it selects), sensor and schedule. A deliberate change: rerun this test with
``NOUS_UPDATE_SNAPSHOTS=1`` and commit the rewritten ``snapshots/asset_graph.txt`` with the change.
"""

from __future__ import annotations

import difflib
import os
from pathlib import Path

import dagster as dg

from nous_assets.definitions import defs

SNAPSHOT = Path(__file__).parent / "snapshots" / "asset_graph.txt"


def _partitions(partitions_def: dg.PartitionsDefinition | None) -> str:
    if partitions_def is None:
        return "none"
    if isinstance(partitions_def, dg.DailyPartitionsDefinition):
        start = partitions_def.start.strftime("%Y-%m-%d")
        return f"daily from {start} ({partitions_def.timezone}), end offset {partitions_def.end_offset}"
    return type(partitions_def).__name__


def _names(keys) -> str:
    return ", ".join(sorted(k.to_user_string() for k in keys)) or "-"


def describe(definitions: dg.Definitions) -> list[str]:
    """One block per asset in dependency order, then jobs, sensors and schedules: stable, diff-friendly text."""
    graph = definitions.resolve_asset_graph()
    lines: list[str] = []
    for key in graph.toposorted_asset_keys:
        node = graph.get(key)
        lines += [
            f"asset {key.to_user_string()}",
            f"  deps: {_names(node.parent_keys)}",
            f"  group: {node.group_name}",
            f"  kinds: {', '.join(sorted(node.kinds)) or '-'}",
            f"  pools: {', '.join(sorted(node.pools or ())) or '-'}",
            f"  partitions: {_partitions(node.partitions_def)}",
            f"  backfill: {node.backfill_policy}",
            f"  checks: {', '.join(sorted(c.name for c in node.check_keys)) or '-'}",
        ]
    for job in sorted(definitions.jobs or [], key=lambda j: j.name):
        resolved = definitions.resolve_job_def(job.name)
        selected = resolved.asset_layer.selected_asset_keys
        lines.append(f"job {job.name}: {_names(selected)}")
    for sensor in sorted(definitions.sensors or [], key=lambda s: s.name):
        lines.append(f"sensor {sensor.name}: job {sensor.job_name}, every {sensor.minimum_interval_seconds}s")
    for schedule in sorted(definitions.schedules or [], key=lambda s: s.name):
        lines.append(f"schedule {schedule.name}: job {schedule.job_name}, cron {schedule.cron_schedule}")
    lines.append(f"resources: {', '.join(sorted(definitions.resources or {}))}")
    return lines


def test_asset_graph_matches_snapshot():
    current = describe(defs)
    if os.environ.get("NOUS_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text("\n".join(current) + "\n", encoding="utf-8")
    expected = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    diff = "\n".join(difflib.unified_diff(expected, current, "snapshot", "definitions", lineterm=""))
    assert current == expected, f"the asset graph changed (NOUS_UPDATE_SNAPSHOTS=1 to accept):\n{diff}"


def test_snapshot_shows_a_change_as_a_diff():
    """The comparison is not vacuous: the graph without one asset differs, and the diff names it."""
    from nous_assets.defs.assets import ASSET_CHECKS, PIPELINE_ASSETS

    leaf = PIPELINE_ASSETS[-1].key.to_user_string()  # nothing depends on the last asset
    smaller = dg.Definitions(assets=[a for a in PIPELINE_ASSETS if a.key.to_user_string() != leaf],
                             asset_checks=ASSET_CHECKS, resources=defs.resources)
    expected = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    diff = list(difflib.unified_diff(expected, describe(smaller), lineterm=""))
    assert f"-asset {leaf}" in diff
    assert not any(line.startswith("+asset") for line in diff)


def test_only_the_memories_asset_projects_and_outcomes_come_before_it():
    """Issue 9 item 2: every event is written upstream of the one projecting asset."""
    graph = defs.resolve_asset_graph()
    order = [k.to_user_string() for k in graph.toposorted_asset_keys]
    assert order.index("session_outcomes") < order.index("memories") < order.index("injection_cache")
    assert dg.AssetKey("session_outcomes") in graph.get(dg.AssetKey("memories")).parent_keys

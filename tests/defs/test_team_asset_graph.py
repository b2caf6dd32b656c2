"""Team mode's graph (``nous_assets.defs.team.definitions``) as text against its own snapshot, like the laptop's:
a change to the team assets, their pool, partitions, job or sensor shows as a diff. A deliberate change:
rerun with ``NOUS_UPDATE_SNAPSHOTS=1`` and commit ``snapshots/team_asset_graph.txt``."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from test_asset_graph import describe

from nous_assets.defs.team.definitions import defs

SNAPSHOT = Path(__file__).parent / "snapshots" / "team_asset_graph.txt"


def test_team_asset_graph_matches_snapshot():
    current = describe(defs)
    if os.environ.get("NOUS_UPDATE_SNAPSHOTS") == "1":
        SNAPSHOT.write_text("\n".join(current) + "\n", encoding="utf-8")
    expected = SNAPSHOT.read_text(encoding="utf-8").splitlines()
    diff = "\n".join(difflib.unified_diff(expected, current, "snapshot", "team definitions", lineterm=""))
    assert current == expected, f"the team asset graph changed (NOUS_UPDATE_SNAPSHOTS=1 to accept):\n{diff}"
    assert any(line == "  pools: nous_llm_extraction" for line in current)  # extraction is in the LLM pool

"""The Dagster code location loads: in-process and through `dagster definitions validate`."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import dagster as dg

from nous_assets.definitions import defs

REPO = Path(__file__).resolve().parents[2]


def test_definitions_are_loadable():
    dg.Definitions.validate_loadable(defs)


def test_dagster_cli_validates_workspace(tmp_path):
    env = {**os.environ, "DAGSTER_HOME": str(tmp_path)}
    (tmp_path / "dagster.yaml").write_text((REPO / "dagster.yaml").read_text())
    dagster = Path(sys.executable).parent / "dagster"
    out = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", str(REPO / "workspace.yaml")],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "All code locations passed validation" in out.stdout + out.stderr

"""A machine with recent Claude Code history and a persistent Dagster instance (DAGSTER_HOME under tmp_path,
configured by the repo's dagster.yaml when the CLI starts)."""

from __future__ import annotations

from pathlib import Path

import pytest
from firstrun import History, recent_days


@pytest.fixture
def machine(tmp_path: Path, nous_env: dict[str, str], monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Nous paths, transcripts and DAGSTER_HOME under tmp_path (the environment the CLI and sensor read)."""
    projects = tmp_path / "home" / ".claude" / "projects"
    projects.mkdir(parents=True)
    env = {**nous_env, "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl"), "DAGSTER_HOME": str(tmp_path / "dg")}
    monkeypatch.setenv("NOUS_PROJECT_GLOB", env["NOUS_PROJECT_GLOB"])
    monkeypatch.setenv("DAGSTER_HOME", env["DAGSTER_HOME"])
    monkeypatch.delenv("NOUS_PARTITION_START", raising=False)
    monkeypatch.delenv("NOUS_EMBED_PROVIDER", raising=False)
    return env


@pytest.fixture
def week(machine: dict[str, str]) -> History:
    """Seven days of history ending today, one session a day."""
    history = History(Path(machine["NOUS_PROJECT_GLOB"]).parent.parent, recent_days(7))
    for n, day in enumerate(history.days):
        history.write_day(day, n)
    return history

"""Team mode refuses a backend that cannot hold the team's tenants, in one line naming the settings to change."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import dagster as dg

from nous_assets.defs.failures import failure_reason
from nous_assets.defs.team.assets import team_events
from nous_assets.defs.team.resources import TeamResource, developers
from nous_assets.settings import load_settings, settings_to_json


def test_team_events_on_a_sqlite_backend_fail_with_the_settings_to_set(tmp_path: Path, nous_env: dict[str, str]):
    (tmp_path / "transcripts" / "alice").mkdir(parents=True)
    settings = replace(load_settings(), backend="sqlite")
    team = TeamResource(transcripts_root=str(tmp_path / "transcripts"), staging_root=str(tmp_path / "staging"),
                        settings_json=settings_to_json(settings))  # fmt: skip
    instance = dg.DagsterInstance.ephemeral()
    instance.add_dynamic_partitions(developers.name, ["alice"])
    result = dg.materialize([team_events], partition_key="alice", resources={"team": team}, instance=instance,
                            raise_on_error=False)  # fmt: skip
    assert not result.success
    reason = failure_reason(result)  # what `nous` and the UI show: the step and our error, one line
    assert reason == "team_events: team mode shares through PostgreSQL: set NOUS_BACKEND=postgres and NOUS_PG_DSN"

"""The team-mode Dagster ``Definitions``: the code location a team runs (``deploy/team/workspace.yaml``, the
Helm chart's user deployment in ``deploy/k8s/values.yaml``). The laptop's ``nous_assets.definitions`` is
another; both call the same ingest steps (:mod:`nous_assets.pipeline`).

The resource reads its folders from the environment when a run or sensor tick starts
(``NOUS_TEAM_TRANSCRIPTS``, ``NOUS_TEAM_STAGING``, both required: Dagster names the one that is missing),
the rest from :func:`~nous_assets.settings.load_settings` (``NOUS_BACKEND=postgres``, ``NOUS_PG_DSN``, the
extractor and its endpoint): importing this module reads nothing.
"""

import dagster as dg

from nous_assets.defs.team.assets import TEAM_ASSETS
from nous_assets.defs.team.automation import team_job, team_watch
from nous_assets.defs.team.resources import TeamResource
from nous_assets.team.steps import TEAM

PLAN = TEAM
"""The ingest steps this code location runs (a developer's run, the tenant's run) and those it skips, with why."""

defs = dg.Definitions(
    assets=TEAM_ASSETS,
    jobs=[team_job],
    sensors=[team_watch],
    resources={
        "team": TeamResource(
            transcripts_root=dg.EnvVar("NOUS_TEAM_TRANSCRIPTS"),
            staging_root=dg.EnvVar("NOUS_TEAM_STAGING"),
        )
    },
)

"""Team mode's Dagster layer: one partition per developer, a staging cortex.db each, the shared PostgreSQL log.

The team's code location (``nous_assets.defs.team.definitions``) runs the same capture and extraction code as a
laptop, once per developer: ``<transcripts_root>/<developer>/`` holds that developer's Claude Code ``projects/``
tree (synced there), ``<staging_root>/<developer>/`` its lake and a staging ``cortex.db`` (queue, cursors, identity:
the per-developer state extraction needs); its events go into the tenant's working ``cortex.db``
(``<staging_root>/.tenants/<tenant>/``), where the team's log is projected. What the team shares is its tenant of
the PostgreSQL backend (``NOUS_TENANT``, the tenant ``nous serve`` tokens name): every developer's events land in it
through the ``EventStore`` protocol (the ``team_events`` asset), so what one developer's sessions taught reaches
everyone's packets; events keep their own project and session.

Partitions are dynamic, one per developer (the developer's folder name is the partition key), not day x
developer: 100 developers are 100 partitions for as long as the team exists, where day x
developer would add 36,500 a year and pass Dagster's recommended 100,000 per asset within three years. Days
stay what they are on a laptop: a run takes the developer's days with new lines (the file cursors say which),
so a run, and a backfill of every developer, is bounded by the new data, not by the calendar.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import dagster as dg

from nous_assets.defs.resources import open_pipeline_db
from nous_assets.errors import ConfigError
from nous_assets.filemodes import restrict_umask
from nous_assets.settings import Settings, load_settings, settings_from_json
from nous_assets.store.backend import check_tenant
from nous_assets.store.db import Connection
from nous_assets.team.developer import SINCE_TAG  # noqa: F401  (the run tag, with the other tags here)
from nous_assets.team.packets import working_db

DEVELOPER_TAG = "nous/developer"
"""Run tag naming the developer a run works for; ``deploy/team/dagster.yaml`` runs one run per developer."""

LLM_POOL = "nous_llm_extraction"
"""Concurrency pool of the extraction step: caps LLM calls in flight across all runs (``dagster.yaml``)."""

TEAM_ENV_VARS = ("NOUS_TEAM_TRANSCRIPTS", "NOUS_TEAM_STAGING")
"""Environment variables the team code location reads at run time (beyond :func:`load_settings`'s)."""

developers = dg.DynamicPartitionsDefinition(name="nous_developers")
"""One partition per developer, added by the ``team_watch`` sensor when a developer's folder appears."""


def developer_tags(developer: str) -> dict[str, str]:
    """Tags of a run for ``developer``: the per-developer concurrency limit keys on them."""
    return {DEVELOPER_TAG: developer}


class TeamResource(dg.ConfigurableResource):
    """Where the team's transcripts and staging data live; the base settings (backend, DSN, extractor)."""

    transcripts_root: str  # <root>/<developer>/ holds that developer's Claude Code projects tree
    staging_root: str | None = None  # None: <data dir>/team (tests, one-off runs)
    settings_json: str | None = None  # settings resolved by the caller; None: load_settings() at run time

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Staging databases, lakes and transcripts copies are private (0600/0700), as on a laptop."""
        restrict_umask()

    def base_settings(self) -> Settings:
        return settings_from_json(self.settings_json) if self.settings_json else load_settings()

    def staging_dir(self, settings: Settings) -> Path:
        return Path(self.staging_root) if self.staging_root else settings.data_dir / "team"

    def developer_settings(self, developer: str) -> Settings:
        """The base settings pointed at ``developer``'s transcripts and staging data; the tenant stays the team's."""
        check_tenant(developer)
        if "/" in developer or developer.startswith("."):
            raise ConfigError(f"developer {developer!r} is not a folder name")
        base = self.base_settings()
        home = self.staging_dir(base) / developer
        return replace(
            base,
            data_dir=home,
            db_path=home / "cortex.db",
            archive_dir=home / "archive",
            project_glob=str(Path(self.transcripts_root) / developer / "**" / "*.jsonl"),
        )

    def developers(self) -> list[str]:
        """Developers with a transcript folder (names that are valid tenants), sorted."""
        root = Path(self.transcripts_root)
        if not root.is_dir():
            return []
        names = []
        for entry in root.iterdir():
            if entry.is_dir() and not entry.name.startswith("."):
                with contextlib.suppress(ValueError):
                    names.append(check_tenant(entry.name))
        return sorted(names)

    @contextlib.contextmanager
    def working(self, settings: Settings) -> Iterator[Connection]:
        """The working cortex.db of ``settings``' tenant: where developers' runs write their events and the
        team's log is projected (:mod:`nous_assets.team.packets`)."""
        with working_db(settings, self.staging_dir(self.base_settings())) as conn:
            yield conn

    @contextlib.contextmanager
    def staging(self, developer: str) -> Iterator[tuple[Settings, Connection]]:
        """``developer``'s settings and staging cortex.db (created on first use), closed afterwards."""
        settings = self.developer_settings(developer)
        settings.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
        conn = open_pipeline_db(settings)
        try:
            yield settings, conn
        finally:
            conn.close()

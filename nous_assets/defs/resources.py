"""The one resource assets, sensors and checks share: settings plus a cortex.db connection."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import dagster as dg

from nous_assets.filemodes import restrict_umask
from nous_assets.settings import Settings, load_settings
from nous_assets.store.db import Connection, open_db


class NousResource(dg.ConfigurableResource):
    """Settings come from the environment at run time; fields override them (tests, one-off runs)."""

    data_dir: str | None = None
    db_path: str | None = None
    project_glob: str | None = None
    extractor: str | None = None

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Runs and sensors write cortex.db, the lake and Dagster's storage: keep them private (0600/0700)."""
        restrict_umask()

    def settings(self) -> Settings:
        settings = load_settings()
        changes: dict = {}
        if self.data_dir:
            changes["data_dir"] = Path(self.data_dir)
            if not self.db_path:
                changes["db_path"] = Path(self.data_dir) / "cortex.db"
        if self.db_path:
            changes["db_path"] = Path(self.db_path)
        if self.project_glob:
            changes["project_glob"] = self.project_glob
        if self.extractor:
            changes["extractor"] = self.extractor
        return replace(settings, **changes) if changes else settings

    @contextlib.contextmanager
    def connection(self) -> Iterator[Connection]:
        conn = open_db(self.settings().db_path, create=True)
        try:
            yield conn
        finally:
            conn.close()

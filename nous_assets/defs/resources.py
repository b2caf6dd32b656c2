"""The one resource assets, sensors and checks share: settings plus a cortex.db connection.

The connection never creates a database over one that vanished: once the lake holds ingested
days, a missing cortex.db means it was deleted or moved, and a fresh empty one would let a
backfill "succeed" without the learnings it had. A database deleted or replaced while a run has
it open fails the run when the connection closes. Storage failures inside the ``with`` block
(read-only, disk full, locked, damaged) leave as one-line :class:`~nous_assets.errors.NousError`s.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import dagster as dg

from nous_assets.defs.runs import WORKER_TAG, worker_id
from nous_assets.errors import DatabaseVanishedError, NousError, storage_error
from nous_assets.filemodes import restrict_umask
from nous_assets.settings import Settings, load_settings, settings_from_json, settings_to_json
from nous_assets.store.db import Connection, ensure_same_file, open_db


def ingested_before(settings: Settings) -> bool:
    """Has this data dir's lake recorded scans (which are only written alongside a cortex.db)?"""
    return any((settings.lake_dir / "transcripts").glob("date=*/_files.json"))


def open_pipeline_db(settings: Settings) -> Connection:
    """cortex.db for a run: created on first use, refused if it existed and is gone."""
    if not settings.db_path.exists() and ingested_before(settings):
        raise DatabaseVanishedError(
            f"{settings.db_path} is missing, but the lake in {settings.lake_dir} holds days ingested into it: the "
            "database was deleted or moved. Restore it, or run `nous init` to start an empty one and then "
            "`nous backfill` to rebuild it from the transcripts"
        )
    return open_db(settings.db_path, create=True, busy_timeout_ms=settings.db_busy_timeout_ms)


class NousResource(dg.ConfigurableResource):
    """Settings come from the environment at run time, or resolved once by the caller (:meth:`of`); the
    other fields override them (tests, one-off runs)."""

    settings_json: str | None = None
    data_dir: str | None = None
    db_path: str | None = None
    project_glob: str | None = None
    extractor: str | None = None

    def setup_for_execution(self, context: dg.InitResourceContext) -> None:
        """Runs and sensors write cortex.db, the lake and Dagster's storage: keep them private (0600/0700).

        A run also records the process executing it (tag ``nous/worker``), so a run whose process died can
        be told from a running one and stops blocking its days (see :mod:`nous_assets.defs.runs`).
        """
        restrict_umask()
        if context.instance is not None and context.run is not None:
            context.instance.add_run_tags(context.run.run_id, {WORKER_TAG: worker_id()})

    @classmethod
    def of(cls, settings: Settings) -> NousResource:
        """A resource for settings the caller already resolved (``nous`` commands, ``run_days``, benchmarks):
        they travel as run config, so no process has to write ``os.environ`` for a run to see them."""
        return cls(settings_json=settings_to_json(settings))

    def settings(self) -> Settings:
        settings = settings_from_json(self.settings_json) if self.settings_json else load_settings()
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
        settings = self.settings()
        conn = open_pipeline_db(settings)
        try:
            yield conn
            ensure_same_file(conn)
        except NousError:
            raise
        except Exception as exc:
            try:
                ensure_same_file(conn)  # a vanished database explains any error that followed
            except DatabaseVanishedError as vanished:
                raise vanished from exc
            mapped = storage_error(exc, settings.db_path)
            if mapped is None:
                raise
            raise mapped from exc
        finally:
            conn.close()

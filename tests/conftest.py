"""Shared fixtures: real SQLite files migrated to the current schema, and an isolated environment."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous_assets.store.db import open_db
from nous_assets.store.events import EventStore

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

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

"""Fixtures of the provider contract suite: every test runs once on SQLite and once on PostgreSQL.

The PostgreSQL side is the real server (with pgvector) of the session fixture ``pg_server`` in
``tests/conftest.py``. Each test gets its own tenant in that one database, so tests never see each other's
rows (the tenant filter is itself under test) and nothing needs truncating. Where the wheel cannot run,
the PostgreSQL half is skipped with the reason (``-ra`` prints it); the SQLite half always runs.
"""

from __future__ import annotations

import dataclasses
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tests/store: the shared event builders

from nous_assets.store.backend import Backend, postgres_backend, sqlite_backend  # noqa: E402

BACKENDS = ("sqlite", "postgres")


@pytest.fixture
def make_backend(request, tmp_path: Path, new_db) -> Iterator[Callable[[str], Backend]]:
    """``make_backend(tenant)``: that tenant's providers on the backend under test.

    SQLite keeps one tenant per ``cortex.db`` file; PostgreSQL keys rows by tenant in one shared database
    (the test's tenants are prefixed with a fresh id, so tests never share a tenant).
    """
    kind = request.param if hasattr(request, "param") else "sqlite"
    opened: list[Backend] = []
    shared: list = []  # one PostgreSQL connection for all the test's tenants (as one server process serves many)
    prefix = uuid.uuid4().hex[:12]

    def make(tenant: str = "a") -> Backend:
        if kind == "sqlite":
            backend = sqlite_backend(new_db(tmp_path / f"cortex-{tenant}.db"), tenant)
            opened.append(backend)
            return backend
        if not shared:
            from nous_assets.store.pg.db import open_pg

            shared.append(open_pg(request.getfixturevalue("pg_server").dsn()))
        return dataclasses.replace(postgres_backend(shared[0], f"{prefix}-{tenant}"), close=lambda: None)

    yield make
    for backend in opened:
        backend.close()
    for conn in shared:
        conn.close()


@pytest.fixture
def backend(make_backend) -> Backend:
    return make_backend("a")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Run every test that uses a backend once per backend (ids ``[sqlite]`` and ``[postgres]``)."""
    if "make_backend" in metafunc.fixturenames:
        metafunc.parametrize("make_backend", BACKENDS, indirect=True)

"""Fixtures of the service tests: a real ``nous serve`` app on a real socket, over SQLite or PostgreSQL.

``serve(kind)`` starts the FastAPI app under uvicorn in a thread, listening on 127.0.0.1 at a free port (the
same :mod:`nous_assets.service.transport` the CLI uses), over a fresh ``cortex.db`` or the session's embedded
PostgreSQL (``pg_server``; each test gets tenants of its own, so nothing needs truncating). Requests go over
HTTP with the standard library, as ``nous push``/``pull`` send them.
"""

from __future__ import annotations

import contextlib
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "store"))  # eventgen: the shared event builders
sys.path.insert(0, str(Path(__file__).resolve().parent))  # servekit: the helpers of these tests

from servekit import Served, running, service_settings  # noqa: E402

BACKENDS = ("sqlite", "postgres")


@pytest.fixture
def serve(request, tmp_path: Path) -> Iterator[Callable[..., Served]]:
    """``serve(kind, **thresholds)``: a running server over ``kind`` ("sqlite" or "postgres")."""
    stack = contextlib.ExitStack()

    def start(kind: str, *, tenant: str | None = None, **options: Any) -> Served:
        app_options = {k: options.pop(k) for k in list(options) if k in ("token_cache_seconds",)}
        tenant = tenant or f"t{uuid.uuid4().hex[:10]}"
        dsn = request.getfixturevalue("pg_server").dsn() if kind == "postgres" else None
        settings = service_settings(tmp_path, kind, tenant, dsn, **options)
        url, port, pool = stack.enter_context(running(settings, **app_options))
        return Served(url, port, settings, pool, tenant, kind)

    with stack:
        yield start


@pytest.fixture(params=BACKENDS)
def served(request, serve) -> Served:
    """One running server per backend (tests using it run as ``[sqlite]`` and ``[postgres]``)."""
    return serve(request.param, token_cache_seconds=0)

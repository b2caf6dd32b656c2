"""Connections of the configured backend, shared by the server's worker threads.

A request borrows one connection, binds the providers to the tenant its token decided
(:func:`nous_assets.store.backend.engine`: how the configured backend opens, checks and binds; binding is a
few small objects)
and gives the connection back. A connection a request broke (lost server, failed transaction) is closed
instead of returned, so the next request opens a fresh one: a PostgreSQL restart heals without a server
restart. The schema is migrated once, when the pool opens.
"""

from __future__ import annotations

import contextlib
import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

from nous_assets.settings import Settings
from nous_assets.store.backend import Backend, Capabilities, engine
from nous_assets.store.sqlite.service_store import ServiceStore

MAX_IDLE = 16


class BackendPool:
    """Idle connections of one backend (SQLite ``cortex.db`` or the PostgreSQL DSN)."""

    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._engine = engine(settings)
        self.capabilities: Capabilities = self._engine.capabilities
        self._idle: list[Any] = []
        self._lock = threading.Lock()
        self._release(self._engine.open(True))

    def _acquire(self) -> Any:
        with self._lock:
            if self._idle:
                return self._idle.pop()
        return self._engine.open(False)

    def _release(self, conn: Any) -> None:
        with self._lock:
            if len(self._idle) < MAX_IDLE:
                self._idle.append(conn)
                return
        conn.close()

    @contextlib.contextmanager
    def connection(self) -> Iterator[Any]:
        """A connection for one request; closed rather than reused if the request failed with it."""
        conn = self._acquire()
        try:
            yield conn
        finally:
            if self._healthy(conn):
                self._release(conn)
            else:
                with contextlib.suppress(Exception):
                    conn.close()

    def _healthy(self, conn: Any) -> bool:
        """Reusable: open, not broken, and outside any transaction (a failed request may leave neither)."""
        try:
            return self._engine.healthy(conn)
        except Exception:  # a closed SQLite connection raises on any attribute that touches it
            return False

    @contextlib.contextmanager
    def backend(self, tenant_id: str) -> Iterator[tuple[Backend, ServiceStore]]:
        """The tenant's providers and the service store, over one borrowed connection."""
        with self.connection() as conn:
            backend = dataclasses.replace(self._engine.bind(conn, tenant_id), close=lambda: None)
            yield backend, self._engine.service_store(conn)

    @contextlib.contextmanager
    def service_store(self) -> Iterator[ServiceStore]:
        """Only the service store (token checks, before the tenant is known)."""
        with self.connection() as conn:
            yield self._engine.service_store(conn)

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for conn in idle:
            with contextlib.suppress(Exception):
                conn.close()

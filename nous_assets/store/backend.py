"""Choose and open the storage backend: the contract's providers bound to one tenant, and what it serves.

``NOUS_BACKEND=sqlite`` (the default) is one ``cortex.db`` per developer; ``NOUS_BACKEND=postgres`` with
``NOUS_PG_DSN`` is a shared PostgreSQL + pgvector database where ``NOUS_TENANT`` picks the tenant. The
choice is configuration (:class:`nous_assets.settings.Settings`), never code: callers get a
:class:`Backend` and use only the protocols of :mod:`nous_assets.store.protocols`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.settings import Settings
from nous_assets.store.db import Connection, open_db
from nous_assets.store.protocols import (
    CacheStore,
    EventStore,
    IngestQueueStore,
    InterventionStore,
    ProjectionStore,
    VectorStore,
)

BACKENDS = ("sqlite", "postgres")


@dataclass(frozen=True)
class Capabilities:
    """What a backend serves, so a caller asks what it can do rather than which one it is."""

    name: str  # "sqlite" or "postgres": what ``/health`` and messages call it
    one_tenant: bool  # a store holds one tenant (a cortex.db file); else every row is keyed by tenant
    archive: bool  # the cold tier (``nous archive``) works on it: :attr:`Backend.local_db` is set
    local_file: bool  # a file on this machine (a storage error names its path)
    extracts: bool  # something drains its ingest queue (the laptop's pipeline); POST /v1/artifacts answers 501 if not
    projected: bool  # the pipeline keeps its projection current; PostgreSQL's moves only on /v1/ops/replay (a team
    # tenant's log is projected in the team's working cortex.db), so its memories are found by their events


SQLITE = Capabilities(name="sqlite", one_tenant=True, archive=True, local_file=True, extracts=True, projected=True)
POSTGRES = Capabilities(name="postgres", one_tenant=False, archive=False, local_file=False, extracts=False,
                        projected=False)  # fmt: skip


@dataclass
class Backend:
    """One tenant's providers over one connection; ``close()`` releases it.

    ``local_db`` is the ``cortex.db`` connection where the backend is one (``capabilities.archive``): what the
    SQLite-only lifecycle steps take; None on PostgreSQL.
    """

    capabilities: Capabilities
    tenant_id: str
    events: EventStore
    projection: ProjectionStore
    vectors: VectorStore
    cache: CacheStore
    queue: IngestQueueStore | None  # None where nothing extracts artifacts (``capabilities.extracts``)
    interventions: InterventionStore
    close: Callable[[], None]
    local_db: Connection | None = None

    def __enter__(self) -> Backend:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def sqlite_backend(conn: Connection, tenant_id: str = "local") -> Backend:
    """The providers over an open ``cortex.db`` connection (a file holds one tenant)."""
    from nous_assets.store.search.vectors import SqliteVectorStore
    from nous_assets.store.sqlite.cache import SqliteCacheStore
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.sqlite.interventions import SqliteInterventionStore
    from nous_assets.store.sqlite.projection import SqliteProjectionStore
    from nous_assets.store.sqlite.queue import SqliteIngestQueueStore

    return Backend(
        SQLITE, tenant_id, events=SqliteEventStore(conn), projection=SqliteProjectionStore(conn),
        vectors=SqliteVectorStore(conn), cache=SqliteCacheStore(conn), queue=SqliteIngestQueueStore(conn),
        interventions=SqliteInterventionStore(conn), close=conn.close, local_db=conn,
    )  # fmt: skip


def postgres_backend(conn: object, tenant_id: str) -> Backend:
    """The providers over an open, migrated PostgreSQL connection, bound to ``tenant_id``."""
    from nous_assets.store.pg.cache import PgCacheStore
    from nous_assets.store.pg.events import PgEventStore
    from nous_assets.store.pg.interventions import PgInterventionStore
    from nous_assets.store.pg.projection import PgProjectionStore
    from nous_assets.store.pg.vectors import PgVectorStore

    check_tenant(tenant_id)
    return Backend(
        POSTGRES, tenant_id, events=PgEventStore(conn, tenant_id), projection=PgProjectionStore(conn, tenant_id),
        vectors=PgVectorStore(conn, tenant_id), cache=PgCacheStore(conn, tenant_id),
        queue=None, interventions=PgInterventionStore(conn, tenant_id),
        close=conn.close,  # type: ignore[attr-defined]
    )  # fmt: skip


def check_tenant(tenant_id: object) -> str:
    """A tenant id is a short non-empty printable string (it keys every row of the shared database)."""
    if not isinstance(tenant_id, str) or not tenant_id.strip() or len(tenant_id) > 128 or not tenant_id.isprintable():
        raise ValueError(f"tenant_id must be a non-empty printable string of at most 128 characters, got {tenant_id!r}")
    return tenant_id


def open_backend(settings: Settings, *, tenant_id: str | None = None, create: bool = False) -> Backend:
    """Open the configured backend for ``tenant_id`` (default: the configured tenant).

    SQLite opens (and migrates) ``settings.db_path``; PostgreSQL connects to ``settings.pg_dsn`` and
    applies its own migrations. An unreachable server raises a one-line error without the password.
    """
    tenant = check_tenant(tenant_id or settings.tenant_id)
    if settings.backend == "postgres":
        from nous_assets.store.pg.db import open_pg

        return postgres_backend(open_pg(settings.pg_dsn), tenant)
    conn = open_db(Path(settings.db_path), create=create, busy_timeout_ms=settings.db_busy_timeout_ms)
    return sqlite_backend(conn, tenant)


@dataclass(frozen=True)
class Engine:
    """How to open, check and bind connections of one backend: what a connection pool needs of it."""

    capabilities: Capabilities
    open: Callable[[bool], Any]  # open(migrate): a new connection (migrated and created when ``migrate``)
    healthy: Callable[[Any], bool]  # reusable: open, not broken, outside any transaction
    bind: Callable[[Any, str], Backend]  # the tenant's providers over a connection
    service_store: Callable[[Any], Any]  # the service store (tokens, receipts, packet pages) over it


def engine(settings: Settings) -> Engine:
    """The configured backend's :class:`Engine` (``NOUS_BACKEND``)."""
    if settings.backend == "postgres":
        from nous_assets.store.pg import db as pgdb
        from nous_assets.store.pg.service_store import PgServiceStore

        def open_pg(migrate: bool) -> Any:
            if migrate:
                return pgdb.open_pg(settings.pg_dsn)
            conn = pgdb.connect(settings.pg_dsn)
            pgdb.register_vector(conn)
            return conn

        def pg_healthy(conn: Any) -> bool:
            return not conn.closed and not conn.broken and conn.info.transaction_status == 0  # IDLE

        return Engine(POSTGRES, open_pg, pg_healthy, postgres_backend, PgServiceStore)
    from nous_assets.store.sqlite.service_store import SqliteServiceStore

    def open_sqlite(migrate: bool) -> Any:
        return open_db(settings.db_path, create=migrate, migrate_schema=migrate,
                       busy_timeout_ms=settings.db_busy_timeout_ms)  # fmt: skip

    def sqlite_healthy(conn: Any) -> bool:
        return not conn.in_transaction

    return Engine(SQLITE, open_sqlite, sqlite_healthy, sqlite_backend, SqliteServiceStore)

"""Connections and versioned migrations for the PostgreSQL backend.

Migrations are ``pg/migrations/NNN_name.sql``, each applied in one transaction with its SHA-256 recorded in
``pg_schema_migrations``; an applied file whose text has since changed is refused (never edit one, add one).
An advisory lock serialises concurrent migrators (two workers starting at once). Error messages name the
server but never the password: :func:`redact_dsn` is the only form of a DSN that is ever printed.
"""

from __future__ import annotations

import hashlib
import re
from importlib import resources

from nous_assets.errors import SchemaError, StorageError
from nous_assets.timeutil import now_iso

try:
    import psycopg
except ImportError:  # pragma: no cover - the team extra is not installed
    psycopg = None  # type: ignore[assignment]

CONNECT_TIMEOUT_SECONDS = 10
_MIGRATION_LOCK = 0x4E4F5553  # "NOUS": pg_advisory_xact_lock key of the migrator
_PASSWORD_IN_URL = re.compile(r"(://[^:/@]*:)[^@]*@")
_PASSWORD_KV = re.compile(r"(password\s*=\s*)('[^']*'|\S+)", re.IGNORECASE)


class BackendUnavailableError(StorageError):
    """The PostgreSQL backend cannot be used: no DSN, driver missing, or server unreachable."""


def redact_dsn(dsn: str) -> str:
    """``dsn`` with any password replaced by ``***`` (URL or key=value form)."""
    return _PASSWORD_KV.sub(r"\1***", _PASSWORD_IN_URL.sub(r"\1***@", dsn))


def _migration_files() -> list[tuple[int, str, str]]:
    found: dict[int, tuple[str, str]] = {}
    for entry in resources.files("nous_assets.store.pg.migrations").iterdir():
        if not entry.name.endswith(".sql"):
            continue
        version = int(entry.name.split("_", 1)[0])
        if version in found:
            raise SchemaError(f"two PostgreSQL migrations share number {version}: {found[version][0]}, {entry.name}")
        found[version] = (entry.name, entry.read_text(encoding="utf-8"))
    return [(v, n, s) for v, (n, s) in sorted(found.items())]


MIGRATIONS = _migration_files()
LATEST_VERSION = MIGRATIONS[-1][0]


def connect(dsn: str | None) -> psycopg.Connection:
    """An autocommit connection (transactions are explicit, ``with conn.transaction()``), pgvector registered."""
    if not dsn:
        raise BackendUnavailableError(
            "NOUS_BACKEND=postgres needs NOUS_PG_DSN (e.g. postgresql://nous@db.internal:5432/nous)"
        )
    if psycopg is None:
        raise BackendUnavailableError("the PostgreSQL backend needs the team extra: pip install 'nous[team]'")
    try:
        conn = psycopg.connect(dsn, autocommit=True, connect_timeout=CONNECT_TIMEOUT_SECONDS)
    except psycopg.Error as exc:
        reason = redact_dsn(str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__)
        raise BackendUnavailableError(f"cannot connect to PostgreSQL at {redact_dsn(dsn)}: {reason}") from None
    return conn


def register_vector(conn: psycopg.Connection) -> None:
    """Teach the connection the ``vector`` type (after the migration that creates the extension)."""
    from pgvector.psycopg import register_vector as _register

    _register(conn)


def schema_version(conn: psycopg.Connection) -> int:
    exists = conn.execute("SELECT to_regclass('pg_schema_migrations') IS NOT NULL").fetchone()[0]
    if not exists:
        return 0
    return int(conn.execute("SELECT coalesce(max(version), 0) FROM pg_schema_migrations").fetchone()[0])


def _applied_versions(conn: psycopg.Connection) -> set[int]:
    return {int(r[0]) for r in conn.execute("SELECT version FROM pg_schema_migrations")}


def _check_applied(conn: psycopg.Connection) -> None:
    known = {v: (n, hashlib.sha256(s.encode()).hexdigest()) for v, n, s in MIGRATIONS}
    for version, name, checksum in conn.execute("SELECT version, name, checksum FROM pg_schema_migrations"):
        if version not in known:
            raise SchemaError(f"PostgreSQL schema has migration {version} ({name}), newer than this build")
        if known[version][1] != checksum:
            raise SchemaError(f"PostgreSQL migration {name} was changed after it was applied (checksum differs)")


def migrate(conn: psycopg.Connection) -> list[int]:
    """Apply pending migrations, each with its bookkeeping in one transaction; return those applied."""
    applied: list[int] = []
    for version, name, sql in MIGRATIONS:
        with conn.transaction():
            conn.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
            conn.execute(
                "CREATE TABLE IF NOT EXISTS pg_schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, "
                "checksum TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            if version in _applied_versions(conn):  # by number, not "<= newest": a lower number merged
                continue  # later (numbers are reserved per branch) is applied, never silently skipped
            conn.execute(sql)
            conn.execute(
                "INSERT INTO pg_schema_migrations(version, name, checksum, applied_at) VALUES (%s, %s, %s, %s)",
                (version, name, hashlib.sha256(sql.encode()).hexdigest(), now_iso()),
            )
        applied.append(version)
    _check_applied(conn)
    return applied


def open_pg(dsn: str | None) -> psycopg.Connection:
    """Connect, bring the schema up to date and register pgvector (the backend's entry point)."""
    conn = connect(dsn)
    try:
        migrate(conn)
        register_vector(conn)
    except Exception:
        conn.close()
        raise
    return conn

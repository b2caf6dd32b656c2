"""cortex.db connections, transactions and versioned migrations.

This Python's stdlib ``sqlite3`` cannot load extensions, so the pipeline uses ``pysqlite3``
(a drop-in with a newer SQLite) to load sqlite-vec. Connections run in autocommit mode and
every write goes through :func:`atomic`, so a failure never leaves half a change behind.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import os
from collections.abc import Iterator
from importlib import resources
from pathlib import Path

try:  # pragma: no cover - depends on platform wheels
    import pysqlite3.dbapi2 as sqlite3
except ImportError:  # pragma: no cover
    import sqlite3  # type: ignore[no-redef]

import sqlite_vec

from nous_assets.errors import (
    CorruptDatabaseError,
    DatabaseMissingError,
    DatabaseVanishedError,
    SchemaError,
    storage_error,
)
from nous_assets.timeutil import now_iso

Connection = sqlite3.Connection
IntegrityError = sqlite3.IntegrityError
OperationalError = sqlite3.OperationalError
DatabaseError = sqlite3.DatabaseError

BUSY_TIMEOUT_MS = 30_000
_SAVEPOINTS = itertools.count()


class _Connection(sqlite3.Connection):
    """A connection that remembers which file (device, inode) it opened.

    SQLite keeps writing to an open file after its path is deleted or replaced, so a run whose
    database vanished would "succeed" into an unlinked inode; :func:`ensure_same_file` notices.
    """

    db_path: str = ""
    file_id: tuple[int, int] | None = None


def _file_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino


def ensure_same_file(conn: Connection) -> None:
    """Raise :class:`DatabaseVanishedError` if ``conn``'s path no longer names the file it opened."""
    opened = getattr(conn, "file_id", None)
    path = getattr(conn, "db_path", "")
    if opened is None or not path:
        return
    now = _file_id(path)
    if now != opened:
        what = "deleted" if now is None else "replaced by another file"
        raise DatabaseVanishedError(
            f"{path} was {what} while this run was using it, so what the run wrote is lost: restore the "
            "database, or run `nous init` and re-run the backfill"
        )


def _migration_files() -> list[tuple[int, str, str]]:
    """(version, name, sql) for every ``migrations/NNN_name.sql``, in order; duplicates are a bug."""
    found: dict[int, tuple[str, str]] = {}
    for entry in resources.files("nous_assets.store.migrations").iterdir():
        name = entry.name
        if not name.endswith(".sql"):
            continue
        version = int(name.split("_", 1)[0])
        if version in found:
            raise SchemaError(f"two migrations share number {version}: {found[version][0]} and {name}")
        found[version] = (name, entry.read_text(encoding="utf-8"))
    return [(v, n, s) for v, (n, s) in sorted(found.items())]


MIGRATIONS = _migration_files()
LATEST_VERSION = MIGRATIONS[-1][0]


def _configure(conn: Connection, busy_timeout_ms: int) -> None:
    conn.row_factory = sqlite3.Row
    conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
    conn.execute("PRAGMA foreign_keys = ON")
    conn.execute("PRAGMA cache_size = -65536")  # 64 MiB page cache: projection batches touch wide index ranges
    conn.enable_load_extension(True)
    sqlite_vec.load(conn)
    conn.enable_load_extension(False)


def connect(path: str | Path, *, create: bool = False, busy_timeout_ms: int | None = None) -> Connection:
    """Open cortex.db with WAL, foreign keys, a busy timeout and sqlite-vec loaded.

    Refuses a missing file unless ``create`` and a schema newer than this build always. A file that
    cannot be opened (read-only, full disk, locked past the busy timeout, not a database) raises a
    :class:`~nous_assets.errors.NousError` that says which and what to do.
    """
    path = Path(path)
    if str(path) != ":memory:" and not path.exists():
        if not create:
            raise DatabaseMissingError(f"no database at {path}; run `nous init` first")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise storage_error(exc, path) or exc from None
    try:
        conn = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False, factory=_Connection)
    except sqlite3.Error as exc:
        raise storage_error(exc, path) or SchemaError(f"cannot open {path}: {exc}") from None
    try:
        _configure(conn, BUSY_TIMEOUT_MS if busy_timeout_ms is None else busy_timeout_ms)
        version = schema_version(conn)
        if version > LATEST_VERSION:
            raise SchemaError(
                f"database {path} has schema version {version}, newer than this build of nous supports "
                f"({LATEST_VERSION}); upgrade nous before using it"
            )
        if str(path) != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL")
            conn.execute("PRAGMA synchronous = NORMAL")
            conn.db_path, conn.file_id = str(path), _file_id(str(path))
    except sqlite3.DatabaseError as exc:
        conn.close()
        mapped = storage_error(exc, path)
        if mapped is None or isinstance(mapped, CorruptDatabaseError):
            raise CorruptDatabaseError(
                f"{path} is not a usable SQLite database ({exc}): restore it from a backup, or move it aside and "
                "run `nous init` then `nous backfill` to rebuild it from the transcripts"
            ) from None
        raise mapped from None
    except BaseException:
        conn.close()
        raise
    return conn


def schema_version(conn: Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


@contextlib.contextmanager
def atomic(conn: Connection, *, immediate: bool = True) -> Iterator[Connection]:
    """One transaction (or a savepoint when nested); rolled back on any exception.

    ``BEGIN IMMEDIATE`` takes the write lock up front so concurrent writers queue on the busy
    timeout instead of failing mid-transaction with SQLITE_BUSY on lock upgrade.
    """
    if conn.in_transaction:
        name = f"sp_{next(_SAVEPOINTS)}"
        conn.execute(f"SAVEPOINT {name}")
        try:
            yield conn
        except BaseException:
            conn.execute(f"ROLLBACK TO {name}")
            conn.execute(f"RELEASE {name}")
            raise
        conn.execute(f"RELEASE {name}")
        return
    conn.execute("BEGIN IMMEDIATE" if immediate else "BEGIN")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def _split_statements(sql: str) -> list[str]:
    """Split a migration into complete statements (handles triggers' inner semicolons)."""
    statements: list[str] = []
    buffer = ""
    for line in sql.splitlines(keepends=True):
        if not buffer and (not line.strip() or line.lstrip().startswith("--")):
            continue
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        raise SchemaError(f"incomplete SQL statement in migration: {buffer.strip()[:80]}")
    return statements


def migrate(conn: Connection) -> list[int]:
    """Apply pending migrations, each in one transaction with its bookkeeping; return those applied.

    ``executescript`` is avoided because it commits on its own and would leave a half-migrated schema.
    """
    applied: list[int] = []
    for version, name, sql in MIGRATIONS:
        with atomic(conn):
            if schema_version(conn) >= version:
                continue
            for statement in _split_statements(sql):
                conn.execute(statement)
            conn.execute(
                "CREATE TABLE IF NOT EXISTS schema_migrations ("
                "version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)"
            )
            conn.execute(
                "INSERT INTO schema_migrations(version, name, checksum, applied_at) VALUES (?, ?, ?, ?)",
                (version, name, hashlib.sha256(sql.encode()).hexdigest(), now_iso()),
            )
            conn.execute(f"PRAGMA user_version = {version}")
        applied.append(version)
    return applied


def open_db(
    path: str | Path, *, create: bool = False, migrate_schema: bool = True, busy_timeout_ms: int | None = None
) -> Connection:
    """Connect and bring the schema up to date (the pipeline's entry point)."""
    conn = connect(path, create=create, busy_timeout_ms=busy_timeout_ms)
    if migrate_schema:
        try:
            migrate(conn)
        except sqlite3.Error as exc:
            conn.close()
            raise storage_error(exc, path) or exc from None
    elif (version := schema_version(conn)) < LATEST_VERSION:
        conn.close()
        raise SchemaError(f"database {path} has schema version {version}; run `nous init` to upgrade it")
    return conn


def checkpoint(conn: Connection) -> bool:
    """Fold the WAL into the main file and truncate it (best effort; False if readers held it back).

    The SessionStart hook opens a fresh connection every time, and with a WAL of tens of megabytes
    each open and lookup costs ~10 ms more; the pipeline calls this after its last write of a run.
    """
    busy, _, _ = conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
    return not busy


def table_counts(conn: Connection) -> dict[str, int]:
    """Row counts of every plain table (virtual tables' shadow tables excluded)."""
    names = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'memories_fts_%' AND name NOT LIKE 'vectors_%' "
            "ORDER BY name"
        )
    ]
    counts = {name: conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in names}
    for virtual in ("memories_fts", "vectors"):
        with contextlib.suppress(sqlite3.DatabaseError):
            counts[virtual] = conn.execute(f"SELECT count(*) FROM {virtual}").fetchone()[0]
    return counts

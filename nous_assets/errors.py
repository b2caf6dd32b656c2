"""Named failures. The CLI turns these into one-line messages instead of tracebacks.

:func:`storage_error` is the one place that explains a failed write or open, whatever raised it
(our SQLite connection, Dagster's SQLAlchemy storage, a Parquet or plain file write): read-only
location, full disk, locked or damaged database. Each message says what failed and what to do.
It uses only the standard library, so every layer (CLI, Dagster resource, store) can call it.
"""

from __future__ import annotations

import errno
import os

__all__ = [
    "ConfigError",
    "CorruptDatabaseError",
    "DatabaseLockedError",
    "DatabaseMissingError",
    "DatabaseVanishedError",
    "DiskFullError",
    "InvalidEventError",
    "NousError",
    "ReadOnlyError",
    "SchemaError",
    "StorageError",
    "storage_error",
]


class NousError(Exception):
    """Base class for errors a user can act on."""


class ConfigError(NousError):
    """A setting or the config file is malformed; the message names the file and key."""


class SchemaError(NousError):
    """The database schema is missing, newer than this build, or damaged."""


class InvalidEventError(NousError):
    """An event failed validation; nothing was written."""


class DatabaseMissingError(NousError):
    """The database does not exist yet; run ``nous init``."""


class DatabaseVanishedError(DatabaseMissingError):
    """The database existed and is gone (deleted or replaced), before or during a run."""


class StorageError(NousError):
    """A file or database could not be opened or written."""


class ReadOnlyError(StorageError):
    """The location is read-only or not writable by this user."""


class DiskFullError(StorageError):
    """No space left (or a file-size limit reached)."""


class DatabaseLockedError(StorageError):
    """Another process held the database's write lock for longer than the busy timeout."""


class CorruptDatabaseError(SchemaError):
    """The file is not a SQLite database, or its pages are damaged."""


# SQLite primary result codes (https://sqlite.org/rescode.html)
_SQLITE_BUSY, _SQLITE_LOCKED, _SQLITE_READONLY, _SQLITE_IOERR = 5, 6, 8, 10
_SQLITE_CORRUPT, _SQLITE_FULL, _SQLITE_CANTOPEN, _SQLITE_NOTADB = 11, 13, 14, 26

_READ_ONLY_ERRNOS = {errno.EROFS, errno.EACCES, errno.EPERM}
_FULL_ERRNOS = {errno.ENOSPC, errno.EDQUOT, errno.EFBIG}
_NEARLY_FULL_BYTES = 1 << 20


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and everything behind it: causes, contexts and SQLAlchemy's wrapped ``orig``."""
    out: list[BaseException] = []
    todo: list[BaseException | None] = [exc]
    while todo:
        e = todo.pop(0)
        if e is None or any(e is seen for seen in out):
            continue
        out.append(e)
        orig = getattr(e, "orig", None)
        todo.extend([orig if isinstance(orig, BaseException) else None, e.__cause__, e.__context__])
    return out


def _is_sqlalchemy(exc: BaseException) -> bool:
    return type(exc).__module__.split(".")[0] == "sqlalchemy"


def _where(path: object, dagster: bool) -> str:
    if dagster:
        home = os.environ.get("DAGSTER_HOME")
        return f"Dagster's run storage{f' in {home}' if home else ''}"
    return str(path) if path else "the data directory"


def _nearly_full(path: object) -> bool:
    """SQLite reports some ENOSPC failures as a plain I/O error: is the disk under the file (nearly) full?"""
    if not isinstance(path, (str, os.PathLike)):
        return False
    try:
        st = os.statvfs(os.path.dirname(os.fspath(path)) or ".")
    except OSError:
        return False
    return st.f_bavail * st.f_frsize < _NEARLY_FULL_BYTES


def _from_sqlite(exc: BaseException, db_path: object, dagster: bool) -> NousError | None:
    code = getattr(exc, "sqlite_errorcode", None)
    text = str(exc).lower()
    primary = code & 0xFF if isinstance(code, int) else None
    where = _where(db_path, dagster)
    if primary in (_SQLITE_BUSY, _SQLITE_LOCKED) or "database is locked" in text:
        waited = "its busy timeout" if dagster else "the busy timeout, NOUS_DB_BUSY_TIMEOUT_MS"
        return DatabaseLockedError(
            f"{where} is locked by another process (waited out {waited}): let the other nous or Dagster "
            "process finish, or stop it, then re-run"
        )
    if primary == _SQLITE_READONLY or "readonly database" in text:
        return ReadOnlyError(
            f"cannot write {where}: it is read-only — make it and its folder writable, or set NOUS_DATA_DIR "
            "(and DAGSTER_HOME) to a writable directory"
        )
    if primary == _SQLITE_FULL or "database or disk is full" in text:
        return DiskFullError(f"disk full while writing {where}: free some space and re-run (completed work is kept)")
    if primary in (_SQLITE_CORRUPT, _SQLITE_NOTADB) or "malformed" in text or "not a database" in text:
        return CorruptDatabaseError(
            f"{where} is damaged or not a SQLite database ({exc}): restore it from a backup, or move it aside "
            "and run `nous init` then `nous backfill` to rebuild it from the transcripts"
        )
    if primary == _SQLITE_CANTOPEN or "unable to open database" in text:
        folder = os.path.dirname(os.fspath(db_path)) if isinstance(db_path, (str, os.PathLike)) else ""
        if folder and os.path.isdir(folder) and not os.access(folder, os.W_OK):
            return ReadOnlyError(
                f"cannot write {folder} (needed to open {where}): it is read-only — make it writable, or set "
                "NOUS_DATA_DIR to a writable directory"
            )
        return StorageError(
            f"cannot open {where} ({exc}): check that its folder exists and is readable and writable, "
            "or set NOUS_DATA_DIR to a writable directory"
        )
    if primary == _SQLITE_IOERR or "disk i/o error" in text:
        if _nearly_full(db_path):
            return DiskFullError(f"disk full while writing {where}: free some space and re-run")
        return StorageError(
            f"I/O error on {where} ({exc}): the disk may be full, failing or gone (network drive?); "
            "free space or check the disk, then re-run"
        )
    return None


def _from_os(exc: OSError) -> NousError | None:
    where = exc.filename or "a file in the data directory"
    why = exc.strerror or str(exc)
    if exc.errno == errno.EROFS:
        return ReadOnlyError(
            f"cannot write {where}: {why} — set NOUS_DATA_DIR (and DAGSTER_HOME) to a directory on a writable disk"
        )
    if exc.errno in _READ_ONLY_ERRNOS:
        return ReadOnlyError(
            f"permission denied for {where} — make it and its folder writable by this user, or set NOUS_DATA_DIR "
            "to a writable directory"
        )
    if exc.errno in _FULL_ERRNOS:
        return DiskFullError(f"no space left writing {where} ({why}): free some space and re-run")
    return None


def _polars_os_error(exc: BaseException) -> NousError | None:
    """Polars (Rust) reports I/O failures as text: ``No space left on device (os error 28)``."""
    text = str(exc)
    for code in (errno.ENOSPC, errno.EDQUOT, errno.EFBIG, errno.EROFS, errno.EACCES):
        if f"(os error {code})" in text:
            return _from_os(OSError(code, os.strerror(code)))
    return None


def storage_error(exc: BaseException, db_path: object = None) -> NousError | None:
    """A one-line, actionable :class:`NousError` for a storage failure anywhere in ``exc``'s chain, else None.

    ``db_path`` names the database a SQLite error came from (Dagster's own storage is recognised by
    its SQLAlchemy wrapper).
    """
    chain = _chain(exc)
    dagster = any(_is_sqlalchemy(e) for e in chain)
    for e in chain:
        if isinstance(e, NousError):
            return e
        if isinstance(e, OSError) and (found := _from_os(e)):
            return found
        sqlite_like = hasattr(e, "sqlite_errorcode") or type(e).__name__ in ("OperationalError", "DatabaseError")
        if sqlite_like and (found := _from_sqlite(e, db_path, dagster)):
            return found
        if type(e).__module__.split(".")[0] == "polars" and (found := _polars_os_error(e)):
            return found
    return None

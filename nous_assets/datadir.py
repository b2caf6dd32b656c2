"""The data directory, checked writable before a run starts writing into it.

Dagster keeps its run and event storage in SQLite under ``$DAGSTER_HOME`` (inside the data
directory by default). When that location is read-only or full, Dagster fails deep inside
SQLAlchemy with a long traceback; a probe write up front turns that into one line saying which
directory and what to do. Failures later in a run are explained by :func:`~nous_assets.errors.storage_error`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from nous_assets.errors import StorageError, storage_error
from nous_assets.settings import Settings

_PROBE_BYTES = 4096


def _probe(directory: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix=".nous-write-check-", dir=directory)
    try:
        os.write(fd, b"\0" * _PROBE_BYTES)
        os.fsync(fd)
    finally:
        os.close(fd)
        os.unlink(name)


def check_writable(*directories: Path, files: tuple[Path, ...] = ()) -> None:
    """Create each directory if needed and write, sync and delete a small file in it; open ``files``
    (those that exist) for writing. Raises a one-line :class:`~nous_assets.errors.StorageError`."""
    for directory in directories:
        try:
            _probe(directory)
        except OSError as exc:
            named = OSError(exc.errno, exc.strerror, str(directory))
            raise storage_error(named) or StorageError(f"cannot write {directory}: {exc}") from None
    for path in files:
        try:
            with open(path, "r+b"):
                pass
        except FileNotFoundError:
            continue
        except OSError as exc:
            raise storage_error(exc) or StorageError(f"cannot write {path}: {exc}") from None


def check_data_dir(settings: Settings, dagster_home: Path | None = None) -> None:
    """Everything a run writes: cortex.db (and its WAL), the lake, and Dagster's storage."""
    db = settings.db_path
    dirs = [settings.data_dir, db.parent, settings.lake_dir]
    if dagster_home is not None:
        dirs.append(dagster_home)
    unique = list(dict.fromkeys(dirs))
    check_writable(*unique, files=(db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")))

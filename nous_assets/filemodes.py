"""Nous's data is private to its user: files 0600, directories 0700.

cortex.db, the lake and the resolver's log hold whatever sessions said (redacted, but still personal),
and Dagster's storage holds run logs of the same. Two mechanisms keep them private:

* a restrictive umask (077) set once at each entry point — the ``nous`` CLI (and so ``nous run`` and the
  ``dagster dev`` it starts, which inherit it), the Dagster resource when a run or sensor sets it up,
  and the hook itself — so whatever our code, SQLite (its ``-wal``/``-shm`` take the database's mode),
  polars or Dagster creates is private without each call site passing a mode;
* the data dir itself at 0700, which closes everything below it even for files an older version of
  Nous created 0644.

:func:`loose_paths` finds what is still readable by others; :func:`tighten` fixes it (``nous init``,
``nous doctor --fix``).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

PRIVATE_UMASK = 0o077
DIR_MODE = 0o700
FILE_MODE = 0o600
OPEN_BITS = 0o077  # any permission for group or others


def restrict_umask() -> int:
    """Make files created by this process private (adds 077 to the umask); returns the previous umask."""
    previous = os.umask(PRIVATE_UMASK)
    os.umask(previous | PRIVATE_UMASK)
    return previous


def make_private_dir(path: Path) -> Path:
    """Create ``path`` (and parents) if needed and make ``path`` itself 0700."""
    path.mkdir(parents=True, exist_ok=True)
    if stat.S_IMODE(path.stat().st_mode) & OPEN_BITS:
        path.chmod(DIR_MODE)
    return path


def is_open(path: Path) -> bool:
    """Whether group or others have any permission on ``path`` (symlinks are not followed)."""
    try:
        return bool(stat.S_IMODE(path.lstat().st_mode) & OPEN_BITS) and not path.is_symlink()
    except OSError:
        return False


def loose_paths(roots: Iterable[Path], limit: int | None = None) -> list[Path]:
    """Existing files and directories under (and including) ``roots`` that group or others can access.

    Symlinks are neither reported nor followed. Stops after ``limit`` findings (a doctor only needs a few).
    """
    found: list[Path] = []
    for root in roots:
        if not root.exists():
            continue
        for path in _walk(root):
            if is_open(path):
                found.append(path)
                if limit is not None and len(found) >= limit:
                    return found
    return found


def tighten(roots: Iterable[Path]) -> int:
    """Remove every group/other permission under ``roots`` (owner bits kept); the number of paths changed."""
    changed = 0
    for path in loose_paths(roots):
        try:
            path.chmod(stat.S_IMODE(path.lstat().st_mode) & ~OPEN_BITS)
        except OSError:  # not ours (a shared parent given as the data dir): leave it, the doctor reports it
            continue
        changed += 1
    return changed


def database_files(db_path: Path) -> list[Path]:
    """The database and its SQLite companions (``-wal``, ``-shm``, ``-journal``) that exist."""
    candidates = [db_path, *(db_path.with_name(db_path.name + suffix) for suffix in ("-wal", "-shm", "-journal"))]
    return [p for p in candidates if p.exists()]


def _walk(root: Path) -> Iterable[Path]:
    yield root
    if not root.is_dir() or root.is_symlink():
        return
    for dirpath, dirnames, filenames in os.walk(root):
        base = Path(dirpath)
        for name in dirnames + filenames:
            yield base / name

"""Per-file read cursors (``ingest_cursors``): how far each transcript has been durably ingested.

A cursor is ``(path + inode, offset, mtime)``. :func:`plan_read` compares it with the file as it is
now and says where to start reading, detecting appends, truncation (same inode, size < offset)
and rotation (a different inode at the same path). The ingest worker moves a cursor forward with
:func:`promote` only after the queue item that covers those bytes is ``completed`` (failed items
never advance it), so a crash at any point re-reads rather than skips.

Per-file, per-day progress (``ingest_file_partitions``) lives here too: a file's cursor may only move
past bytes once every day those bytes belong to has completed (:func:`record_day_progress`,
:func:`completed_offset`).

Limits: a file truncated and rewritten past the old offset between two scans looks like an append
on the same inode; the queue's idempotency keys keep re-reads from producing duplicates.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Literal

from nous_assets.store.db import Connection, atomic
from nous_assets.timeutil import now_iso, parse_time, to_iso

ReadReason = Literal["new", "appended", "unchanged", "truncated", "rotated"]


@dataclass(frozen=True)
class FileState:
    """A file as ``stat`` sees it now; ``inode`` is ``"st_dev:st_ino"`` and ``mtime`` canonical ISO text."""

    path: str
    inode: str
    size: int
    mtime: str


@dataclass(frozen=True)
class Cursor:
    path: str
    inode: str | None
    offset: int
    mtime: str | None


@dataclass(frozen=True)
class ReadPlan:
    start_offset: int
    reason: ReadReason


def _mtime_iso(st: os.stat_result) -> str:
    return to_iso(datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=st.st_mtime_ns // 1000))


def stat_file(path: str | os.PathLike[str]) -> FileState | None:
    """The file's identity, size and mtime; None when it does not exist (or is not a regular file)."""
    try:
        st = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    if not stat.S_ISREG(st.st_mode):
        return None
    return FileState(path=os.fspath(path), inode=f"{st.st_dev}:{st.st_ino}", size=st.st_size, mtime=_mtime_iso(st))


def plan_read(cursor: Cursor | None, state: FileState) -> ReadPlan:
    """Where to start reading ``state`` given its stored cursor (pure).

    No cursor: ``new`` from 0. Different inode: ``rotated`` from 0. Same inode and the file shrank
    below the offset: ``truncated`` from 0. Same size as the offset: ``unchanged``. Bigger:
    ``appended`` from the offset.
    """
    if cursor is None:
        return ReadPlan(0, "new")
    if cursor.inode != state.inode:
        return ReadPlan(0, "rotated")
    if state.size < cursor.offset:
        return ReadPlan(0, "truncated")
    if state.size == cursor.offset:
        return ReadPlan(cursor.offset, "unchanged")
    return ReadPlan(cursor.offset, "appended")


def _path(path: str | os.PathLike[str]) -> str:
    return os.fspath(path)


def _now(now: str | None) -> str:
    return now_iso() if now is None else to_iso(parse_time(now))


def _check_offset(offset: int) -> None:
    if isinstance(offset, bool) or not isinstance(offset, int) or offset < 0:
        raise ValueError(f"offset must be a non-negative integer, got {offset!r}")


def get_cursor(conn: Connection, path: str | os.PathLike[str]) -> Cursor | None:
    """The most recently updated cursor for ``path`` (older rows are earlier inodes of a rotated file)."""
    row = conn.execute(
        "SELECT transcript_path, file_inode, last_offset, last_mtime FROM ingest_cursors "
        "WHERE transcript_path = ? ORDER BY updated_at DESC, cursor_id DESC LIMIT 1",
        (_path(path),),
    ).fetchone()
    return None if row is None else Cursor(row[0], row[1], row[2], row[3])


def _stored_offset(conn: Connection, path: str, inode: str | None) -> int | None:
    row = conn.execute(
        "SELECT last_offset FROM ingest_cursors WHERE transcript_path = ? AND file_inode IS ?", (path, inode)
    ).fetchone()
    return None if row is None else row[0]


def _write(conn: Connection, path: str, inode: str | None, offset: int, mtime: str | None, stamp: str) -> None:
    # Update-then-insert rather than ON CONFLICT: a NULL inode never conflicts in a UNIQUE index.
    cur = conn.execute(
        "UPDATE ingest_cursors SET last_offset = ?, last_mtime = ?, updated_at = ? "
        "WHERE transcript_path = ? AND file_inode IS ?",
        (offset, mtime, stamp, path, inode),
    )
    if cur.rowcount == 0:
        conn.execute(
            "INSERT INTO ingest_cursors(transcript_path, file_inode, last_offset, last_mtime, updated_at) "
            "VALUES (?, ?, ?, ?, ?)",
            (path, inode, offset, mtime, stamp),
        )


def set_cursor(
    conn: Connection,
    path: str | os.PathLike[str],
    inode: str | None,
    offset: int,
    mtime: str | None,
    now: str | None = None,
) -> None:
    """Store the cursor for ``(path, inode)`` unconditionally (it may move backwards)."""
    _check_offset(offset)
    stamp = _now(now)
    with atomic(conn):
        _write(conn, _path(path), inode, offset, mtime, stamp)


def promote(
    conn: Connection,
    path: str | os.PathLike[str],
    inode: str | None,
    offset: int,
    mtime: str | None,
    now: str | None = None,
) -> bool:
    """Move the cursor for ``(path, inode)`` forward to ``offset``; never backwards.

    Returns True when it moved (or a cursor for a new inode was created), False when the stored
    offset is already at or past ``offset`` (a late or repeated completion), leaving it untouched.
    """
    _check_offset(offset)
    key = _path(path)
    stamp = _now(now)
    with atomic(conn):
        stored = _stored_offset(conn, key, inode)
        if stored is not None and offset <= stored:
            return False
        _write(conn, key, inode, offset, mtime, stamp)
    return True


def rewind(
    conn: Connection, path: str | os.PathLike[str], inode: str, mtime: str | None, now: str | None = None
) -> None:
    """A file truncated in place: cursor back to 0, and what was completed for its old bytes forgotten.

    The completion records (``ingest_file_partitions``) are per inode, and truncation keeps the
    inode; left alone they would let the cursor move past new bytes on days never re-read.
    """
    key = _path(path)
    stamp = _now(now)
    with atomic(conn):
        _write(conn, key, inode, 0, mtime, stamp)
        conn.execute(
            "UPDATE ingest_file_partitions SET scanned_offset = 0, completed_offset = 0, updated_at = ? "
            "WHERE transcript_path = ? AND file_inode = ?",
            (stamp, key, inode),
        )


def delete_cursor(conn: Connection, path: str | os.PathLike[str]) -> int:
    """Forget every cursor for a vanished file; returns how many rows went."""
    with atomic(conn):
        cur = conn.execute("DELETE FROM ingest_cursors WHERE transcript_path = ?", (_path(path),))
    return cur.rowcount


def record_day_progress(
    conn: Connection, path: str, inode: str, date: str, scanned_offset: int, completed_offset: int, now: str
) -> None:
    """How far ``path`` was scanned for ``date``; ``completed_offset`` only ever grows (0 = not completed)."""
    conn.execute(
        "INSERT INTO ingest_file_partitions(transcript_path, file_inode, date, scanned_offset, "
        "completed_offset, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(transcript_path, file_inode, date) DO UPDATE SET "
        "scanned_offset = excluded.scanned_offset, "
        "completed_offset = max(completed_offset, excluded.completed_offset), updated_at = excluded.updated_at",
        (path, inode, date, scanned_offset, completed_offset, now),
    )


def completed_offset(conn: Connection, path: str, inode: str, date: str) -> int | None:
    """How far a completed scan of ``date`` read this file (inode), or None if none was recorded."""
    row = conn.execute(
        "SELECT completed_offset FROM ingest_file_partitions WHERE transcript_path = ? AND file_inode = ? "
        "AND date = ?",
        (path, inode, date),
    ).fetchone()
    return None if row is None else row[0]

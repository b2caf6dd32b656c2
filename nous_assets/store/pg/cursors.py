"""Ingest cursors on PostgreSQL: the same rules as :mod:`nous_assets.store.ingest.cursors` for one tenant.

A cursor only moves forward through :meth:`PgCursorStore.promote`, decided inside one upsert (the row's own
lock orders two workers completing the same file), so a late or repeated completion never moves it back.
"""

from __future__ import annotations

import os

import psycopg

from nous_assets.store.ingest.cursors import Cursor, _check_offset, _now

_UPSERT = (
    "INSERT INTO ingest_cursors(tenant_id, transcript_path, file_inode, last_offset, last_mtime, updated_at) "
    "VALUES (%s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, transcript_path, file_inode) DO UPDATE SET "
    "last_offset = excluded.last_offset, last_mtime = excluded.last_mtime, updated_at = excluded.updated_at"
)


class PgCursorStore:
    """``ingest_cursors`` and ``ingest_file_partitions`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def get(self, path: str) -> Cursor | None:
        row = self.conn.execute(
            "SELECT transcript_path, file_inode, last_offset, last_mtime FROM ingest_cursors "
            "WHERE tenant_id = %s AND transcript_path = %s ORDER BY updated_at DESC, cursor_id DESC LIMIT 1",
            (self.tenant_id, os.fspath(path)),
        ).fetchone()
        return None if row is None else Cursor(row[0], row[1], int(row[2]), row[3])

    def set(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> None:
        _check_offset(offset)
        self.conn.execute(_UPSERT, (self.tenant_id, os.fspath(path), inode, offset, mtime, _now(now)))

    def promote(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> bool:
        _check_offset(offset)
        moved = self.conn.execute(
            _UPSERT + " WHERE ingest_cursors.last_offset < excluded.last_offset RETURNING 1",
            (self.tenant_id, os.fspath(path), inode, offset, mtime, _now(now)),
        ).fetchone()
        return moved is not None

    def rewind(self, path: str, inode: str, mtime: str | None, now: str | None = None) -> None:
        key, stamp = os.fspath(path), _now(now)
        with self.conn.transaction():
            self.conn.execute(_UPSERT, (self.tenant_id, key, inode, 0, mtime, stamp))
            self.conn.execute(
                "UPDATE ingest_file_partitions SET scanned_offset = 0, completed_offset = 0, updated_at = %s "
                "WHERE tenant_id = %s AND transcript_path = %s AND file_inode = %s",
                (stamp, self.tenant_id, key, inode),
            )

    def delete(self, path: str) -> int:
        return self.conn.execute(
            "DELETE FROM ingest_cursors WHERE tenant_id = %s AND transcript_path = %s",
            (self.tenant_id, os.fspath(path)),
        ).rowcount

    def record_day_progress(
        self, path: str, inode: str, date: str, scanned_offset: int, completed_offset: int, now: str
    ) -> None:
        self.conn.execute(
            "INSERT INTO ingest_file_partitions(tenant_id, transcript_path, file_inode, date, scanned_offset, "
            "completed_offset, updated_at) VALUES (%s, %s, %s, %s, %s, %s, %s) "
            "ON CONFLICT (tenant_id, transcript_path, file_inode, date) DO UPDATE SET "
            "scanned_offset = excluded.scanned_offset, "
            "completed_offset = greatest(ingest_file_partitions.completed_offset, excluded.completed_offset), "
            "updated_at = excluded.updated_at",
            (self.tenant_id, path, inode, date, scanned_offset, completed_offset, now),
        )

    def completed_offset(self, path: str, inode: str, date: str) -> int | None:
        row = self.conn.execute(
            "SELECT completed_offset FROM ingest_file_partitions WHERE tenant_id = %s AND transcript_path = %s "
            "AND file_inode = %s AND date = %s",
            (self.tenant_id, path, inode, date),
        ).fetchone()
        return None if row is None else int(row[0])

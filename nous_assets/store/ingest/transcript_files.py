"""What the store records about transcript files, for ``nous doctor``'s check that none vanished unread.

Claude Code deletes transcripts older than ``cleanupPeriodDays``; a file Nous recorded (a cursor, a scanned day)
is compared with the disk by the doctor. Read only.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.db import Connection


@dataclass(frozen=True)
class KnownFile:
    path: str
    offset: int  # bytes durably ingested (the cursor; 0 when never read)
    mtime: str | None  # the file's mtime when the cursor last moved
    unfinished_days: int  # days whose scanned bytes are not all extracted yet
    scanned: int = 0  # the furthest byte any day's scan reached (its turns are in the lake, safe from deletion)

    @property
    def never_read(self) -> bool:
        """Recorded (seen by a scan or a cursor) yet no byte of it reached the lake or the log."""
        return self.offset == 0 and self.scanned == 0


def known_files(conn: Connection) -> list[KnownFile]:
    """Every transcript path with a cursor or a scanned day, with how far it was read."""
    rows = conn.execute(
        "SELECT p.path, coalesce(max(c.last_offset), 0), max(c.last_mtime), "
        "(SELECT count(*) FROM ingest_file_partitions f WHERE f.transcript_path = p.path "
        " AND f.completed_offset < f.scanned_offset), "
        "(SELECT coalesce(max(f.scanned_offset), 0) FROM ingest_file_partitions f WHERE f.transcript_path = p.path) "
        "FROM (SELECT transcript_path AS path FROM ingest_cursors "
        "      UNION SELECT transcript_path FROM ingest_file_partitions) p "
        "LEFT JOIN ingest_cursors c ON c.transcript_path = p.path GROUP BY p.path ORDER BY p.path"
    ).fetchall()
    return [KnownFile(r[0], int(r[1]), r[2], int(r[3]), int(r[4])) for r in rows]

"""SQL of the hot/cold tiers: the only sanctioned move of rows out of ``learning_events``.

A cold segment is a standalone SQLite file holding ``learning_events`` rows (the live table's own
``CREATE TABLE`` statement) plus a one-row ``segment_meta``; the lifecycle layer compresses it with
zstd. Moving events out records the segment in ``archive_segments``, indexes the moved events in
``archived_events`` and deletes them from the live log in one transaction, after checking that the live
rows are byte-for-byte those in the segment; restoring is the mirror image. The event stream (what the
SHA-256 is over) is every row, all columns in table order, as one JSON array per line, in ``event_id``
order: the same bytes whether read from the live log or from a segment.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from nous_assets.store.db import Connection, atomic, sqlite3
from nous_assets.timeutil import now_iso

ARCHIVE_FLAG = "archive_in_progress"  # nous_meta key that lets the delete trigger through (001_init.sql)
_PAGE = 20_000


@dataclass(frozen=True)
class Segment:
    """One row of ``archive_segments``."""

    segment_id: str
    archive_path: str
    min_event_id: int
    max_event_id: int
    event_count: int
    stream_checksum_sha256: str
    compressed_bytes: int
    created_at: str
    restored_at: str | None


@dataclass(frozen=True)
class StreamDigest:
    """What a pass over an event stream yields: how many rows, the id range and the SHA-256."""

    count: int
    min_event_id: int
    max_event_id: int
    sha256: str


def stream_line(row: tuple) -> bytes:
    """One event of the stream: its columns, in table order, as a JSON array and a newline."""
    return orjson.dumps(list(row)) + b"\n"


def digest(rows: Iterable[tuple]) -> StreamDigest:
    """Count, id range and SHA-256 of ``rows`` (``SELECT *`` tuples in ``event_id`` order)."""
    h = hashlib.sha256()
    count, lo, hi = 0, 0, 0
    for row in rows:
        h.update(stream_line(row))
        if count == 0:
            lo = row[0]
        hi = row[0]
        count += 1
    return StreamDigest(count, lo, hi, h.hexdigest())


def _pages(conn: Connection, sql: str, params: tuple) -> Iterator[tuple]:
    """Rows of ``sql`` (which must select ``event_id`` first and take ``after`` as its last parameter)."""
    cursor = conn.cursor()
    cursor.row_factory = None
    after = -1
    while True:
        rows = cursor.execute(sql, (*params, after)).fetchall()
        if not rows:
            return
        yield from rows
        after = rows[-1][0]


def live_stream(conn: Connection) -> Iterator[tuple]:
    """Every live event row in ``event_id`` order."""
    return _pages(
        conn, f"SELECT * FROM learning_events WHERE event_id > ? ORDER BY event_id LIMIT {_PAGE}", ()
    )


def candidate_years(conn: Connection, cutoff: str, through_event_id: int) -> list[str]:
    """Years (of the recorded time) of live events recorded before ``cutoff`` and already projected."""
    return [
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT substr(transaction_time, 1, 4) FROM learning_events "
            "WHERE transaction_time < ? AND event_id <= ? ORDER BY 1",
            (cutoff, through_event_id),
        )
    ]


def candidate_rows(conn: Connection, year: str, cutoff: str, through_event_id: int) -> Iterator[tuple]:
    """Live rows of one year recorded before ``cutoff`` (and at most ``through_event_id``), by event id."""
    return _pages(
        conn,
        "SELECT * FROM learning_events WHERE transaction_time < ? AND event_id <= ? "
        f"AND substr(transaction_time, 1, 4) = ? AND event_id > ? ORDER BY event_id LIMIT {_PAGE}",
        (cutoff, through_event_id, year),
    )


def events_table_sql(conn: Connection) -> str:
    """The live ``CREATE TABLE learning_events`` statement (a segment has the same schema)."""
    return conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = 'learning_events'").fetchone()[0]


# -- segment files (plain SQLite files, no migrations, no extensions) ------------------------------------
def write_segment_db(path: Path, table_sql: str, segment_id: str, rows: Iterable[tuple]) -> StreamDigest:
    """Write ``rows`` into a new SQLite file at ``path`` and return the stream's digest (stored in it too)."""
    seg = sqlite3.connect(str(path), isolation_level=None)
    try:
        seg.execute("PRAGMA journal_mode = OFF")  # a scratch file until compressed; fsynced by the caller
        seg.execute("PRAGMA synchronous = OFF")
        seg.execute("PRAGMA cache_size = -131072")  # the unique uuid/key indexes take random inserts: keep them cached
        seg.execute("BEGIN")
        seg.execute(table_sql)
        seg.execute(
            "CREATE TABLE segment_meta (segment_id TEXT NOT NULL, event_count INTEGER NOT NULL, "
            "min_event_id INTEGER NOT NULL, max_event_id INTEGER NOT NULL, stream_checksum_sha256 TEXT NOT NULL)"
        )
        h = hashlib.sha256()
        count, lo, hi, batch = 0, 0, 0, []
        insert = None
        for row in rows:
            if insert is None:
                insert = f"INSERT INTO learning_events VALUES ({','.join('?' * len(row))})"
            h.update(stream_line(row))
            lo = row[0] if count == 0 else lo
            hi = row[0]
            count += 1
            batch.append(row)
            if len(batch) >= _PAGE:
                seg.executemany(insert, batch)
                batch = []
        if batch and insert:
            seg.executemany(insert, batch)
        result = StreamDigest(count, lo, hi, h.hexdigest())
        seg.execute(
            "INSERT INTO segment_meta VALUES (?, ?, ?, ?, ?)",
            (segment_id, result.count, result.min_event_id, result.max_event_id, result.sha256),
        )
        seg.execute("COMMIT")
    finally:
        seg.close()
    return result


@contextlib.contextmanager
def open_segment_db(path: Path) -> Iterator[Connection]:
    """A read-only connection to a decompressed segment file."""
    seg = sqlite3.connect(f"file:{path}?mode=ro", uri=True, isolation_level=None)
    try:
        yield seg
    finally:
        seg.close()


def segment_meta(seg: Connection) -> tuple[str, StreamDigest]:
    """The segment id and digest a segment file says it holds (raises ``sqlite3.DatabaseError`` if none)."""
    row = seg.execute(
        "SELECT segment_id, event_count, min_event_id, max_event_id, stream_checksum_sha256 FROM segment_meta"
    ).fetchone()
    if row is None:
        raise sqlite3.DatabaseError("segment_meta is empty")
    return row[0], StreamDigest(row[1], row[2], row[3], row[4])


def segment_stream(seg: Connection) -> Iterator[tuple]:
    """The rows of a segment file in ``event_id`` order."""
    return _pages(seg, f"SELECT * FROM learning_events WHERE event_id > ? ORDER BY event_id LIMIT {_PAGE}", ())


# -- the catalogue ------------------------------------------------------------------------------------
def segments(conn: Connection, *, include_restored: bool = True) -> list[Segment]:
    where = "" if include_restored else " WHERE restored_at IS NULL"
    return [
        Segment(*r)
        for r in conn.execute(
            "SELECT segment_id, archive_path, min_event_id, max_event_id, event_count, stream_checksum_sha256, "
            f"compressed_bytes, created_at, restored_at FROM archive_segments{where} ORDER BY min_event_id"
        )
    ]


def segment_by_path(conn: Connection, archive_path: str) -> Segment | None:
    return next((s for s in segments(conn) if s.archive_path == archive_path), None)


def archived_count(conn: Connection) -> int:
    """Events now held only in cold segments."""
    return int(conn.execute("SELECT count(*) FROM archived_events").fetchone()[0])


def _attached_stream(conn: Connection) -> Iterator[tuple]:
    """Live rows that carry the ids of the attached segment ``seg``, in ``event_id`` order.

    Walks the segment's ids by rowid and looks each up in the live table (no temporary index per page)."""
    return _pages(
        conn,
        "SELECT m.* FROM seg.learning_events s JOIN main.learning_events m ON m.event_id = s.event_id "
        f"WHERE s.event_id > ? ORDER BY s.event_id LIMIT {_PAGE}",
        (),
    )


def _segment_rows_also_live(conn: Connection) -> Iterator[tuple]:
    """Rows of the attached segment ``seg`` whose ids are also live, in ``event_id`` order."""
    return _pages(
        conn,
        "SELECT s.* FROM seg.learning_events s JOIN main.learning_events m ON m.event_id = s.event_id "
        f"WHERE s.event_id > ? ORDER BY s.event_id LIMIT {_PAGE}",
        (),
    )


@contextlib.contextmanager
def attached(conn: Connection, segment_file: Path) -> Iterator[None]:
    """``segment_file`` attached as ``seg`` (ATTACH cannot run inside a transaction, so it wraps one)."""
    conn.execute("ATTACH DATABASE ? AS seg", (str(segment_file),))
    try:
        yield
    finally:
        conn.execute("DETACH DATABASE seg")


def move_out(conn: Connection, segment_file: Path, segment: Segment) -> None:
    """Record ``segment`` and delete its events from the live log, in one transaction.

    ``segment_file`` (the decompressed segment) is attached; the live rows with its ids must hash to
    the segment's checksum, or nothing happens (ValueError). Foreign keys are off for the move: a moved
    event may be the parent of one that stays, and ``archived_events`` keeps its id known.
    """
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        with attached(conn, segment_file), atomic(conn):
            live = digest(_attached_stream(conn))
            if (live.count, live.sha256) != (segment.event_count, segment.stream_checksum_sha256):
                raise ValueError(
                    f"the live events of segment {segment.segment_id} do not match its file "
                    f"({live.count} live rows vs {segment.event_count} archived)"
                )
            conn.execute(
                "INSERT OR REPLACE INTO nous_meta(key, value) VALUES (?, ?)", (ARCHIVE_FLAG, segment.segment_id)
            )
            conn.execute(
                "INSERT INTO archive_segments(segment_id, archive_path, tier, min_event_id, max_event_id, event_count, "
                "stream_checksum_sha256, compressed_bytes, created_at) VALUES (?, ?, 'cold', ?, ?, ?, ?, ?, ?)",
                (segment.segment_id, segment.archive_path, segment.min_event_id, segment.max_event_id,
                 segment.event_count, segment.stream_checksum_sha256, segment.compressed_bytes, segment.created_at),
            )  # fmt: skip
            conn.execute(
                "INSERT INTO archived_events(event_id, idempotency_key, learning_id, event_type, segment_id) "
                "SELECT event_id, idempotency_key, learning_id, event_type, ? FROM main.learning_events "
                "WHERE event_id IN (SELECT event_id FROM seg.learning_events)",
                (segment.segment_id,),
            )
            conn.execute(
                "DELETE FROM main.learning_events WHERE event_id IN (SELECT event_id FROM seg.learning_events)"
            )
            conn.execute("DELETE FROM nous_meta WHERE key = ?", (ARCHIVE_FLAG,))
    finally:
        conn.execute("PRAGMA foreign_keys = ON")


def live_rows_of(conn: Connection, segment_file: Path) -> StreamDigest:
    """Digest of the live rows that carry the ids of a (decompressed) segment file."""
    with attached(conn, segment_file), atomic(conn, immediate=False):
        return digest(_attached_stream(conn))


def merge_back(conn: Connection, segment_file: Path, segment_id: str, known: bool) -> int:
    """Insert a segment's events that are not live, drop its index rows and mark it restored; one transaction.

    Events already live must be identical to the segment's (ValueError otherwise). Returns how many
    rows were inserted (0 when the segment was already restored).
    """
    conn.execute("PRAGMA foreign_keys = OFF")
    try:
        with attached(conn, segment_file), atomic(conn):
            present = digest(_attached_stream(conn))
            if present.count:
                with_ids = digest(_segment_rows_also_live(conn))
                if with_ids.sha256 != present.sha256:
                    raise ValueError(
                        f"{present.count} event(s) of segment {segment_id} are live but differ from the archive"
                    )
            inserted = conn.execute(
                "INSERT INTO main.learning_events SELECT * FROM seg.learning_events "
                "WHERE event_id NOT IN (SELECT event_id FROM main.learning_events) ORDER BY event_id"
            ).rowcount
            conn.execute("DELETE FROM archived_events WHERE segment_id = ?", (segment_id,))
            if known:
                conn.execute(
                    "UPDATE archive_segments SET restored_at = coalesce(restored_at, ?) WHERE segment_id = ?",
                    (now_iso(), segment_id),
                )
    finally:
        conn.execute("PRAGMA foreign_keys = ON")
    return inserted


def copy_events(conn: Connection, segment_file: Path) -> None:
    """Copy a segment's events into the ``learning_events`` of ``conn`` (a scratch database for a replay)."""
    with attached(conn, segment_file), atomic(conn):
        conn.execute("INSERT INTO main.learning_events SELECT * FROM seg.learning_events")


def copy_live_events(conn: Connection, target: Path) -> None:
    """Copy every live event into the ``learning_events`` of the (migrated, empty) database at ``target``."""
    conn.execute("ATTACH DATABASE ? AS allt", (str(target),))
    try:
        with atomic(conn):
            conn.execute("INSERT INTO allt.learning_events SELECT * FROM main.learning_events")
    finally:
        conn.execute("DETACH DATABASE allt")

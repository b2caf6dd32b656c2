"""Per-file cursors: stat identity, read planning over real files, forward-only promotion."""

from __future__ import annotations

import os
from datetime import timedelta

from hypothesis import given, settings
from hypothesis import strategies as st

from nous_assets.store.ingest import cursors
from nous_assets.store.ingest.cursors import Cursor, FileState, ReadPlan, plan_read
from nous_assets.timeutil import parse_time, to_iso

T0 = "2025-06-01T12:00:00.000000Z"


def at(seconds: float) -> str:
    return to_iso(parse_time(T0) + timedelta(seconds=seconds))


def record(conn, state: FileState, now: str) -> None:
    """What the ingest worker does once everything up to the end of the file is completed."""
    cursors.set_cursor(conn, state.path, state.inode, state.size, state.mtime, now=now)


def test_stat_file(tmp_path):
    path = tmp_path / "s.jsonl"
    assert cursors.stat_file(path) is None
    assert cursors.stat_file(tmp_path) is None  # a directory is not a transcript
    assert cursors.stat_file(path / "below-a-file") is None
    path.write_bytes(b'{"a": 1}\n')
    os.utime(path, ns=(1_700_000_000_123_456_789, 1_700_000_000_123_456_789))
    state = cursors.stat_file(path)
    st = os.stat(path)
    assert state == FileState(str(path), f"{st.st_dev}:{st.st_ino}", 9, "2023-11-14T22:13:20.123456Z")
    assert cursors.stat_file(str(path)) == state


def test_plan_read_detects_every_case_on_real_files(conn, tmp_path):
    path = tmp_path / "session.jsonl"
    path.write_bytes(b'{"n": 1}\n{"n": 2}\n')
    first = cursors.stat_file(path)
    assert plan_read(cursors.get_cursor(conn, path), first) == ReadPlan(0, "new")
    record(conn, first, at(1))

    assert plan_read(cursors.get_cursor(conn, path), cursors.stat_file(path)) == ReadPlan(first.size, "unchanged")

    with path.open("ab") as f:
        f.write(b'{"n": 3}\n')
    appended = cursors.stat_file(path)
    assert appended.inode == first.inode and appended.size > first.size
    assert plan_read(cursors.get_cursor(conn, path), appended) == ReadPlan(first.size, "appended")
    record(conn, appended, at(2))

    with path.open("r+b") as f:  # truncate in place and rewrite something shorter: same inode
        f.truncate(0)
        f.write(b'{"x": 0}\n')
    truncated = cursors.stat_file(path)
    assert truncated.inode == appended.inode and truncated.size < appended.size
    assert plan_read(cursors.get_cursor(conn, path), truncated) == ReadPlan(0, "truncated")
    record(conn, truncated, at(3))

    replacement = tmp_path / "session.jsonl.new"
    replacement.write_bytes(b'{"n": 1}\n{"n": 2}\n{"n": 3}\n{"n": 4}\n')
    keep_alive = path.open("rb")  # hold the old inode so the filesystem cannot reuse its number
    try:
        os.replace(replacement, path)
        rotated = cursors.stat_file(path)
    finally:
        keep_alive.close()
    assert rotated.inode != truncated.inode
    assert plan_read(cursors.get_cursor(conn, path), rotated) == ReadPlan(0, "rotated")
    record(conn, rotated, at(4))
    assert cursors.get_cursor(conn, path) == Cursor(str(path), rotated.inode, rotated.size, rotated.mtime)
    assert plan_read(cursors.get_cursor(conn, path), cursors.stat_file(path)).reason == "unchanged"


def test_plan_read_is_pure():
    state = FileState("/f", "1:1", 100, T0)
    assert plan_read(None, state) == ReadPlan(0, "new")
    assert plan_read(Cursor("/f", "1:1", 40, T0), state) == ReadPlan(40, "appended")
    assert plan_read(Cursor("/f", "1:1", 100, T0), state) == ReadPlan(100, "unchanged")
    assert plan_read(Cursor("/f", "1:1", 101, T0), state) == ReadPlan(0, "truncated")
    assert plan_read(Cursor("/f", "1:2", 40, T0), state) == ReadPlan(0, "rotated")
    assert plan_read(Cursor("/f", "1:2", 100, T0), state) == ReadPlan(0, "rotated")
    assert plan_read(Cursor("/f", None, 0, None), state) == ReadPlan(0, "rotated")


def test_promote_only_moves_forward(conn):
    assert cursors.promote(conn, "/f", "1:1", 100, at(0), now=at(0))  # first cursor for this inode
    assert not cursors.promote(conn, "/f", "1:1", 100, at(1), now=at(1))  # same offset: no move
    assert not cursors.promote(conn, "/f", "1:1", 40, at(2), now=at(2))  # late completion of an earlier item
    assert cursors.get_cursor(conn, "/f") == Cursor("/f", "1:1", 100, at(0))
    assert cursors.promote(conn, "/f", "1:1", 150, at(3), now=at(3))
    assert cursors.get_cursor(conn, "/f") == Cursor("/f", "1:1", 150, at(3))

    # a rotated file starts its own cursor from a low offset; the newest row wins
    assert cursors.promote(conn, "/f", "1:2", 10, at(4), now=at(4))
    assert cursors.get_cursor(conn, "/f") == Cursor("/f", "1:2", 10, at(4))
    assert conn.execute("SELECT count(*) FROM ingest_cursors").fetchone()[0] == 2


def test_set_cursor_upserts_and_may_rewind(conn):
    cursors.set_cursor(conn, "/f", "1:1", 100, at(0), now=at(0))
    cursors.set_cursor(conn, "/f", "1:1", 0, at(1), now=at(1))
    assert cursors.get_cursor(conn, "/f") == Cursor("/f", "1:1", 0, at(1))
    cursors.set_cursor(conn, "/f", None, 5, None, now=at(2))  # NULL inode still upserts (no UNIQUE help)
    cursors.set_cursor(conn, "/f", None, 7, None, now=at(3))
    assert conn.execute("SELECT count(*) FROM ingest_cursors").fetchone()[0] == 2
    assert cursors.get_cursor(conn, "/f") == Cursor("/f", None, 7, None)
    assert cursors.get_cursor(conn, "/other") is None


def test_delete_cursor(conn, tmp_path):
    path = tmp_path / "gone.jsonl"
    cursors.set_cursor(conn, path, "1:1", 10, None, now=at(0))
    cursors.set_cursor(conn, path, "1:2", 20, None, now=at(1))
    cursors.set_cursor(conn, "/kept", "1:3", 30, None, now=at(1))
    assert cursors.delete_cursor(conn, path) == 2
    assert cursors.get_cursor(conn, path) is None
    assert cursors.get_cursor(conn, "/kept").offset == 30
    assert cursors.delete_cursor(conn, path) == 0


@settings(max_examples=30, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=30))
def test_promote_keeps_the_maximum_offset(tmp_path_factory, new_db, offsets):
    conn = new_db(tmp_path_factory.mktemp("cur") / "c.db")
    try:
        best = -1
        for n, offset in enumerate(offsets):
            moved = cursors.promote(conn, "/f", "1:1", offset, None, now=at(n))
            assert moved == (offset > best)
            best = max(best, offset)
            assert cursors.get_cursor(conn, "/f").offset == best
    finally:
        conn.close()


def test_rewind_resets_the_cursor_and_forgets_completions_of_the_old_bytes(conn):
    cursors.set_cursor(conn, "/p/a.jsonl", "1:2", 900, T0, now=at(0))
    cursors.set_cursor(conn, "/p/b.jsonl", "1:3", 50, T0, now=at(0))
    for path, inode, day, done in [("/p/a.jsonl", "1:2", "d1", 900), ("/p/a.jsonl", "1:2", "d2", 900),
                                   ("/p/b.jsonl", "1:3", "d1", 50)]:  # fmt: skip
        conn.execute(
            "INSERT INTO ingest_file_partitions(transcript_path, file_inode, date, scanned_offset, completed_offset, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?)",
            (path, inode, day, done, done, T0),
        )
    cursors.rewind(conn, "/p/a.jsonl", "1:2", at(5), now=at(10))
    assert cursors.get_cursor(conn, "/p/a.jsonl") == Cursor("/p/a.jsonl", "1:2", 0, at(5))
    rows = conn.execute(
        "SELECT transcript_path, date, completed_offset FROM ingest_file_partitions ORDER BY 1, 2"
    ).fetchall()
    assert [tuple(r) for r in rows] == [("/p/a.jsonl", "d1", 0), ("/p/a.jsonl", "d2", 0), ("/p/b.jsonl", "d1", 50)]
    assert cursors.get_cursor(conn, "/p/b.jsonl").offset == 50  # other files untouched

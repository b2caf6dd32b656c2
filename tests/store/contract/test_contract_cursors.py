"""CursorStore contract: a cursor moves forward only through ``promote``, a rotated file's newest inode is
the one read, a rewind forgets the inode's completed days, per-day completion only grows, and a tenant's
cursors are its own (the same rules as ``store/cursors`` on SQLite, on both backends)."""

from __future__ import annotations

import pytest

from nous_assets.store.ingest.cursors import Cursor
from nous_assets.store.protocols import CursorStore

T1, T2, T3 = "2026-01-01T00:00:00.000000Z", "2026-01-01T00:01:00.000000Z", "2026-01-01T00:02:00.000000Z"
PATH = "/home/dev/.claude/projects/p/s.jsonl"


def test_the_provider_satisfies_the_protocol(backend):
    assert isinstance(backend.cursors, CursorStore)


def test_promote_only_moves_forward(backend):
    c = backend.cursors
    assert c.get(PATH) is None
    assert c.promote(PATH, "1:10", 100, "m1", now=T1) is True
    assert c.promote(PATH, "1:10", 100, "m2", now=T2) is False  # a repeated completion
    assert c.promote(PATH, "1:10", 40, "m2", now=T2) is False  # a late one
    assert c.get(PATH) == Cursor(PATH, "1:10", 100, "m1")
    assert c.promote(PATH, "1:10", 250, "m3", now=T3) is True
    assert c.get(PATH) == Cursor(PATH, "1:10", 250, "m3")
    c.set(PATH, "1:10", 10, "m4", now=T3)  # set may move back (an operator's reset)
    assert c.get(PATH).offset == 10
    with pytest.raises(ValueError, match="offset"):
        c.promote(PATH, "1:10", -1, None)
    with pytest.raises(ValueError, match="offset"):
        c.set(PATH, "1:10", True, None)


def test_a_rotated_file_reads_its_newest_inode_and_a_null_inode_is_one_cursor(backend):
    c = backend.cursors
    c.promote(PATH, "1:10", 500, "m1", now=T1)
    assert c.promote(PATH, "1:11", 20, "m2", now=T2) is True  # a new inode starts its own cursor
    assert c.get(PATH) == Cursor(PATH, "1:11", 20, "m2")
    other = "/tmp/no-inode.jsonl"
    assert c.promote(other, None, 5, None, now=T1) is True
    assert c.promote(other, None, 5, None, now=T2) is False
    assert c.promote(other, None, 9, None, now=T3) is True
    assert c.get(other) == Cursor(other, None, 9, None)
    assert c.delete(other) == 1 and c.get(other) is None
    assert c.delete(PATH) == 2 and c.delete(PATH) == 0


def test_day_progress_only_grows_and_a_rewind_forgets_it(backend):
    c = backend.cursors
    assert c.completed_offset(PATH, "1:10", "2026-01-01") is None
    c.record_day_progress(PATH, "1:10", "2026-01-01", 300, 300, T1)
    c.record_day_progress(PATH, "1:10", "2026-01-01", 400, 0, T2)  # a later scan that did not complete
    assert c.completed_offset(PATH, "1:10", "2026-01-01") == 300
    c.record_day_progress(PATH, "1:10", "2026-01-01", 450, 450, T2)
    c.record_day_progress(PATH, "1:99", "2026-01-01", 70, 70, T2)  # another inode: its own record
    c.promote(PATH, "1:10", 450, "m", now=T2)
    c.rewind(PATH, "1:10", "m-new", now=T3)
    assert c.get(PATH) == Cursor(PATH, "1:10", 0, "m-new")
    assert c.completed_offset(PATH, "1:10", "2026-01-01") == 0
    assert c.completed_offset(PATH, "1:99", "2026-01-01") == 70
    assert c.promote(PATH, "1:10", 10, "m-new", now=T3) is True


def test_cursors_are_per_tenant(make_backend):
    a, b = make_backend("a"), make_backend("b")
    a.cursors.promote(PATH, "1:10", 100, "m", now=T1)
    a.cursors.record_day_progress(PATH, "1:10", "2026-01-01", 100, 100, T1)
    assert b.cursors.get(PATH) is None and b.cursors.completed_offset(PATH, "1:10", "2026-01-01") is None
    assert b.cursors.promote(PATH, "1:10", 5, "m", now=T2) is True  # B's own cursor, from nothing
    b.cursors.rewind(PATH, "1:10", "m", now=T3)
    assert b.cursors.delete(PATH) == 1
    assert a.cursors.get(PATH) == Cursor(PATH, "1:10", 100, "m")
    assert a.cursors.completed_offset(PATH, "1:10", "2026-01-01") == 100

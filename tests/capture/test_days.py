"""The days of a transcript come from every timestamp in it, not from its head and tail."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from nous_assets.capture import days as days_module
from nous_assets.capture.days import days_in, file_days
from nous_assets.capture.discovery import discover
from nous_assets.capture.parser import parse_file

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
CORPORA = [SHARED / "transcripts", SHARED / "transcripts-dev2"]
LARGE = SHARED / "transcripts" / "episodic-memory" / "large-conversation.jsonl"


def _line(uuid: str, ts: object, text: str = "hi", **extra) -> bytes:
    rec = {"type": "user", "uuid": uuid, "sessionId": "s", "message": {"role": "user", "content": text}, **extra}
    if ts is not None:
        rec["timestamp"] = ts
    return json.dumps(rec).encode() + b"\n"


def test_a_day_in_the_middle_of_the_file_is_found(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        _line("a", "2025-09-20T04:00:00.000Z")
        + _line("b", "2025-09-19T23:59:00.000Z")  # an earlier day between later ones
        + _line("c", "2025-09-20T05:00:00.000Z")
    )
    info = file_days(p)
    assert info.days == {"2025-09-19", "2025-09-20"}
    assert info.first == info.fallback == "2025-09-20"


def test_offsets_and_epoch_timestamps_are_dated_in_utc_like_the_parser(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        _line("a", "2025-09-20T01:00:00+05:00")  # 2025-09-19T20:00Z
        + _line("b", 1758412800000)  # epoch ms: 2025-09-21T00:00Z
        + _line("c", "not a time")
    )
    parsed = {t.timestamp[:10] for t in parse_file(p, "p").turns if t.timestamp}
    assert file_days(p).days == parsed == {"2025-09-19", "2025-09-21"}


def test_a_file_without_timestamps_falls_back_to_its_mtime_day(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"type": "summary", "summary": "t", "leafUuid": "x"}\n')
    os.utime(p, (1_700_000_000, 1_700_000_000))  # 2023-11-14
    info = file_days(p)
    assert info.days == frozenset() and info.first is None and info.fallback == "2023-11-14"


def test_lines_longer_than_a_block_and_a_missing_last_newline(tmp_path, monkeypatch):
    monkeypatch.setattr(days_module, "_BLOCK", 64)
    p = tmp_path / "s.jsonl"
    p.write_bytes(
        _line("a", "2025-01-01T00:00:00Z", text="x" * 300)
        + _line("b", "2025-01-02T00:00:00Z")
        + _line("c", "2025-01-03T00:00:00Z", text="y" * 200).rstrip(b"\n")
    )
    assert file_days(p).days == {"2025-01-01", "2025-01-02", "2025-01-03"}


def test_cached_until_the_file_changes(tmp_path):
    p = tmp_path / "s.jsonl"
    p.write_bytes(_line("a", "2025-01-01T00:00:00Z"))
    first = file_days(p)
    assert file_days(p) is first  # unchanged: served from the cache
    with p.open("ab") as fh:
        fh.write(_line("b", "2025-01-05T00:00:00Z"))
    again = file_days(p)
    assert again is not first and again.days == {"2025-01-01", "2025-01-05"}
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(_line("z", "2024-12-31T00:00:00Z"))
    os.replace(replacement, p)  # rotated: new inode at the same path
    assert file_days(p).days == {"2024-12-31"}
    p.unlink()
    assert file_days(p) is None


def test_days_in_a_chunk():
    assert days_in(_line("a", "2025-01-01T00:00:00Z") + _line("b", "2025-01-02T10:00:00.5Z")) == {
        "2025-01-01",
        "2025-01-02",
    }
    assert days_in(b"no timestamps here\n") == set()


@pytest.mark.skipif(not LARGE.is_file(), reason="shared transcripts not available")
def test_large_conversation_has_its_earlier_day():
    assert file_days(LARGE).days == {"2025-09-19", "2025-09-20"}


@pytest.mark.skipif(not CORPORA[0].is_dir(), reason="shared transcripts not available")
@pytest.mark.parametrize("corpus", CORPORA, ids=lambda p: p.name)
def test_every_parsed_turn_day_is_a_file_day_on_the_real_corpora(corpus):
    """The invariant that keeps cursors from being stranded: a day a turn lands on always reads its file."""
    if not corpus.is_dir():
        pytest.skip(f"{corpus} not available")
    checked = 0
    for f in discover(str(corpus / "**" / "*.jsonl")).files:
        info = file_days(f.path)
        turn_days = {t.timestamp[:10] for t in parse_file(f.path, f.project_id).turns if t.timestamp}
        assert turn_days <= info.days, f.path
        checked += bool(turn_days)
    assert checked > 5

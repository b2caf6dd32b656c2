"""Line numbers of transcript records: right on real transcripts, absent (never wrong) when they cannot be told."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from nous_assets.mcp_server.lines import TranscriptLines

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"
SOURCE = SHARED / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"


@pytest.fixture
def corpus(tmp_path: Path) -> Path:
    """A projects folder holding one real transcript."""
    target = tmp_path / "projects" / "p" / SOURCE.name
    target.parent.mkdir(parents=True)
    shutil.copyfile(SOURCE, target)
    return target


def _records(path: Path) -> list[tuple[int, int, str]]:
    """(line number, byte offset, uuid) of every record that has a uuid."""
    out, offset = [], 0
    for number, raw in enumerate(path.read_bytes().splitlines(keepends=True), start=1):
        uuid = json.loads(raw).get("uuid") if raw.strip() else None
        if uuid:
            out.append((number, offset, uuid))
        offset += len(raw)
    return out


def test_every_record_gets_its_own_line_number(corpus: Path):
    lines = TranscriptLines.of(str(corpus.parents[1] / "**" / "*.jsonl"))
    records = _records(corpus)
    assert len(records) > 10
    assert all(lines.number(str(corpus), offset, [uuid]) == number for number, offset, uuid in records)


def test_no_number_when_the_file_changed_or_the_offset_is_not_a_record(corpus: Path):
    lines = TranscriptLines(corpus.parents[1])
    number, offset, uuid = _records(corpus)[5]
    assert lines.number(str(corpus), offset, ["not-" + uuid]) is None  # another record is there now
    assert lines.number(str(corpus), offset + 1, [uuid]) is None  # mid-line
    assert lines.number(str(corpus), corpus.stat().st_size + 10, [uuid]) is None
    assert lines.number(str(corpus), -1, [uuid]) is None
    corpus.write_bytes(b"\n" + corpus.read_bytes())  # rewritten: the record moved one byte on
    assert lines.number(str(corpus), offset, [uuid]) is None
    assert lines.number(str(corpus), offset + 1, [uuid]) == number + 1


def test_only_transcripts_under_the_ingested_folder_are_read(corpus: Path, tmp_path: Path):
    lines = TranscriptLines(corpus.parents[1])
    number, offset, uuid = _records(corpus)[3]
    outside = tmp_path / "elsewhere.jsonl"
    shutil.copyfile(corpus, outside)
    escape = corpus.parent / "escape.jsonl"
    os.symlink(outside, escape)
    not_jsonl = corpus.with_suffix(".txt")
    shutil.copyfile(corpus, not_jsonl)
    assert lines.number(str(outside), offset, [uuid]) is None
    assert lines.number(str(escape), offset, [uuid]) is None
    assert lines.number(str(corpus.parent / ".." / ".." / "elsewhere.jsonl"), offset, [uuid]) is None
    assert lines.number(str(not_jsonl), offset, [uuid]) is None
    assert lines.number(str(corpus.parent / "missing.jsonl"), offset, [uuid]) is None
    assert lines.number(str(corpus), offset, [uuid]) == number

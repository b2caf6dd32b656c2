"""Lake partitions are merged, never replaced: a re-scan keeps the turns whose bytes are gone."""

from __future__ import annotations

import json
from dataclasses import replace

import polars as pl

from nous_assets.capture.lake import (
    merge_turns_into,
    quarantine_path,
    read_links,
    read_turns,
    turns_path,
    write_partition,
)
from nous_assets.capture.parser import AgentLink, Quarantined, parse_chunk

DAY = "2026-01-02"


def _user(uuid: str, text: str, minute: int) -> dict:
    return {
        "type": "user",
        "uuid": uuid,
        "sessionId": "s1",
        "timestamp": f"{DAY}T10:{minute:02d}:00.000Z",
        "message": {"role": "user", "content": text},
    }


def _assistant(uuid: str, mid: str, text: str, minute: int) -> dict:
    return {
        "type": "assistant",
        "uuid": uuid,
        "sessionId": "s1",
        "requestId": "r-" + mid,
        "timestamp": f"{DAY}T10:{minute:02d}:30.000Z",
        "message": {"id": mid, "role": "assistant", "model": "m", "content": [{"type": "text", "text": text}]},
    }


def _turns(*records: dict, path: str = "/p/s1.jsonl"):
    data = b"".join(json.dumps(r).encode() + b"\n" for r in records)
    return parse_chunk(data, base_offset=0, path=path, project_id="proj").turns


def test_merge_keeps_vanished_turns_updates_found_ones_and_appends_new_ones():
    old = _turns(_user("u1", "one", 1), _user("u2", "two", 2), _user("u3", "three", 3))
    # the file was truncated after u1 and rewritten: u1 again (redacted differently), then a new u4
    new = [replace(old[0], text="one (re-read)"), *_turns(_user("u4", "four", 4))]
    merged = merge_turns_into(old, new)
    assert [(t.uuid, t.text) for t in merged] == [
        ("u1", "one (re-read)"),
        ("u2", "two"),
        ("u3", "three"),
        ("u4", "four"),
    ]
    assert merge_turns_into(merged, new) == merged  # idempotent


def test_a_response_cut_by_truncation_keeps_its_longer_old_version_and_grows_by_appends():
    full = _turns(_assistant("a1", "m1", "part one", 1), _assistant("a2", "m1", "part two", 1))
    cut = _turns(_assistant("a1", "m1", "part one", 1))
    assert full[0].uuids == ("a1", "a2") and cut[0].uuids == ("a1",)
    assert merge_turns_into(full, cut)[0].text == "part one\npart two"  # truncation lost a2: keep the old row
    assert merge_turns_into(cut, full)[0].text == "part one\npart two"  # the response grew: take the new one


def test_write_partition_merges_turns_quarantine_and_links(tmp_path):
    first = _turns(_user("u1", "one", 1), _user("u2", "two", 2))
    bad = Quarantined("/p/s1.jsonl", 500, 3, "invalid JSON: x", "{oops")
    link = AgentLink("ag1", "s1", "toolu_1", None)
    write_partition(tmp_path, DAY, first, [bad], [link])
    # the file was rotated: the new one holds only u2 and a new u3, one new bad line, a better link
    second = [*first[1:], *_turns(_user("u3", "three", 3))]
    bad2 = Quarantined("/p/s1.jsonl", 900, 9, "record without a 'type'", "{}")
    write_partition(tmp_path, DAY, second, [bad2], [AgentLink("ag1", "s1", "toolu_1", "u2")])
    assert [t.uuid for t in read_turns(tmp_path, DAY)] == ["u1", "u2", "u3"]
    q = pl.read_parquet(quarantine_path(tmp_path, DAY))
    assert sorted(q["byte_offset"].to_list()) == [500, 900]
    links = read_links(tmp_path, DAY)
    assert links.height == 1 and links["parent_uuid"].to_list() == ["u2"]
    before = pl.read_parquet(turns_path(tmp_path, DAY))
    write_partition(tmp_path, DAY, second, [bad2], [AgentLink("ag1", "s1", "toolu_1", "u2")])  # re-run: no-op
    assert pl.read_parquet(turns_path(tmp_path, DAY)).equals(before)
    assert pl.read_parquet(quarantine_path(tmp_path, DAY)).height == 2
    assert read_links(tmp_path, DAY).height == 1


def test_kept_rows_of_an_opted_out_project_are_forgotten(tmp_path):
    write_partition(tmp_path, DAY, _turns(_user("u1", "secret project talk", 1)), [])
    write_partition(tmp_path, DAY, _turns(_user("u9", "other", 9)), [], forget_projects={"proj-other"})
    assert [t.uuid for t in read_turns(tmp_path, DAY)] == ["u1", "u9"]
    write_partition(tmp_path, DAY, [], [], forget_projects={"proj"})
    assert read_turns(tmp_path, DAY) == []


def test_a_rotated_file_starting_inside_a_response_keeps_the_whole_old_response():
    blocks = [_assistant(f"a{i}", "m1", f"block {i}", 1) for i in range(1, 5)]
    old = _turns(_user("u1", "q", 0), *blocks)
    tail = _turns(*blocks[2:])  # the new file begins at block 3: a fragment of the old response
    assert tail[0].uuids == ("a3", "a4")
    merged = merge_turns_into(old, tail)
    assert [t.uuid for t in merged] == ["u1", "a1"] and merged[1].text == "block 1\nblock 2\nblock 3\nblock 4"
    # ... and when the new file also continues that response, the continuation is kept beside it
    grown = _turns(*blocks[2:], _assistant("a5", "m1", "block 5", 1))
    merged = merge_turns_into(old, grown)
    assert [t.uuid for t in merged] == ["u1", "a1", "a3"] and merged[2].text.endswith("block 5")
    assert merge_turns_into(merged, grown) == merged

"""Parser tests: the real Claude Code transcripts in shared/data/transcripts plus hand-made edge cases."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path

import pytest

from nous_assets.capture.discovery import discover
from nous_assets.capture.parser import (
    AgentLink,
    Turn,
    dedupe_by_uuid,
    merge_agent_links,
    merge_turns,
    normalize_timestamp,
    parse_chunk,
    parse_file,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TRANSCRIPTS = SHARED / "data" / "transcripts"
TS_RE = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")

if not TRANSCRIPTS.is_dir():  # pragma: no cover - the shared corpus is part of the workspace
    pytest.skip(f"shared transcripts not found at {TRANSCRIPTS}", allow_module_level=True)

DISCOVERED = discover(str(TRANSCRIPTS / "**" / "*.jsonl"))
REAL_FILES = {str(f.path.relative_to(TRANSCRIPTS)): f for f in DISCOVERED.files}

# Verified against the data (and the counts in SOURCES.md): records = JSONL lines.
EXPECTED = {
    # rel path: (records, compact_summary turns, compact_boundary turns, summary turns, agent links)
    "episodic-memory/large-conversation.jsonl": (460, 0, 0, 2, 0),
    "episodic-memory/long-conversation.jsonl": (295, 0, 0, 0, 0),
    "episodic-memory/medium-conversation.jsonl": (23, 0, 0, 1, 0),
    "episodic-memory/short-conversation.jsonl": (3, 0, 0, 1, 0),
    "episodic-memory/tiny-conversation.jsonl": (7, 0, 0, 0, 0),
    "fasthooks/sample_agent_sidechain.jsonl": (2, 0, 0, 0, 0),
    "fasthooks/sample_main_transcript.jsonl": (63, 1, 1, 0, 0),
    "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl": (1863, 1, 1, 0, 1),
    "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (1512, 1, 1, 0, 1),
    "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": (1593, 1, 1, 0, 1),
    "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": (2385, 1, 1, 0, 1),
    "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl": (1881, 1, 1, 0, 2),
    "spotter/short.jsonl": (15, 0, 0, 0, 0),
    "spotter/subagent.jsonl": (96, 0, 0, 0, 1),
    "spotter/tool_heavy.jsonl": (39, 0, 0, 0, 0),
}


def _parse(rel: str):
    f = REAL_FILES[rel]
    return parse_file(f.path, f.project_id, session_id_hint=f.session_id)


def _raw_records(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_bytes().splitlines() if line.strip()]


# ------------------------------------------------------------------------------------------------------
# real transcripts


def test_corpus_is_discovered():
    assert len(REAL_FILES) == 27
    assert set(EXPECTED) <= set(REAL_FILES)


@pytest.mark.parametrize("rel", sorted(REAL_FILES))
def test_every_real_file_parses_cleanly(rel):
    f = REAL_FILES[rel]
    data = f.path.read_bytes()
    res = parse_file(f.path, f.project_id, session_id_hint=f.session_id)
    assert res.quarantined == []
    assert res.consumed_offset == len(data)
    assert res.records == len([ln for ln in data.splitlines() if ln.strip()])
    assert res.records == sum(res.skipped_by_type.values()) + sum(len(t.uuids) for t in res.turns)
    # one turn per API response, and turns never share a uuid
    mids = Counter(t.message_id for t in res.turns if t.message_id)
    assert not [m for m, n in mids.items() if n > 1]
    all_uuids = [u for t in res.turns for u in t.uuids]
    assert len(all_uuids) == len(set(all_uuids))
    for t in res.turns:
        assert t.project_id == f.project_id
        assert t.source_path == str(f.path)
        assert t.timestamp is None or TS_RE.match(t.timestamp)
        assert t.byte_start == t.line_offsets[0] and t.byte_end > t.line_offsets[-1]
        for off in t.line_offsets:  # every offset is the start of a line
            assert off == 0 or data[off - 1 : off] == b"\n"
        assert data[t.byte_end - 1 : t.byte_end] == b"\n"
        if t.thinking:
            assert t.role == "assistant"
            assert t.thinking not in t.text
        if t.kind == "tool_result":
            assert t.role == "user" and t.tool_results and not t.tool_uses
        for tu in t.tool_uses:
            compact = json.dumps(json.loads(tu.input_json), separators=(",", ":"), ensure_ascii=False)
            assert tu.input_json == compact and tu.id.startswith("toolu_")


@pytest.mark.parametrize("rel", sorted(EXPECTED))
def test_per_file_expectations(rel):
    records, compact_summaries, boundaries, summaries, links = EXPECTED[rel]
    res = _parse(rel)
    kinds = Counter(t.kind for t in res.turns)
    assert res.records == records
    assert kinds["compact_summary"] == compact_summaries
    assert kinds["compact_boundary"] == boundaries
    assert kinds["summary"] == summaries
    assert len(res.agent_links) == links


@pytest.mark.parametrize("rel", sorted(REAL_FILES))
def test_assistant_lines_merge_into_one_turn_per_response(rel):
    """Each distinct (message.id, requestId) becomes exactly one assistant turn, holding all its blocks."""
    f = REAL_FILES[rel]
    raw = [r for r in _raw_records(f.path) if r.get("type") == "assistant"]
    res = parse_file(f.path, f.project_id)
    turns = [t for t in res.turns if t.role == "assistant"]
    keys = {(r["message"]["id"], r.get("requestId")) for r in raw}
    assert len(turns) == len(keys)
    assert sum(len(t.uuids) for t in turns) == len(raw)
    raw_blocks = Counter(b["type"] for r in raw for b in r["message"]["content"])
    assert sum(len(t.tool_uses) for t in turns) == raw_blocks["tool_use"]
    assert sum(1 for t in turns if t.thinking) <= raw_blocks["thinking"]


def test_multi_block_responses_are_merged():
    res = _parse("spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl")
    merged = [t for t in res.turns if len(t.uuids) > 1]
    assert len(merged) == 105
    # a response written as thinking + text + tool_use lines keeps every block, in order
    full = [t for t in merged if t.thinking and t.text and t.tool_uses]
    assert full
    t = full[0]
    assert len(t.line_offsets) == len(t.uuids) and list(t.line_offsets) == sorted(t.line_offsets)


def test_thinking_is_never_in_text_across_corpus():
    thinking_turns = 0
    for rel in REAL_FILES:
        for t in _parse(rel).turns:
            if t.thinking:
                thinking_turns += 1
                assert t.thinking not in t.text
    assert thinking_turns >= 50


def test_compaction_records():
    res = _parse("fasthooks/sample_main_transcript.jsonl")
    boundary = next(t for t in res.turns if t.kind == "compact_boundary")
    summary = next(t for t in res.turns if t.kind == "compact_summary")
    assert boundary.role == "system" and boundary.parent_uuid is None
    assert boundary.logical_parent_uuid == "a222e3e0-a2be-4b98-a091-da5ee8b3cc7b"
    assert summary.role == "user" and summary.is_compact_summary
    assert summary.parent_uuid == boundary.uuid
    assert summary.text.startswith("This session is being continued")
    assert res.skipped_by_type == {"file-history-snapshot": 10, "system:stop_hook_summary": 5}


def test_meta_and_local_commands():
    res = _parse("spotter/tool_heavy.jsonl")
    meta = [t for t in res.turns if t.kind == "meta"]
    assert len(meta) == 1 and meta[0].is_meta and "Caveat" in meta[0].text
    local = [t for t in res.turns if t.kind == "local_command"]
    assert [t.role for t in local] == ["user", "user", "system", "system"]
    assert local[2].subtype == "local_command" and "/mcp" in local[2].text


def test_old_style_summary_records():
    rel = "episodic-memory/medium-conversation.jsonl"
    res = _parse(rel)
    (t,) = res.turns
    assert t.role == "summary" and t.kind == "summary"
    assert t.parent_uuid  # the leafUuid it summarises
    assert t.session_id == REAL_FILES[rel].session_id  # no sessionId on the record: the hint is used
    assert res.skipped_by_type == {"file-history-snapshot": 22}


def test_tool_results_keep_bash_output_and_errors():
    res = _parse("episodic-memory/large-conversation.jsonl")
    results = [r for t in res.turns for r in t.tool_results]
    assert len(results) == 152
    errors = [r for r in results if r.is_error]
    assert errors and all(r.text for r in errors)
    assert all(r.tool_use_id.startswith("toolu_") for r in results)


def test_document_block_placeholder():
    res = _parse("episodic-memory/long-conversation.jsonl")
    assert sum("[document]" in t.text for t in res.turns) == 1
    assert res.skipped_by_type["system:api_error"] == 5


# spotter subagent files and their spawning Task calls (verified in the data)
SUBAGENT_LINKS = {
    "258c7280-ae70-4798-800f-63464d01a85d": {"a881341": "toolu_01VmaERAwhb19LGUwu9GenaK"},
    "4d5611e5-241a-462a-8d15-5122611a9569": {"a2898e3": "toolu_017pLRuPHYTX5t99EnLyV53m"},
    "8463c716-a2ea-4c14-9efa-87158ebd9f20": {"a7be2f0": "toolu_017SvvKc8KLbhGMG3tXkf21Z"},
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04": {"aac57f5": "toolu_01Hf8v1Za7y4af8VUwSR4CXU"},
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46": {
        "a93ccab": "toolu_01Y64XEaRvUYinzv9rW9qZXd",
        "aa84377": "toolu_013mmyY3eDBg4Ji6oAszYt6p",
    },
}


@pytest.mark.parametrize("session", sorted(SUBAGENT_LINKS))
def test_subagents_link_to_parent_task_call(session):
    parent = _parse(f"spotter/{session}.jsonl")
    links = {link.agent_id: link for link in parent.agent_links}
    assert set(links) == set(SUBAGENT_LINKS[session])  # acompact-* side-calls have no link
    by_tool_use = {tu.id: (t, tu) for t in parent.turns for tu in t.tool_uses}
    results = {r.tool_use_id: r for t in parent.turns for r in t.tool_results}
    for agent_id, tool_use_id in SUBAGENT_LINKS[session].items():
        link = links[agent_id]
        assert link == AgentLink(agent_id, session, tool_use_id, link.parent_uuid, None)
        spawning_turn, tool_use = by_tool_use[tool_use_id]
        assert tool_use.name == "Task"
        assert link.parent_uuid in spawning_turn.uuids
        assert results[tool_use_id].agent_id == agent_id  # the Task result names the agent too

        f = REAL_FILES[f"spotter/{session}/subagents/agent-{agent_id}.jsonl"]
        assert (f.kind, f.agent_id, f.parent_session_id, f.session_id) == (
            "subagent",
            agent_id,
            session,
            session,
        )
        sub = parse_file(f.path, f.project_id, session_id_hint=f.session_id)
        assert sub.turns and sub.agent_links == []
        assert all(t.agent_id == agent_id and t.is_sidechain and t.session_id == session for t in sub.turns)
        assert sub.turns[0].parent_uuid is None


def test_subagent_without_parent_file_still_parses():
    rel = "spotter/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl"
    f = REAL_FILES[rel]
    assert f.parent_session_id == "6c2214d7-b87e-4432-8e41-22ba294ea584"
    res = parse_file(f.path, f.project_id)
    assert {t.agent_id for t in res.turns} == {"afc096d"}
    assert res.sessions == {f.parent_session_id}


def test_fasthooks_sidechain_keeps_agent_id():
    res = _parse("fasthooks/sample_agent_sidechain.jsonl")
    assert [t.agent_id for t in res.turns] == ["af1ff21", "af1ff21"]
    assert all(t.is_sidechain for t in res.turns)
    assert {t.session_id for t in res.turns} == {"c45af7b1-cb7c-4e51-93db-8cbb250a877a"}


@pytest.mark.parametrize("step", [997, 65_536, 400_000])
def test_incremental_reads_match_one_shot(step):
    """Feeding a real file in arbitrary byte slices and merging gives exactly the one-shot result."""
    f = REAL_FILES["spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"]
    data = f.path.read_bytes()
    whole = parse_chunk(data, base_offset=0, path=str(f.path), project_id=f.project_id)
    turns: list[Turn] = []
    links: list[AgentLink] = []
    offset, visible, records = 0, 0, 0
    while offset < len(data):
        visible = min(len(data), visible + step)  # the writer has appended up to here
        res = parse_chunk(data[offset:visible], base_offset=offset, path=str(f.path), project_id=f.project_id)
        assert res.quarantined == []
        turns.extend(res.turns)
        links.extend(res.agent_links)
        records += res.records
        offset = res.consumed_offset
    assert records == whole.records
    assert merge_turns(turns) == whole.turns
    assert merge_agent_links(links) == whole.agent_links


# ------------------------------------------------------------------------------------------------------
# hand-made edge cases


def _user(uid: str, text: str, parent: str | None = None, **extra) -> dict:
    rec = {
        "type": "user",
        "uuid": uid,
        "parentUuid": parent,
        "sessionId": "s1",
        "timestamp": "2026-01-02T03:04:05.678Z",
        "message": {"role": "user", "content": text},
    }
    rec.update(extra)
    return rec


def _assistant(uid: str, blocks: list[dict], mid: str = "msg_1", rid: str = "req_1") -> dict:
    return {
        "type": "assistant",
        "uuid": uid,
        "parentUuid": None,
        "sessionId": "s1",
        "requestId": rid,
        "timestamp": "2026-01-02T03:04:06.000Z",
        "message": {"id": mid, "role": "assistant", "model": "claude-x", "content": blocks},
    }


def _line(rec: dict) -> bytes:
    return json.dumps(rec).encode() + b"\n"


def _write(tmp_path: Path, *lines: bytes) -> Path:
    p = tmp_path / "s1.jsonl"
    p.write_bytes(b"".join(lines))
    return p


def test_malformed_line_in_the_middle_is_quarantined(tmp_path):
    good1, good2 = _line(_user("u1", "hello")), _line(_user("u2", "world", "u1"))
    bad = b'{"type": "user", "uuid": "u-bad", "message": {oops\n'
    p = _write(tmp_path, good1, bad, good2)
    res = parse_file(p, "proj")
    assert [t.text for t in res.turns] == ["hello", "world"]
    (q,) = res.quarantined
    assert q.byte_offset == len(good1) and q.line_no_in_chunk == 2
    assert q.reason.startswith("invalid JSON") and q.excerpt.startswith('{"type": "user"')
    assert q.path == str(p)
    assert res.turns[1].byte_start == len(good1) + len(bad)
    assert res.records == 3 and res.consumed_offset == p.stat().st_size


def test_invalid_utf8_and_other_bad_shapes(tmp_path):
    lines = [
        _line(_user("u1", "ok")),
        b"\xff\xfe not json and not utf-8\n",
        b"[1, 2, 3]\n",
        b'{"no_type": true}\n',
        _line({"type": "user", "uuid": "u3"}),  # no message
        _line({"type": "assistant", "message": {"content": []}}),  # no uuid
        _line({"type": "summary", "leafUuid": "x"}),  # no summary text
        b'{"type": "user", "uuid": "u4", "message": {"content": "' + b"x" * 500 + b"\n",
        b"\n",
        _line(_user("u5", "still parsed")),
    ]
    res = parse_chunk(b"".join(lines), base_offset=100, path="f", project_id="p")
    assert [t.uuid for t in res.turns] == ["u1", "u5"]
    reasons = [q.reason for q in res.quarantined]
    assert reasons[0].startswith("invalid JSON (and not UTF-8)")
    assert reasons[1] == "not a JSON object (list)"
    assert reasons[2] == "record without a 'type'"
    assert "message" in reasons[3] and "uuid" in reasons[4] and "summary" in reasons[5]
    assert reasons[6].startswith("invalid JSON")
    assert len(res.quarantined[6].excerpt) == 200
    offsets = [100 + sum(len(x) for x in lines[:i]) for i in range(len(lines))]
    assert [q.byte_offset for q in res.quarantined] == offsets[1:8]
    assert [q.line_no_in_chunk for q in res.quarantined] == [2, 3, 4, 5, 6, 7, 8]
    assert res.records == 9  # the blank line is not a record
    assert res.repaired_lines == 0


def test_a_latin1_byte_inside_a_string_is_replaced_not_the_line_quarantined(tmp_path):
    # "café" typed in a latin-1 terminal: the \xe9 byte is not UTF-8; the rest of the line is fine JSON
    latin1 = json.dumps(_user("u2", "deploy to the caf\u00e9 server, never to prod", "u1"), ensure_ascii=False)
    latin1 = latin1.encode("latin-1")
    assert b"caf\xe9 " in latin1
    p = _write(tmp_path, _line(_user("u1", "hello")), latin1 + b"\n", _line(_user("u3", "bye", "u2")))
    res = parse_file(p, "proj")
    assert res.quarantined == []
    assert [t.uuid for t in res.turns] == ["u1", "u2", "u3"]
    assert res.turns[1].text == "deploy to the caf\ufffd server, never to prod"
    assert res.repaired_lines == 1
    # the turn still points at its exact bytes in the file
    data = p.read_bytes()
    assert data[res.turns[1].byte_start : res.turns[1].byte_end] == latin1 + b"\n"


def test_partial_last_line_is_left_for_the_next_read(tmp_path):
    first = _line(_user("u1", "first"))
    second = _line(_user("u2", "second", "u1"))
    cut = len(second) // 2
    p = _write(tmp_path, first, second[:cut])
    res1 = parse_file(p, "proj")
    assert [t.uuid for t in res1.turns] == ["u1"]
    assert res1.consumed_offset == len(first) and res1.quarantined == []

    with open(p, "ab") as fh:  # the writer finishes the line
        fh.write(second[cut:])
    res2 = parse_file(p, "proj", start_offset=res1.consumed_offset)
    assert [t.uuid for t in res2.turns] == ["u2"]
    assert res2.turns[0].byte_start == len(first) and res2.turns[0].byte_end == len(first) + len(second)
    assert res2.consumed_offset == p.stat().st_size
    res3 = parse_file(p, "proj", start_offset=res2.consumed_offset)
    assert res3.turns == [] and res3.records == 0 and res3.consumed_offset == res2.consumed_offset


def test_final_flag_consumes_an_unterminated_last_line():
    data = _line(_user("u1", "a")) + json.dumps(_user("u2", "b")).encode()
    assert len(parse_chunk(data, base_offset=0, path="f", project_id="p").turns) == 1
    res = parse_chunk(data, base_offset=0, path="f", project_id="p", final=True)
    assert [t.uuid for t in res.turns] == ["u1", "u2"] and res.consumed_offset == len(data)


def test_resume_duplicates_are_dropped_by_uuid(tmp_path):
    a, b = _line(_user("u1", "hi")), _line(_user("u2", "again", "u1"))
    res = parse_chunk(a + b + a + b, base_offset=0, path="f", project_id="p")
    assert [t.uuid for t in res.turns] == ["u1", "u2"]
    assert res.duplicates == 2 and res.records == 4

    # across files: a resumed session replays u1/u2 under a new sessionId, then continues
    replay = [_user("u1", "hi", sessionId="s2"), _user("u2", "again", "u1", sessionId="s2")]
    new = _user("u3", "new question", "u2", sessionId="s2")
    res2 = parse_chunk(b"".join(_line(r) for r in [*replay, new]), base_offset=0, path="g", project_id="p")
    seen: set[str] = set()
    assert [t.uuid for t in dedupe_by_uuid(res.turns, seen)] == ["u1", "u2"]
    assert [t.uuid for t in dedupe_by_uuid(res2.turns, seen)] == ["u3"]
    assert seen == {"u1", "u2", "u3"}


def test_assistant_blocks_merge_within_and_across_chunks():
    lines = [
        _line(_user("u0", "question")),
        _line(_assistant("a1", [{"type": "thinking", "thinking": "secret plan", "signature": "x"}])),
        _line(_assistant("a2", [{"type": "text", "text": "Answer part"}])),
        _line(
            _assistant("a3", [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"c": "ls"}}])
        ),
        _line(
            _user(
                "u1",
                "",
                message={"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1"}]},
                toolUseResult={"stdout": "", "stderr": "boom", "interrupted": True, "isImage": False},
            )
        ),
        _line(_assistant("a4", [{"type": "tool_use", "id": "toolu_2", "name": "Read", "input": {}}])),
    ]
    data = b"".join(lines)
    whole = parse_chunk(data, base_offset=0, path="f", project_id="p")
    assert [t.kind for t in whole.turns] == ["message", "message", "tool_result"]
    merged = whole.turns[1]
    assert merged.uuid == "a1" and merged.uuids == ("a1", "a2", "a3", "a4")
    assert merged.text == "Answer part" and merged.thinking == "secret plan"
    assert [tu.input_json for tu in merged.tool_uses] == ['{"c":"ls"}', "{}"]
    offsets = [sum(len(x) for x in lines[:i]) for i in range(len(lines))]
    assert merged.line_offsets == (offsets[1], offsets[2], offsets[3], offsets[5])
    assert (merged.byte_start, merged.byte_end) == (offsets[1], len(data))
    (result,) = whole.turns[2].tool_results
    assert result.text == "boom" and result.interrupted and not result.is_error

    # the same bytes read in two increments, split between a2 and a3
    split = offsets[3]
    r1 = parse_chunk(data[:split], base_offset=0, path="f", project_id="p")
    r2 = parse_chunk(data[split:], base_offset=split, path="f", project_id="p")
    assert [t.uuids for t in r1.turns if t.role == "assistant"] == [("a1", "a2")]
    assert merge_turns(r1.turns + r2.turns) == whole.turns
    again = [t for t in r2.turns if t.message_id]  # the same block lines offered twice are not repeated
    assert merge_turns(r1.turns + r2.turns + again) == whole.turns


def test_different_request_ids_do_not_merge_but_missing_ones_do():
    t1 = _assistant("a1", [{"type": "text", "text": "one"}], rid="r1")
    t2 = _assistant("a2", [{"type": "text", "text": "two"}], rid="r2")
    t3 = _assistant("a3", [{"type": "text", "text": "three"}], rid="r1")
    t3.pop("requestId")
    res = parse_chunk(b"".join(_line(r) for r in (t1, t2, t3)), base_offset=0, path="f", project_id="p")
    assert [t.uuids for t in res.turns] == [("a1", "a3"), ("a2",)]


def test_content_blocks_images_documents_and_unknown_types():
    rec = _user(
        "u1",
        "",
        message={
            "role": "user",
            "content": [
                {"type": "text", "text": "look"},
                {"type": "image", "source": {"type": "base64", "data": "AAA"}},
                {"type": "document", "source": {}},
                {"type": "mystery"},
            ],
        },
    )
    lines = [
        _line(rec),
        _line({"type": "brand-new-type", "uuid": "z"}),
        _line({"type": "system", "subtype": "turn_duration", "uuid": "s", "durationMs": 5}),
        _line({"type": "queue-operation", "operation": "remove"}),
        _line({"type": "progress", "uuid": "p", "data": {"type": "agent_progress", "agentId": "a9"}}),
    ]
    res = parse_chunk(b"".join(lines), base_offset=0, path="f", project_id="p", session_id_hint="hint")
    (t,) = res.turns
    assert t.text == "look\n[image]\n[document]" and t.kind == "message"
    assert res.skipped_by_type == {
        "brand-new-type": 1,
        "system:turn_duration": 1,
        "queue-operation": 1,
        "progress": 1,
    }
    assert res.agent_links == [AgentLink("a9", "hint", None, None, None)]


def test_queued_user_messages_become_user_turns():
    """Messages typed while Claude works are ``queue-operation`` records; some never become ``user`` records."""
    lines = [
        _line({"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-02-13T01:56:25.575Z",
               "sessionId": "s1", "content": "you dont have access to docker here"}),
        _line({"type": "queue-operation", "operation": "enqueue", "timestamp": "2026-02-13T01:56:30.000Z",
               "sessionId": "s1", "content": "<task-notification>\n<status>completed</status>\n</task-notification>"}),
        _line({"type": "queue-operation", "operation": "remove", "timestamp": "2026-02-13T01:57:14.987Z",
               "sessionId": "s1"}),
    ]  # fmt: skip
    res = parse_chunk(b"".join(lines), base_offset=0, path="f", project_id="p")
    (t,) = res.turns
    assert (t.role, t.kind, t.subtype, t.session_id) == ("user", "message", "queued", "s1")
    assert t.text == "you dont have access to docker here" and t.timestamp.startswith("2026-02-13T01:56:25")
    assert t.uuid.startswith("queued:") and t.line_offsets == (0,)
    assert res.skipped_by_type == {"queue-operation": 2}
    again = parse_chunk(b"".join(lines), base_offset=0, path="f", project_id="p")
    assert again.turns[0].uuid == t.uuid  # stable across re-reads


def test_a_queued_draft_pulled_back_into_the_prompt_was_not_sent():
    draft, sent = "Skip the emoji in commits.", "Use an emoji in every commit message."
    ops = [("enqueue", draft, "01:00"), ("popAll", draft, "01:01"), ("enqueue", sent, "01:02"),
           ("remove", sent, "01:03")]  # fmt: skip
    lines = [_line({"type": "queue-operation", "operation": op, "timestamp": f"2026-02-13T{at}:00.000Z",
                    "sessionId": "s1", "content": text}) for op, text, at in ops]  # fmt: skip
    res = parse_chunk(b"".join(lines), base_offset=0, path="f", project_id="p")
    assert [t.text for t in res.turns] == [sent]


def test_agent_links_from_progress_and_task_result():
    task = _assistant(
        "a1", [{"type": "tool_use", "id": "toolu_T", "name": "Task", "input": {"prompt": "go"}}]
    )
    progress = {
        "type": "progress",
        "uuid": "p1",
        "parentUuid": "a1",
        "sessionId": "s1",
        "parentToolUseID": "toolu_T",
        "toolUseID": "agent_msg_1",
        "data": {"type": "agent_progress", "agentId": "abc1234"},
    }
    result = _user(
        "u1",
        "",
        message={
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "toolu_T", "content": "done"}],
        },
        toolUseResult={"status": "completed", "agentId": "abc1234", "content": []},
    )
    data = b"".join(_line(r) for r in (task, progress, result))
    res = parse_chunk(data, base_offset=0, path="f", project_id="p")
    assert res.agent_links == [AgentLink("abc1234", "s1", "toolu_T", "a1", None)]
    assert res.turns[-1].tool_results[0].agent_id == "abc1234"

    # progress seen without the Task call: parent_uuid unknown until the result (sourceToolAssistantUUID)
    late = parse_chunk(_line(progress), base_offset=0, path="f", project_id="p").agent_links
    result["sourceToolAssistantUUID"] = "a1"
    final = parse_chunk(_line(result), base_offset=0, path="f", project_id="p").agent_links
    assert late[0].parent_uuid is None
    assert merge_agent_links(late + final) == [AgentLink("abc1234", "s1", "toolu_T", "a1", None)]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("2026-02-12T15:36:39.373Z", "2026-02-12T15:36:39.373000Z"),
        ("2026-02-12T15:36:39Z", "2026-02-12T15:36:39.000000Z"),
        ("2026-02-12T17:36:39.5+02:00", "2026-02-12T15:36:39.500000Z"),
        ("2026-02-12T15:36:39", "2026-02-12T15:36:39.000000Z"),
        (1770910599373, "2026-02-12T15:36:39.373000Z"),
        (1770910599, "2026-02-12T15:36:39.000000Z"),
        ("yesterday", None),
        (None, None),
    ],
)
def test_normalize_timestamp(raw, expected):
    assert normalize_timestamp(raw) == expected

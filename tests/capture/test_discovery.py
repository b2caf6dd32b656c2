"""Discovery tests: the real transcript corpus and a hand-made ``projects/`` tree with all three layouts."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nous_assets.capture import discovery
from nous_assets.capture.discovery import SkippedFile, discover, glob_root
from resolver.project import project_id_from_cwd

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
TRANSCRIPTS = SHARED / "data" / "transcripts"


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="shared transcripts not available")
def test_real_corpus():
    res = discover(str(TRANSCRIPTS) + "/**/*.jsonl")
    assert res.root == TRANSCRIPTS
    assert res.skipped == [
        SkippedFile(TRANSCRIPTS / "fasthooks" / "sample_hook_logs.jsonl", "not a Claude Code transcript")
    ]
    assert [f.path for f in res.files] == sorted(f.path for f in res.files)
    assert len(res.files) == 27
    by_kind: dict[str, list] = {}
    for f in res.files:
        by_kind.setdefault(f.kind, []).append(f)
        assert f.project_id in {"spotter", "episodic-memory", "fasthooks"}
    assert len(by_kind["session"]) == 15 and len(by_kind["subagent"]) == 12
    assert "legacy_subagent" not in by_kind
    for f in by_kind["subagent"]:
        assert f.path.parent.name == "subagents"
        assert f.session_id == f.parent_session_id == f.path.parent.parent.name
        assert f.path.name == f"agent-{f.agent_id}.jsonl"
        first = json.loads(f.path.read_bytes().split(b"\n", 1)[0])
        assert first["sessionId"] == f.parent_session_id and first["agentId"] == f.agent_id
    for f in by_kind["session"]:
        assert f.agent_id is None and f.parent_session_id is None and f.session_id == f.path.stem


def _records(session_id: str, cwd: str, agent_id: str | None = None) -> bytes:
    lines = [{"type": "summary", "summary": "Title", "leafUuid": "x"}]  # no sessionId on this one
    rec = {
        "type": "user",
        "uuid": f"{session_id}-{agent_id}-1",
        "parentUuid": None,
        "sessionId": session_id,
        "cwd": cwd,
        "message": {"role": "user", "content": "hi"},
    }
    if agent_id:
        rec.update(agentId=agent_id, isSidechain=True)
    lines.append(rec)
    return b"".join(json.dumps(r).encode() + b"\n" for r in lines)


@pytest.fixture
def projects(tmp_path, monkeypatch):
    cwd = "/home/u/my.proj"
    proj = tmp_path / "cfg" / "projects" / project_id_from_cwd(cwd)
    (proj / "S1" / "subagents").mkdir(parents=True)
    (proj / "S1.jsonl").write_bytes(_records("S1", cwd))
    (proj / "S1" / "subagents" / "agent-a1b2c3d.jsonl").write_bytes(_records("S1", cwd, "a1b2c3d"))
    (proj / "S0.jsonl").write_bytes(_records("S0", cwd))
    (proj / "agent-0ld1d.jsonl").write_bytes(_records("S0", cwd, "0ld1d"))  # legacy layout
    (proj / "hooks.jsonl").write_bytes(b'{"ts": "2026-01-02T19:11:26Z", "event": "SessionStart"}\n')
    (proj / "empty.jsonl").write_bytes(b"\n  \n")
    (proj / "garbage.jsonl").write_bytes(b"not json at all\n")
    (proj / "notes.txt").write_text("ignored: not .jsonl")
    (proj / "dir.jsonl").mkdir()  # a folder that matches the pattern is not a file
    (tmp_path / "cfg" / "projects" / "loose.jsonl").write_bytes(_records("L1", cwd))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "cfg"))
    return tmp_path / "cfg" / "projects", proj, cwd


def test_three_layouts_and_skips(projects):
    root, proj, cwd = projects
    res = discover("${CLAUDE_CONFIG_DIR}/projects/**/*.jsonl")
    assert res.root == root
    got = {f.path.relative_to(root).as_posix(): f for f in res.files}
    pid = project_id_from_cwd(cwd)
    assert pid == "-home-u-my-proj"
    assert sorted(got) == sorted(
        [
            f"{pid}/S0.jsonl",
            f"{pid}/S1.jsonl",
            f"{pid}/S1/subagents/agent-a1b2c3d.jsonl",
            f"{pid}/agent-0ld1d.jsonl",
            "loose.jsonl",
        ]
    )
    s1 = got[f"{pid}/S1.jsonl"]
    assert (s1.project_id, s1.session_id, s1.agent_id, s1.kind, s1.parent_session_id) == (
        pid,
        "S1",
        None,
        "session",
        None,
    )
    sub = got[f"{pid}/S1/subagents/agent-a1b2c3d.jsonl"]
    assert (sub.project_id, sub.session_id, sub.agent_id, sub.kind, sub.parent_session_id) == (
        pid,
        "S1",
        "a1b2c3d",
        "subagent",
        "S1",
    )
    legacy = got[f"{pid}/agent-0ld1d.jsonl"]
    assert (legacy.project_id, legacy.session_id, legacy.agent_id, legacy.kind, legacy.parent_session_id) == (
        pid,
        "S0",  # read from the records' sessionId (the first record has none)
        "0ld1d",
        "legacy_subagent",
        "S0",
    )
    assert got["loose.jsonl"].project_id == "unknown-project"
    assert got["loose.jsonl"].session_id == "loose"

    skipped = {s.path.name: s.reason for s in res.skipped}
    assert skipped == {
        "empty.jsonl": "empty",
        "garbage.jsonl": "not a Claude Code transcript",
        "hooks.jsonl": "not a Claude Code transcript",
    }
    assert [f.path for f in res.files] == sorted(f.path for f in res.files)


def test_legacy_subagent_without_session_id_falls_back_to_stem(tmp_path):
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / "agent-x1.jsonl").write_bytes(b'{"type": "assistant", "uuid": "u", "message": {"content": []}}\n')
    (f,) = discover(str(tmp_path / "projects" / "**" / "*.jsonl")).files
    assert (f.kind, f.agent_id, f.session_id, f.parent_session_id) == (
        "legacy_subagent",
        "x1",
        "agent-x1",
        None,
    )


def test_unreadable_file_is_skipped_with_the_os_error(projects, monkeypatch):
    root, proj, _ = projects
    real_open = open

    def fake_open(path, *args, **kwargs):
        if Path(path).name == "S0.jsonl":
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kwargs)

    monkeypatch.setattr(discovery, "open", fake_open, raising=False)
    res = discover(str(root) + "/**/*.jsonl")
    reasons = {s.path.name: s.reason for s in res.skipped}
    assert reasons["S0.jsonl"] == "PermissionError: Permission denied"
    assert "S0.jsonl" not in {f.path.name for f in res.files}
    assert len(res.files) == 4


def test_glob_root():
    assert glob_root("/a/b/**/*.jsonl") == Path("/a/b")
    assert glob_root("/a/b/*/x.jsonl") == Path("/a/b")
    assert glob_root("/a/b/c.jsonl") == Path("/a/b")
    assert glob_root("/a/b?/c.jsonl") == Path("/a")


def test_no_matches(tmp_path):
    res = discover(str(tmp_path / "nothing" / "**" / "*.jsonl"))
    assert res.files == [] and res.skipped == []

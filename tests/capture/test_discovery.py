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


def _tree_with_loops(tmp_path: Path) -> Path:
    """projects/ with real sessions, a link to a project, a linked file, and the tester's two loops."""
    root = tmp_path / "cfg" / "projects"
    (root / "-home-u-a" / "S1" / "subagents").mkdir(parents=True)
    (root / "-home-u-a" / "S1.jsonl").write_bytes(_records("S1", "/home/u/a"))
    (root / "-home-u-a" / "S1" / "subagents" / "agent-x1.jsonl").write_bytes(_records("S1", "/home/u/a", "x1"))
    (root / "-home-u-b").mkdir()
    (root / "-home-u-b" / "S2.jsonl").write_bytes(_records("S2", "/home/u/b"))
    (root / "a").symlink_to(".")  # projects/a -> projects
    (root / "b").symlink_to("..")  # projects/b -> cfg, which holds projects again
    (root / "zz-link").symlink_to("-home-u-b")  # the same project under a second name
    (root / "-home-u-b" / "S1-copy.jsonl").symlink_to("../-home-u-a/S1.jsonl")  # a linked file
    return root


def test_symlink_loops_finish_with_every_file_once(tmp_path):
    """`a -> .` and `b -> ..` made glob-based discovery run forever; run it in a child with a deadline."""
    import subprocess
    import sys

    root = _tree_with_loops(tmp_path)
    code = (
        "import json, sys\n"
        "from nous_assets.capture.discovery import discover\n"
        "r = discover(sys.argv[1])\n"
        "print(json.dumps({'files': [str(f.path) for f in r.files], 'loops': [str(p) for p in r.loops],"
        " 'dups': [str(p) for p in r.duplicates], 'summary': r.summary()}))\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(root / "**" / "*.jsonl")], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    res = json.loads(out.stdout)
    assert res["files"] == [
        str(root / "-home-u-a" / "S1" / "subagents" / "agent-x1.jsonl"),
        str(root / "-home-u-a" / "S1.jsonl"),
        str(root / "-home-u-b" / "S2.jsonl"),
    ]
    assert sorted(res["loops"]) == [str(root / "a"), str(root / "b" / "projects")]
    # the linked project folder and the linked file are each read once, under their real names
    assert str(root / "zz-link") in res["dups"] and str(root / "-home-u-b" / "S1-copy.jsonl") in res["dups"]
    assert "2 symlink loop(s) not followed" in res["summary"]
    assert "symlink loop" in out.stderr  # reported as a warning, not silently


def test_walk_keeps_glob_semantics(tmp_path):
    """Same matches as glob.glob for patterns with **, *, ?, [..], literal parts and hidden names."""
    import glob as globmod

    from nous_assets.capture.discovery import walk

    root = tmp_path / "t"
    for rel in [
        "p1/a.jsonl",
        "p1/b.json",
        "p1/.hidden.jsonl",
        "p1/x/y/z.jsonl",
        "p2/subagents/agent-1.jsonl",
        "p2/sub/subagents/agent-2.jsonl",
        ".dot/c.jsonl",
        "top.jsonl",
        "q1/k.jsonl",
        "q22/k.jsonl",
    ]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("{}\n")
    patterns = [
        "**/*.jsonl",
        "*/*.jsonl",
        "**/subagents/agent-*.jsonl",
        "q?/k.jsonl",
        "q[0-9]*/k.jsonl",
        "p1/**",
        "**/.hidden.jsonl",
        "p1/a.jsonl",
        ".dot/*.jsonl",
        "**",
    ]
    for pattern in patterns:
        full = str(root / pattern)
        expected = sorted(Path(p) for p in globmod.glob(full, recursive=True) if Path(p).is_file())
        files, loops, dups = walk(full)
        assert files == expected, pattern
        assert loops == dups == []


def test_loops_are_surfaced_in_the_scan(tmp_path):
    from nous_assets.capture.scan import scan_partition
    from nous_assets.settings import load_settings
    from nous_assets.store.db import open_db

    root = _tree_with_loops(tmp_path)
    settings = load_settings(
        {"HOME": str(tmp_path), "NOUS_DATA_DIR": str(tmp_path / "data"), "NOUS_PROJECT_GLOB": str(root / "**/*.jsonl")}
    )
    conn = open_db(tmp_path / "cortex.db", create=True)
    try:
        scan = scan_partition(settings, conn, "2026-01-01")
    finally:
        conn.close()
    assert scan.symlink_loops == 2 and scan.duplicate_paths == 2

"""The reader of Claude Code's own memory agrees with the real CLI: the files (and their order) ``read_native`` says a
session loads are the ones Claude Code 2.1.330 records in its transcript's ``instructions`` attachment.

Offline, ``claude -p`` still assembles its context (CLAUDE.md chain with ``@`` imports, auto-memory) and writes the
attachment before its API call fails; the test reads the transcript it wrote. Skipped where the CLI is not installed
(``make setup`` puts it in ``.e2e/``). The API is a loopback port that refuses connections (:func:`refused_url`):
as unreachable as offline, and Claude Code, given an API other than Anthropic's, does not first fetch the
organisation's managed settings and policy limits (offline those retry for ~18 s per run).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from nous_assets.capture.native_memory import MEMORY_MAX_LINES, read_native, slug

REPO = Path(__file__).resolve().parents[2]


def claude_binary() -> Path | None:
    found = sorted((REPO / ".e2e" / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    return found[0] if found and os.access(found[0], os.X_OK) else None


@pytest.fixture
def refused_url():
    """ANTHROPIC_BASE_URL for the CLI: a loopback port bound and never listening, so connections are refused."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


def _instructions(config: Path, project: Path, env: dict[str, str]) -> list[dict]:
    """Run the real CLI in ``project`` until its transcript records the instructions it loaded; those files."""
    proc = subprocess.Popen([str(claude_binary()), "-p", "hi"], cwd=project, env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            for transcript in (config / "projects").glob("*/*.jsonl"):
                for line in transcript.read_text(errors="replace").splitlines():
                    record = json.loads(line) if line.startswith("{") else {}
                    attachment = record.get("attachment") or {}
                    if record.get("type") == "attachment" and attachment.get("type") == "instructions":
                        return attachment["files"]
            if proc.poll() is not None:
                break
            time.sleep(0.3)
    finally:
        proc.kill()
        proc.wait(10)
    pytest.fail("the CLI wrote no instructions attachment")


@pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/ (npm?)")
def test_read_native_lists_what_the_real_cli_loads(tmp_path, refused_url):
    home, config, project = tmp_path / "home", tmp_path / "home" / ".claude", tmp_path / "work" / "app"
    (project / "docs").mkdir(parents=True)
    (project / ".claude").mkdir()
    config.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True, capture_output=True)
    (project / "CLAUDE.md").write_text("# Rules\n- Use pnpm, not npm.\n@docs/rules.md\n```\n@docs/fenced.md\n```\n"
                                       "See @docs/missing.md\n")  # fmt: skip
    (project / "docs" / "rules.md").write_text("Never push to main.\n@../CLAUDE.md\n@chain1.md\n"
                                               "@../../shared.md\n")  # outside the project: needs approval
    (project.parent / "shared.md").write_text("Shared outside rule.\n")
    for i in range(1, 7):
        (project / "docs" / f"chain{i}.md").write_text(f"link {i}\n@chain{i + 1}.md\n")
    (project / "docs" / "fenced.md").write_text("must not load\n")
    (project / ".claude" / "CLAUDE.md").write_text("Second project file.\n")
    (project / "CLAUDE.local.md").write_text("My sandbox is sandbox-7.\n")
    (config / "CLAUDE.md").write_text("Answer tersely.\n@~/personal.md\n")  # the user's own: followed anywhere
    (home / "personal.md").write_text("My personal rule.\n")
    memory = config / "projects" / slug(str(project)) / "memory"
    memory.mkdir(parents=True)
    (memory / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(MEMORY_MAX_LINES + 10)))
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_API_KEY="dummy",
               ANTHROPIC_BASE_URL=refused_url, DISABLE_AUTOUPDATER="1")

    loaded = _instructions(config, project, env)
    ours = read_native(project, config_dir=config, env=env)
    assert [f["path"] for f in loaded] == [str(f.path) for f in ours.files]
    assert [f["type"] for f in loaded][-1] == "AutoMem" and ours.files[-1].kind == "auto-memory"
    for theirs, mine in zip(loaded[:-1], ours.files[:-1], strict=True):
        assert theirs["content"].strip() == mine.text.strip()
    their_index = loaded[-1]["content"]
    assert f"- note {MEMORY_MAX_LINES - 1}" in their_index and f"- note {MEMORY_MAX_LINES}\n" not in their_index
    assert ours.files[-1].text.splitlines()[-1] == f"- note {MEMORY_MAX_LINES - 1}"

    # the user approves external imports for this project (what Claude Code's dialog records): then they load
    for transcript in (config / "projects").glob("*/*.jsonl"):
        transcript.unlink()
    state_file = config / ".claude.json"
    state = json.loads(state_file.read_text()) if state_file.exists() else {}
    state.setdefault("projects", {}).setdefault(str(project), {})["hasClaudeMdExternalIncludesApproved"] = True
    state_file.write_text(json.dumps(state))
    loaded = _instructions(config, project, env)
    ours = read_native(project, config_dir=config, env=env)
    assert str(project.parent / "shared.md") in [f["path"] for f in loaded]
    assert [f["path"] for f in loaded] == [str(f.path) for f in ours.files]


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


@pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/ (npm?)")
def test_auto_memory_folder_switches_and_rules_agree_with_the_real_cli(tmp_path, refused_url):
    """A linked worktree shares its main checkout's auto-memory; .claude/rules load; autoMemoryDirectory moves the
    folder; CLAUDE_CODE_DISABLE_AUTO_MEMORY turns it off — each as the real CLI does it."""
    home, config, main = tmp_path / "home", tmp_path / "home" / ".claude", tmp_path / "repo"
    main.mkdir()
    config.mkdir(parents=True)
    (main / "README.md").write_text("x\n")
    _git(main, "init", "-q")
    _git(main, "add", ".")
    _git(main, "commit", "-qm", "init")
    worktree = tmp_path / "repo-worktrees" / "feature"
    _git(main, "worktree", "add", "-q", str(worktree))
    (worktree / ".claude" / "rules").mkdir(parents=True)
    (worktree / ".claude" / "rules" / "style.md").write_text("Prefer small functions.\n")
    shared = config / "projects" / slug(str(main)) / "memory"
    shared.mkdir(parents=True)
    (shared / "MEMORY.md").write_text("- shared by every worktree\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_", "CLAUDE_"))}
    env.update(HOME=str(home), CLAUDE_CONFIG_DIR=str(config), ANTHROPIC_API_KEY="dummy",
               ANTHROPIC_BASE_URL=refused_url, DISABLE_AUTOUPDATER="1")

    def both(run_env: dict[str, str]) -> tuple[list[str], list[str]]:
        for transcript in (config / "projects").glob("*/*.jsonl"):
            transcript.unlink()
        theirs = [f["path"] for f in _instructions(config, worktree, run_env)]
        return theirs, [str(f.path) for f in read_native(worktree, config_dir=config, env=run_env).files]

    theirs, ours = both(env)
    assert theirs == ours and theirs[-1] == str(shared / "MEMORY.md")
    assert str(worktree / ".claude" / "rules" / "style.md") in theirs

    moved = home / "notes"
    moved.mkdir()
    (moved / "MEMORY.md").write_text("- moved by autoMemoryDirectory\n")
    (config / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/notes"}))
    theirs, ours = both(env)
    assert theirs == ours and theirs[-1] == str(moved / "MEMORY.md")

    theirs, ours = both({**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert theirs == ours and not any(p.endswith("MEMORY.md") for p in theirs)

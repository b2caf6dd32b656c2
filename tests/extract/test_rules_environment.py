"""Environment (rules/environment.py): Claude Code hooks, MCP servers, git worktrees, the default branch,
files left out of commits, local files a blanket add committed."""

from __future__ import annotations

from excerpts import (
    EPISODIC_LARGE,
    EPISODIC_LONG,
    FASTHOOKS,
    SPOTTER_DOV,
    SPOTTER_FUM,
    SPOTTER_GQC,
    contents,
    excerpt,
    extract,
    stream_of,
    whole,
)

from nous_assets.extract.rules import environment

TOOL_HEAVY = "spotter/tool_heavy.jsonl"


def test_real_claude_code_hook_from_a_local_command_output():
    # fasthooks sample_main_transcript L63: PreCompact ["$CLAUDE_PROJECT_DIR"/hooks/run_hook.sh] completed successfully
    (hook,) = environment.environment(stream_of(excerpt(FASTHOOKS, 55, 70)))
    command = '"$CLAUDE_PROJECT_DIR"/hooks/run_hook.sh'
    assert hook.content == f"Claude Code hooks in this project: PreCompact runs `{command}`."
    assert hook.kind == "workflow" and hook.slot == "tool:claude-hook-PreCompact"


def test_real_mcp_server_from_a_reconnect():
    # spotter tool_heavy L22: "Reconnected to tidewave." after /mcp
    (mcp,) = environment.environment(stream_of(excerpt(TOOL_HEAVY, 15, 30)))
    assert "`tidewave` MCP server" in mcp.content and "`/mcp`" in mcp.content and mcp.slot == "tool:mcp-tidewave"
    assert contents(environment.environment(stream_of(excerpt(SPOTTER_GQC, 1, 60)))) == []  # no local commands


def test_real_branch_checked_out_in_another_worktree():
    # episodic-memory large L311: "fatal: 'main' is already used by worktree at '…/example-project'"
    (wt,) = [c for c in environment.environment(stream_of(excerpt(EPISODIC_LARGE, 300, 320))) if c.kind == "gotcha"]
    assert "`git checkout main` fails" in wt.content and "git rebase origin/main" in wt.content
    before = environment.environment(stream_of(excerpt(EPISODIC_LARGE, 280, 299)))
    assert not [c for c in before if "worktree" in c.content]


def test_real_default_branch_needs_the_other_branch_seen():
    # spotter 8463c716 L321: `git log main..HEAD` fails (unknown revision); the session later shows origin/master
    found = [c for c in environment.environment(stream_of(whole(SPOTTER_FUM))) if c.slot == "tool:git-default-branch"]
    assert [c.content.split(":")[0] for c in found] == ["The default branch is `master`, not `main`"]
    # the failure alone (L300-L330) does not say which branch is the default: nothing
    near = environment.environment(stream_of(excerpt(SPOTTER_FUM, 300, 330)))
    assert not [c for c in near if c.slot == "tool:git-default-branch"]


def test_real_file_modified_but_never_touched_is_left_out_of_commits():
    # spotter 4d5611e5 L1051/L1494: `git status` lists `.mcp.json` as modified; the session never edits or stages it
    (left,) = [c for c in environment.environment(stream_of(whole(SPOTTER_DOV))) if c.slot.endswith("#local-change")]
    assert left.content.startswith("`.mcp.json` shows up as locally modified")
    assert "leave it out of commits" in left.content
    # a session that stages everything (`git add -A`, episodic-memory long) left nothing out on purpose
    assert not [c for c in environment.environment(stream_of(whole(EPISODIC_LONG))) if "locally modified" in c.content]


def test_real_blanket_add_that_committed_local_files():
    # episodic-memory long L259: `git add -A && git commit` created .private-journal/… and .claude/settings.local.json
    (blanket,) = [c for c in environment.environment(stream_of(excerpt(EPISODIC_LONG, 250, 265)))
                  if c.slot == "tool:git-blanket-add"]  # fmt: skip
    assert "`.private-journal/`" in blanket.content and "`.claude/settings.local.json`" in blanket.content
    assert "(832 files)" in blanket.content
    # spotter 4d5611e5 commits with explicit paths: no blanket add
    assert not [c for c in environment.environment(stream_of(whole(SPOTTER_DOV))) if c.slot == "tool:git-blanket-add"]


def test_real_branch_names_are_written_as_a_placeholder_in_tool_facts():
    # spotter 8463c716: `git push` on branch spotter-fum has no upstream; the fix holds for every branch
    pushes = [r["content"] for r in extract(whole(SPOTTER_FUM)) if "--set-upstream" in r["content"]]
    assert pushes and all("<branch>" in p and "spotter-fum" not in p for p in pushes)

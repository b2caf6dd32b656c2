"""Workflow (rules/workflow.py): the task tracker, git hooks."""

from __future__ import annotations

import json

from excerpts import (
    DUET_README,
    EPISODIC_LARGE,
    FASTHOOKS,
    SPOTTER_4TE,
    SPOTTER_GQC,
    ToolUse,
    assistant,
    bash,
    contents,
    excerpt,
    result,
    stream_of,
    whole,
)

from nous_assets.extract.rules import workflow
from nous_assets.safety.guard import classify


def test_real_session_without_a_tracker_has_none():
    # fasthooks sample_main_transcript: a few commands, no commit, no task tracker
    assert workflow.task_tracker(stream_of(whole(FASTHOOKS))) == []


def test_real_task_tracker_life_cycle_with_ids_replaced():
    (t,) = workflow.task_tracker(stream_of(whole(SPOTTER_GQC)))
    for step in ("`bd ready` (find)", "`bd show <id>` (read)", "`bd update <id> --status in_progress` (claim)",
                 "`bd close <id>` (finish)"):  # fmt: skip
        assert step in t.content
    assert "spotter-gqc" not in t.content and t.slot == "tool:tasks"


def test_real_git_hooks_from_commit_and_push_output():
    # episodic-memory large-conversation L331/L334: lefthook pre-commit (biome-…) and pre-push (build, typecheck)
    hooks = {c.slot: c.content for c in workflow.git_hooks(stream_of(excerpt(EPISODIC_LARGE, 310, 345)))}
    assert "lefthook" in hooks["tool:hook-pre-commit"] and "biome-lint" in hooks["tool:hook-pre-commit"]
    assert "build" in hooks["tool:hook-pre-push"]


def test_real_hook_that_no_verify_cannot_skip():
    # spotter ae4a77f8 L1457-L1463: `git commit --no-verify` is still blocked by "Pre-commit validation failed"
    (h,) = workflow.git_hooks(stream_of(excerpt(SPOTTER_4TE, 1440, 1470)))
    assert "it runs even when git hooks are skipped" in h.content and "[DIALYZER]" in h.content
    assert not classify(h.content).findings  # said without the flag's name, which the packet guard always holds


def test_real_hook_names_the_fix_it_prints():
    # spotter ae4a77f8 L661: "[FORMAT] Code is not formatted. Run 'mix format' to fix." blocks the commit
    (h,) = workflow.git_hooks(stream_of(excerpt(SPOTTER_4TE, 640, 680)))
    assert "[FORMAT]" in h.content and "it says to run `mix format` to fix" in h.content
    assert '(the commit fails with "Pre-commit validation failed")' in h.content  # what the next session will see


def test_real_hook_read_from_the_file_the_session_wrote():
    # duet 410c9611 L18 rewrites .git/hooks/pre-commit: regenerate the README tables, then prettier, then re-stage
    (h,) = [c for c in workflow.git_hooks(stream_of(whole(DUET_README))) if c.slot == "tool:hook-pre-commit"]
    assert h.content == (
        "`git commit` runs a pre-commit hook (`.git/hooks/pre-commit`, not tracked: each clone installs it): "
        "`scripts/generate-readme.sh`, then `prettier --write README.md`, then `git add README.md`."
    )


def _write(path: str, content: str, use_id: str) -> ToolUse:
    return ToolUse(use_id, "Write", json.dumps({"file_path": path, "content": content}))


def test_hook_file_steps_without_plumbing_and_gone_when_deleted():
    husky = '#!/bin/sh\n. "$(dirname -- "$0")/_/husky.sh"\nif [ -z "$CI" ]; then\n  npx lint-staged\nfi\necho done\n'
    written = [assistant("", _write("/home/dev/proj/.husky/pre-push", husky, "w1")), result("w1", "File created")]
    (h,) = workflow.git_hooks(stream_of_turns(written))
    assert h.content == "`git push` runs a pre-push hook (`.husky/pre-push`): `npx lint-staged`."
    deleted = [assistant("", bash("rm .husky/pre-push", "b1")), result("b1", "")]
    assert workflow.git_hooks(stream_of_turns(written + deleted)) == []


def stream_of_turns(turns):
    from nous_assets.extract.base import SessionBatch

    return stream_of(SessionBatch("proj", "sess-1", "2026-02-12", turns))


def test_commands_outside_a_tracker_are_no_workflow():
    assert contents(workflow.task_tracker(stream_of(excerpt(EPISODIC_LARGE, 310, 345)))) == []

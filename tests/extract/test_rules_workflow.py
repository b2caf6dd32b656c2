"""Workflow (rules/workflow.py): the quality gate, the task tracker, git hooks."""

from __future__ import annotations

from excerpts import EPISODIC_LARGE, FASTHOOKS, SPOTTER_4TE, SPOTTER_GQC, contents, excerpt, stream_of, whole

from nous_assets.extract.rules import workflow


def test_real_quality_gate_is_ordered_and_has_no_counts():
    # spotter 258c7280: before each commit the session ran compile --warnings-as-errors, mix test, credo --strict
    (gate,) = workflow.quality_gate(stream_of(whole(SPOTTER_GQC)))
    assert gate.content.startswith(
        "Quality gate before committing in spotter: `mix compile --warnings-as-errors`, then `mix test`, "
        "then `mix credo --strict`"
    )
    assert gate.slot == "gate:spotter" and gate.applies_when == "before committing"
    assert "tests" not in gate.content.split("(")[0].lower().replace("mix test", "")


def test_real_session_without_commits_has_no_gate_or_tracker():
    # fasthooks sample_main_transcript: a few commands, no commit, no task tracker
    s = stream_of(whole(FASTHOOKS))
    assert workflow.quality_gate(s) == [] and workflow.task_tracker(s) == []


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
    assert "`--no-verify` does not skip it" in h.content and "[DIALYZER]" in h.content


def test_commands_outside_a_tracker_are_no_workflow():
    assert contents(workflow.task_tracker(stream_of(excerpt(EPISODIC_LARGE, 310, 345)))) == []

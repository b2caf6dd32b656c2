"""Sessions as one ordered timeline under their repository root (brief/timeline.py)."""

from __future__ import annotations

from brief_turns import Sess

from nous_assets.brief.timeline import build_timeline, relative


def test_sessions_are_sorted_by_start_whatever_the_order_passed():
    late, early = Sess("late", start="2026-03-02T09:00:00"), Sess("early", start="2026-03-01T09:00:00")
    late.bash("make test", "ok")
    early.bash("make lint", "ok")
    views = build_timeline([late.batch(), early.batch()])
    assert [v.id for v in views] == ["early", "late"]
    assert [s.order for v in views for s in v.steps] == sorted(s.order for v in views for s in v.steps)


def test_paths_relative_to_the_root_worktrees_included():
    root = "/home/dev/proj"
    roots = ("/home/dev/wt/feature", root)
    assert relative(f"{root}/src/a.py", root, roots) == "src/a.py"
    assert relative(f"{root}/.claude/worktrees/agent-1/src/a.py", root, roots) == "src/a.py"
    assert relative("src/b.py", f"{root}/.worktrees/x", roots) == "src/b.py"
    assert relative("/home/dev/wt/feature/lib/c.ex", "/", roots) == "lib/c.ex"
    assert relative("/tmp/scratch/a.py", root, roots) is None
    assert relative("../infra/deploy.sh", root, roots, sibling=True) == "../infra/deploy.sh"
    assert relative("../infra/deploy.sh", root, roots) is None


def test_git_worktree_add_makes_another_root_and_a_parent_cwd_wins():
    outer = Sess("outer", cwd="/home/dev/proj", start="2026-03-01T09:00:00")
    outer.bash("git worktree add -b feat/x /tmp/wt-x", "Preparing worktree")
    outer.bash("uv run pytest -q", "3 passed", cwd="/tmp/wt-x")
    inner = Sess("inner", cwd="/home/dev/proj/frontend", start="2026-03-02T09:00:00")
    inner.read("src/app.ts", "export {}")
    views = build_timeline([outer.batch(), inner.batch()])
    assert views[0].steps[1].where(views[0].steps[1].parts[0][0]) == ""  # the worktree is the repository root
    assert views[1].root == "/home/dev/proj"
    assert views[1].steps[0].rel(views[1].steps[0].call.path) == "frontend/src/app.ts"


def test_user_messages_exclude_the_opening_task_prompt():
    s = Sess()
    s.user("never push to main directly")
    (view,) = build_timeline([s.batch()])
    assert [x.text for x in view.said] == ["never push to main directly"]

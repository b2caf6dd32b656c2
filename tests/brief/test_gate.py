"""The ordered checks before commits, across sessions (brief/gate.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.gate import mine_gate
from nous_assets.brief.timeline import build_timeline


def _gate(*sessions: Sess):
    return mine_gate(build_timeline([s.batch() for s in sessions]))


def _work(s: Sess, *checks: str, commit: str = 'git commit -m "feat: x"') -> None:
    for check in checks:
        s.bash(check, "ok")
    s.bash(f"git add -A && {commit}", "[main 1a2b3c4] feat: x\n 1 file changed")


def test_real_spotter_gate_in_order():
    (gate,) = mine_gate(build_timeline(real("transcripts", "spotter")))
    assert gate.content.startswith(
        "Before committing: `mix compile --warnings-as-errors`, then `mix test`, then `mix credo --strict` "
        "(all must pass)."
    )
    assert len(gate.sessions) >= 3 and gate.status == "verified"


def test_real_wakil_gate_tests_then_ruff_as_the_tests_run_now():
    # 8dac3fcf (07-20) ran `uv run pytest -q` before four commits; from 07-23 on every session deselects the live-model
    # evals (`-m "not eval"`, ADR 0004), e2ec427b before four commits: the older form is no longer the practice
    (gate,) = mine_gate(build_timeline(real("transcripts-dev3", "wakil")))
    tests = '`uv run pytest -q -m "not eval"`'
    assert gate.content == f"Before committing: {tests}, then `uv run ruff check` (all must pass)."


def test_a_form_another_replaced_is_not_shown_a_one_off_variant_replaces_nothing():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    for _ in range(3):
        _work(a, "uv run pytest -q", "uv run ruff check")
    _work(b, "uv run pytest -q -x", "uv run ruff check")  # once: not how the project runs its tests now
    (gate,) = _gate(a, b)
    assert gate.content.startswith("Before committing: `uv run pytest -q`, then")
    _work(b, "uv run pytest -q -x", "uv run ruff check")  # again, and the older form never since
    (gate,) = _gate(a, b)
    assert gate.content.startswith("Before committing: `uv run pytest -q -x`, then")
    _work(b, "uv run pytest -q", "uv run ruff check")  # back to the older form: both in use, the usual one shown
    (gate,) = _gate(a, b)
    assert gate.content.startswith("Before committing: `uv run pytest -q`, then")


def test_gate_across_two_sessions_in_usual_order():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    _work(a, "uv run ruff check .", "uv run pytest -q")
    _work(b, "uv run ruff check src/x.py", "uv run pytest -q", "uv run mypy src")
    (gate,) = _gate(a, b)
    assert gate.content == "Before committing: `uv run ruff check .`, then `uv run pytest -q` (all must pass)."
    assert gate.sessions == ("a", "b") and gate.runs == 2


def test_one_session_and_one_commit_is_not_a_gate():
    a = Sess()
    _work(a, "make lint", "make test")
    assert _gate(a) == []


def test_a_check_failing_last_and_a_no_verify_commit_do_not_count():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    for s in (a, b):
        s.bash("make test", "ok")
        s.bash("make lint", "ok")
        s.bash("make lint", "lint.py:1: E501", fail=True)  # lint no longer passes before this commit
        s.bash('git commit -m "feat: x"', "[main 1a2b3c4] feat: x")
    assert _gate(a, b) == []
    for s in (a, b):
        _work(s, "make test", "make lint", commit='git commit --no-verify -m "wip"')
    assert _gate(a, b) == []


def test_hook_runner_named_from_commit_output():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    for s in (a, b):
        s.bash("npm run lint", "ok")
        s.bash("npm test", "ok")
        s.bash('git commit -m "fix: y"', "╭───╮\n│ 🥊 lefthook v1.12.3  hook: pre-commit │\n[main 1a2b3c4] fix: y")
    (gate,) = _gate(a, b)
    assert gate.content.endswith("`git commit` also runs a pre-commit hook (lefthook).")

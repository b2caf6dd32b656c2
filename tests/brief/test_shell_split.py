"""Cutting a Bash call into its simple commands (brief/shell_split.py)."""

from __future__ import annotations

from nous_assets.brief.shell_split import commit_message, git_verb, segments, strip_heredocs


def _words(command: str, cwd: str = "/r") -> list[tuple[str, ...]]:
    return [s.tokens for s in segments(command, cwd)]


def test_heredoc_commit_message_is_data_not_commands():
    command = 'git add a.py && git commit -m "$(cat <<\'EOF\'\nfix: don\'t "quote" && rm -rf /\n\nEOF\n)" && git push'
    words = _words(command)
    assert [w[:2] for w in words] == [("git", "add"), ("git", "commit"), ("git", "push")]
    assert "rm -rf" not in strip_heredocs(command)


def test_pipes_redirections_and_quotes():
    assert _words('uv run pytest -q -m "not eval" 2>&1 | tail -30') == [("uv", "run", "pytest", "-q", "-m", "not eval")]
    assert _words("echo 'a && b' > out.txt") == [("echo", "a && b")]


def test_cd_is_followed_and_loops_are_skipped():
    segs = segments("cd orchestrator && cargo test --quiet\nfor pr in 1 2; do\n gh pr view $pr\ndone\nmake lint", "/r")
    assert [(s.tokens[0], s.cwd) for s in segs] == [("cargo", "/r/orchestrator"), ("make", "/r/orchestrator")]


def test_masked_results_are_marked_guarded():
    segs = segments("uv run pytest || true; pnpm dev &\nif make test; then echo ok; fi; npm run lint", "/r")
    guarded = {s.tokens[0]: s.guarded for s in segs}
    assert guarded == {"uv": True, "true": True, "pnpm": True, "make": True, "echo": True, "npm": False}


def test_wrappers_and_environment():
    (seg,) = segments("MIX_ENV=test GITHUB_TOKEN=x timeout 60 rtk mix test", "/r")
    assert seg.tokens == ("mix", "test") and seg.env == ("MIX_ENV=test",)
    assert seg.assigned == ("MIX_ENV=test", "GITHUB_TOKEN=x")  # every variable it was given, as written


def test_git_verb_skips_global_flags():
    assert git_verb(("git", "-C", "/r", "commit", "-m", "x")) == "commit"
    assert git_verb(("gh", "pr", "create")) == ""


def test_commit_message_first_line():
    heredoc = "git commit -m \"$(cat <<'EOF'\nchore(release): v1.4.0\n\nbody\nEOF\n)\""
    assert commit_message(heredoc) == "chore(release): v1.4.0"
    assert commit_message("git add -A && git commit -q -m 'fix: y' && git push") == "fix: y"
    assert commit_message("git commit --amend --no-edit") == ""

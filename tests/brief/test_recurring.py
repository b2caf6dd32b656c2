"""Recurring commands across sessions (brief/recurring.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief import mine_brief
from nous_assets.brief.recurring import mine_recurring, without
from nous_assets.brief.timeline import build_timeline


def _content(*sessions: Sess, others=()) -> str | None:
    items = mine_recurring(build_timeline([s.batch() for s in sessions]), list(others))
    return items[0].content if items else None


def _sessions(*commands: tuple[str, bool]) -> list[Sess]:
    """Two sessions, each running every command (``True``: it fails in the second session)."""
    out = []
    for n in (1, 2):
        s = Sess(f"s{n}", start=f"2026-03-0{n}T10:00:00")
        for cmd, fails_later in commands:
            s.bash(cmd, "done", fail=fails_later and n == 2)
        out.append(s)
    return out


def test_a_command_two_sessions_ran_is_recurring_by_its_form():
    a, b = _sessions(("cd api && mix credo --strict", False), ("bash scripts/sync.sh --all", False))
    assert _content(a, b).endswith("again and again: `bash scripts/sync.sh`, `mix credo`.")


def test_everyday_tools_are_not_the_projects_commands():
    a, b = _sessions(("git worktree list", False), ("docker run --rm img", False), ("npx prettier --check .", False),
                     ("gh pr edit 12 --body x", False), ("bd ready", False))
    assert _content(a, b).endswith("again and again: `bd ready`.")


def test_one_session_porcelain_exploration_and_a_form_whose_last_run_failed_are_not():
    a, b = _sessions(("git commit -m x && git push", False), ("grep -rn foo .", False), ("npm run db:seed", True))
    a.bash("just deploy", "ok")
    assert _content(a, b) is None


def test_a_subcommand_run_again_in_one_session_recurs_a_bare_program_does_not():
    s = Sess("s1")
    for _ in range(2):
        s.bash("uv run wakil init --force", "ok")
        s.bash("curl -s localhost:8000/health", "ok")
        s.bash("qmd search foo", "ok")
        s.bash("mise registry", "ok")
    s.bash("npm run seed", "ok")
    assert _content(s).endswith("again and again: `uv run wakil init`.")  # not the tool it looked things up with


def test_runs_on_a_scratch_copy_or_that_only_look_up_do_not_recur_in_one_session():
    scratch = "/private/tmp/claude-501/-Users-me-wakil/09cc95ef/scratchpad"
    s = Sess("s1")
    for n in range(3):
        s.bash(f"uv run wakil init {scratch}/kb{n}", "ok")  # a throwaway knowledge base, in a temporary folder
        s.bash(f"SC={scratch}\nuv run wakil -w \"$SC/kb{n}\" qmd sync", "ok")
        s.bash(f"cd {scratch}/kb{n} && just seed", "ok")
        s.bash("qmd collection list", "ok")  # the subcommand looks something up
    s.bash("qmd collection remove kb0", "ok")
    s.bash("mix test 2>&1 | tee /tmp/test.log", "ok")  # only its output saved there: a run like any other
    s.bash("mix test > /tmp/test.log", "ok")
    assert _content(s).endswith("again and again: `mix test`.")


def test_forms_another_item_names_are_left_out():
    a, b = _sessions(("bd ready", False), ("mix test", False))
    gate = mine_brief([s.batch() for s in (a, b)])
    assert any("`mix test`" in i.content for i in gate if i.key != "cmd:more")
    assert _content(a, b, others=[i for i in gate if i.key != "cmd:more"]).endswith("again: `bd ready`.")


def test_a_script_another_item_says_its_task_runs_is_left_out():
    a, b = _sessions(("sh script/validate.sh", False), ("bd ready", False))
    assert "`sh script/validate.sh`" in _content(a, b)
    said = "Lint with `mise run lint` (it runs `./script/validate.sh`)."
    lint = type("Item", (), {"key": "cmd:lint", "content": said})()
    assert _content(a, b, others=[lint]).endswith("again and again: `bd ready`.")


def test_a_test_run_that_found_no_tests_is_no_evidence():
    cmd = "pnpm --filter api test -- --testPathPattern=vault"
    passed = [Sess(f"p{n}", start=f"2026-03-0{n}T10:00:00") for n in (1, 2)]
    empty = [Sess(f"e{n}", start=f"2026-03-0{n}T10:00:00") for n in (1, 2)]
    for s in passed:
        s.bash(cmd, "Tests:       12 passed, 12 total")
    for s in empty:
        s.bash(cmd, "No tests found, exiting with code 0")
    assert "`pnpm test`" in _content(*passed) and _content(*empty) is None


def test_a_scratch_folder_outside_the_repository_is_no_evidence():
    a, b = _sessions()
    for s in (a, b):
        s.bash("make bench", "ok", cwd="/tmp/scratch")
    assert _content(a, b) is None


def test_real_spotter_issue_tracker_commands():
    items = {i.key: i for i in mine_brief(real("transcripts", "spotter"))}
    more = items["cmd:more"]
    assert "`bd ready`" in more.content and "`mix deps.get`" in more.content
    assert more.status == "verified" and len(more.sessions) >= 2
    assert "git " not in more.content and "`mix test`" not in more.content  # porcelain; the gate names the tests


def test_variables_two_runs_set_are_shown_a_credential_only_when_read_at_run_time():
    s = Sess("s1")
    s.bash('GITHUB_TOKEN="$(gh auth token)" mise exec -- gx lint', "ok")
    s.bash("API_TOKEN=abc123 LOG=debug mise exec -- gx lint 2>&1", "ok")
    s.bash("PORT=3001 bd ready", "ok")
    s.bash("bd ready", "ok")
    assert _content(s).endswith("`bd ready`, `LOG=debug mise exec -- gx lint`.")  # the latest run's; no one-off
    s.bash('GITHUB_TOKEN="$(gh auth token)" mise exec -- gx lint', "ok")
    assert "`GITHUB_TOKEN=$(gh auth token) mise exec -- gx lint`" in _content(s)


def test_real_flutter_lint_runs_with_the_token_gh_gives():
    """Both gx lint runs took GitHub's token from ``gh auth token``: the line says how, and keeps mise's ``--``."""
    more = {i.key: i for i in mine_brief(real("transcripts-dev3", "flutter-docker-image"))}["cmd:more"]
    assert "`GITHUB_TOKEN=$(gh auth token 2>/dev/null) mise exec -- gx lint`" in more.content



def test_the_line_without_commands_named_elsewhere():
    lead = "Commands this project's sessions run again and again: "
    gx = "`GITHUB_TOKEN=$(gh auth token) mise exec -- gx lint`"
    line = f"{lead}`bd show`, `mix deps.get`, {gx}."
    assert without(line, "bd show <id>") == f"{lead}`mix deps.get`, {gx}."
    assert without(line, "mise exec -- gx lint bd show mix deps.get") is None
    assert without(line, "bash scripts/x.sh") == line
    assert without(f"{lead}`bash scripts/generate-readme.sh`.", "scripts/generate-readme.sh") is None  # the script
    assert without("Run the tests with `mix test`.", "mix test") == "Run the tests with `mix test`."


def test_a_script_the_layout_or_ci_names_is_still_listed():
    a, b = _sessions(("bash scripts/sync.sh", False),)
    layout = type("Item", (), {"key": "layout", "content": "Layout: `scripts/sync.sh`, `src/`."})()
    ci = type("Item", (), {"key": "gate:ci", "content": "CI on pull requests: `ci.yml` runs `bash scripts/sync.sh`."})()
    assert _content(a, b, others=[layout, ci]).endswith("again and again: `bash scripts/sync.sh`.")
    told = type("Item", (), {"key": "cmd:lint", "content": "Lint with `mise run lint` (it runs `scripts/sync.sh`)."})()
    assert _content(a, b, others=[told]) is None

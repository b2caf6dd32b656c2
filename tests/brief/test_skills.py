"""Skills the sessions launch again and again (brief/skills.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.skills import mine_skills
from nous_assets.brief.timeline import build_timeline


def _content(*sessions) -> str | None:
    batches = [s.batch() if isinstance(s, Sess) else s for s in sessions]
    items = mine_skills(build_timeline(batches), batches)
    return items[0].content if items else None


def _launch(s: Sess, name: str, base: str | None = None, body: str = "# x\n\nDoes a thing. More.\n") -> None:
    s.call("Skill", {"skill": name}, f"Launching skill: {name}")
    if base is not None:  # Claude Code's expansion of the skill, a meta message
        s._add("user", f"Base directory for this skill: {base}\n\n{body}", is_meta=True)


def test_real_wakil_project_skills_with_what_they_do():
    content = _content(*real("transcripts-dev3", "wakil"))
    assert content == ("Skills the sessions use: `/commit` (`.claude/skills/commit`, 3 sessions): Group the working "
                       "tree's pending changes into one or more logical change sets and create a commit for each; "
                       "`/development-docs` (`.claude/skills/development-docs`, 2 sessions).")  # fmt: skip
    # claude-api and artifact-design launched once each: one task's choice


def test_real_duet_plugin_commit_skill_typed_and_launched():
    # the user typed `/commit-commands:commit` in all three sessions; 410c9611 also launched it twice after `commit`
    # failed ("Unknown skill: commit"); `/exit`, `/usage`, `/copy`, `/clear` are Claude Code's own
    assert _content(*real("transcripts-dev3", "duet")) == (
        "Skills the sessions use: `/commit-commands:commit` (3 sessions).")


def test_one_launch_is_not_enough_and_where_a_skill_lives_is_said():
    a, b = Sess("s1", start="2026-03-01T10:00:00"), Sess("s2", start="2026-03-02T10:00:00")
    _launch(a, "once", f"{a.cwd}/.claude/skills/once")
    for s in (a, b):
        _launch(s, "mine", "/home/dev/.claude/skills/mine")
        _launch(s, "tool:prose", "/home/dev/.claude/plugins/cache/local/tool/0.1.1/skills/prose")
        _launch(s, "builtin")
    assert _content(a, b) == ("Skills the sessions use: `/builtin` (2 sessions); `/mine` (the user's "
                              "`~/.claude/skills`, 2 sessions): Does a thing; `/tool:prose` (plugin `tool`, 2 "
                              "sessions): Does a thing.")  # fmt: skip
    solo = Sess()
    _launch(solo, "once", f"{solo.cwd}/.claude/skills/once")
    assert _content(solo) is None


def test_a_typed_slash_command_counts_claude_codes_own_do_not():
    a, b = Sess("s1", start="2026-03-01T10:00:00"), Sess("s2", start="2026-03-02T10:00:00")
    for s in (a, b):
        s.user("<command-message>opsx:explore</command-message>\n<command-name>/opsx:explore</command-name>")
        s.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    assert _content(a, b) == "Skills the sessions use: `/opsx:explore` (2 sessions)."
    # what a typed command does: the preamble of the prompt Claude Code expanded it to (a meta message right after)
    b.user("<command-message>opsx:explore</command-message>\n<command-name>/opsx:explore</command-name>")
    b._add("user", "<!-- patch -->\n\nAutonomous research mode. Investigate deeply.\n", is_meta=True)
    assert _content(a, b) == "Skills the sessions use: `/opsx:explore` (2 sessions): Autonomous research mode."


def test_a_prompt_opening_on_the_output_of_its_commands_says_nothing():
    # duet (transcripts-dev3): /commit-commands:commit expands to "## Context" with `git status` and `git diff` output
    assert _content(*real("transcripts-dev3", "duet")).endswith("(3 sessions).")
    a, b = Sess("s1", start="2026-03-01T10:00:00"), Sess("s2", start="2026-03-02T10:00:00")
    for s in (a, b):
        s.user("<command-name>/ship</command-name>")
        s._add("user", "## Context\n\n- Current git status: On branch main\nChanges not staged.\n\n## Your task\n\n"
                       "Commit it.\n", is_meta=True)  # fmt: skip
    assert _content(a, b) == "Skills the sessions use: `/ship` (2 sessions)."

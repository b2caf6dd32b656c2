"""The project's own skills the sessions use again and again (brief/skills.py)."""

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


def _two() -> tuple[Sess, Sess]:
    return Sess("s1", start="2026-03-01T10:00:00"), Sess("s2", start="2026-03-02T10:00:00")


def test_real_wakil_project_skills_with_what_they_do():
    content = _content(*real("transcripts-dev3", "wakil"))
    assert content == ("Skills the sessions use: `/commit` (`.claude/skills/commit`, 3 sessions): Group the working "
                       "tree's pending changes into one or more logical change sets and create a commit for each; "
                       "`/development-docs` (`.claude/skills/development-docs`, 2 sessions).")  # fmt: skip
    # claude-api (built into Claude Code) and artifact-design were launched once each: one task's choice


def test_real_plugin_commands_the_user_types_are_not_the_projects():
    # duet: `/commit-commands:commit` typed in all three sessions; flutter: `/opsx:explore` in three; both plugins'
    # (fresh readers judged such lines trivial: "a generic commit plugin; says nothing about this repository")
    assert _content(*real("transcripts-dev3", "duet")) is None
    assert _content(*real("transcripts-dev3", "flutter-docker-image")) is None


def test_only_the_projects_own_skills_used_in_two_sessions():
    a, b = _two()
    _launch(a, "once", f"{a.cwd}/.claude/skills/once")
    for s in (a, b):
        _launch(s, "mine", "/home/dev/.claude/skills/mine")  # the user's own, not the project's
        _launch(s, "tool:prose", "/home/dev/.claude/plugins/cache/local/tool/0.1.1/skills/prose")
        _launch(s, "builtin")
        _launch(s, "ship", f"{s.cwd}/.claude/skills/ship", "## Context\n\n- status: clean\n\n## Task\n\nShip it.\n")
    # a SKILL.md opening on a "## Context" of command output says nothing of what it does
    assert _content(a, b) == "Skills the sessions use: `/ship` (`.claude/skills/ship`, 2 sessions)."
    solo = Sess()
    _launch(solo, "once", f"{solo.cwd}/.claude/skills/once")
    assert _content(solo) is None


def test_a_typed_slash_command_counts_as_a_use_claude_codes_own_do_not():
    a, b = _two()
    _launch(a, "review-pr", f"{a.cwd}/.claude/skills/review-pr")
    b.user("<command-message>review-pr</command-message>\n<command-name>/review-pr</command-name>")
    for s in (a, b):
        s.user("<command-name>/clear</command-name>\n<command-message>clear</command-message>")
    said = "Skills the sessions use: `/review-pr` (`.claude/skills/review-pr`, 2 sessions): Does a thing."
    assert _content(a, b) == said

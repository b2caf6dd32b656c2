"""Skills: the Claude Code skills the sessions invoke again and again, where each lives and what it does.

A fresh reader of wakil's packet missed "the repo's own `.claude/skills/commit` and `development-docs` skills: they
define the commit procedure and the bar for TROUBLESHOOTING entries". The transcripts say it exactly: a ``Skill``
tool call that launched (``Launching skill: commit``), followed by Claude Code's expansion of the skill (a meta
message, "Base directory for this skill: <dir>", then its ``SKILL.md``).

* a skill counts when it launched at least :data:`MIN_USES` times (a session or several): one invocation is that
  task's choice;
* where it lives: the project's own (a folder in the repository), the user's (``~/.claude/skills``), a plugin's, or
  built in (nothing said);
* what it does: the first sentence of its ``SKILL.md`` after the title, as the expansion showed it.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from nous_assets.brief.about import first_paragraph
from nous_assets.brief.item import MAX_CONTENT, BriefItem, make_item
from nous_assets.brief.manifests import description_text
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.base import SessionBatch

KEY = "skills"
MIN_USES = 2
MAX_SKILLS = 4
_BASE_RE = re.compile(r"^Base directory for this skill: (\S+)\s*\n(.*)", re.S)
_PLUGIN_RE = re.compile(r"/plugins/(?:cache/[^/]+/|marketplaces/[^/]+/plugins/)?([^/]+)/")


def mine_skills(views: Sequence[SessionView], sessions: Sequence[SessionBatch]) -> list[BriefItem]:
    """At most one item: the skills launched :data:`MIN_USES` times or more, most sessions first."""
    uses: dict[str, list[Step]] = {}
    for view in views:
        for step in view.steps:
            name = str(step.call.inp.get("skill") or "").strip().lstrip("/")
            if step.call.name == "Skill" and step.status == "ok" and name and " " not in name:
                uses.setdefault(name, []).append(step)
    chosen = sorted((n for n, s in uses.items() if len(s) >= MIN_USES),
                    key=lambda n: (-len({s.session for s in uses[n]}), -len(uses[n]), n))[:MAX_SKILLS]  # fmt: skip
    if not chosen:
        return []
    expanded = _expansions(sessions)
    told = [_describe(name, uses[name], expanded.get(name.split(":")[-1])) for name in chosen]
    bare = [_describe(name, uses[name], expanded.get(name.split(":")[-1]), what=False) for name in chosen]
    lines = ("Skills the sessions use: " + "; ".join(told[:n] + bare[n:]) + "." for n in range(len(chosen), -1, -1))
    content = next((line for line in lines if len(line) <= MAX_CONTENT), "")  # what the last ones do goes first
    proofs = [step.proof(f"launched skill `{name}`") for name in chosen for step in uses[name]]
    return [make_item("commands", KEY, content, "verified", proofs, runs=sum(len(uses[n]) for n in chosen))]


def _expansions(sessions: Sequence[SessionBatch]) -> dict[str, tuple[str, str]]:
    """Skill folder name -> (its base directory, its text), from the newest expansion Claude Code logged."""
    out: dict[str, tuple[str, str, str]] = {}
    for batch in sessions:
        for turn in batch.turns:
            found = _BASE_RE.match(turn.text or "") if turn.is_meta else None
            if found:
                base = found[1].rstrip("/")
                stamp = turn.timestamp or ""
                name = posixpath.basename(base)
                if name not in out or stamp >= out[name][0]:
                    out[name] = (stamp, base, found[2])
    return {name: (base, text) for name, (_, base, text) in out.items()}


def _describe(name: str, steps: list[Step], expansion: tuple[str, str] | None, *, what: bool = True) -> str:
    sessions = len({s.session for s in steps})
    count = f"{sessions} sessions" if sessions > 1 else f"{len(steps)} times in one session"
    if expansion is None:
        return f"`/{name}` ({count})"
    base, text = expansion
    does = description_text(first_paragraph(text)) if what else ""
    where = _where(base, steps[-1])
    said = ", ".join(p for p in (where, count) if p)
    return f"`/{name}` ({said})" + (f": {does}" if does else "")


def _where(base: str, step: Step) -> str:
    rel = step.rel(base)
    if rel:
        return f"`{rel}`"
    if "/.claude/skills/" in base and "/plugins/" not in base:
        return "the user's `~/.claude/skills`"
    plugin = _PLUGIN_RE.search(base)
    return f"plugin `{plugin[1]}`" if plugin else ""

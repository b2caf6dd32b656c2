"""Skills: the project's own Claude Code skills the sessions use again and again, where each lives and what it does.

A fresh reader of wakil's packet missed "the repo's own `.claude/skills/commit` and `development-docs` skills: they
define the commit procedure and the bar for TROUBLESHOOTING entries". The transcripts say it exactly: a ``Skill``
tool call that launched (``Launching skill: commit``), followed by Claude Code's expansion of the skill (a meta
message, "Base directory for this skill: <dir>", then its ``SKILL.md``); or the user typing it as a slash command
(``<command-name>/commit</command-name>``), which Claude Code's own commands (:data:`BUILT_IN`) are not.

* a skill counts when :data:`MIN_SESSIONS` sessions or more used it: one session's use is that task's choice;
* and only the project's own, whose expansion showed it in a folder of the repository (``.claude/skills/commit``):
  fresh readers judged every other one trivial, a plugin's commit or research command the user types ("a generic
  commit plugin; says nothing about this repository") as much as a plugin skill's own description;
* what it does: the first sentence of its ``SKILL.md`` after the title.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from nous_assets.brief.about import first_paragraph
from nous_assets.brief.item import MAX_CONTENT, BriefItem, Proof, make_item
from nous_assets.brief.manifests import description_text
from nous_assets.brief.timeline import SessionView, relative
from nous_assets.extract.base import SessionBatch

KEY = "skills"
MIN_SESSIONS = 2
MAX_SKILLS = 4
BUILT_IN = frozenset(
    "add-dir agents bashes bug clear compact config context copy cost doctor exit export fast feedback files help "
    "hooks ide init insights install-github-app login logout mcp memory model output-style permissions plan plugin "
    "plugins pr-comments pr_comments privacy-settings release-notes remove-dir rename resume review rewind sandbox "
    "security-review stats status statusline tasks terminal-setup theme todos upgrade usage vim".split()
)
"""Claude Code's own slash commands: how the user drives the tool, not a skill of the project's."""
_BASE_RE = re.compile(r"^Base directory for this skill: (\S+)\s*\n(.*)", re.S)
_TYPED_RE = re.compile(r"<command-name>/([\w:.-]+)</command-name>")


def mine_skills(views: Sequence[SessionView], sessions: Sequence[SessionBatch]) -> list[BriefItem]:
    """At most one item: the project's skills :data:`MIN_SESSIONS` sessions or more used, most sessions first."""
    uses = _uses(views, sessions)
    homes = _homes(sessions, [view.root for view in views if view.root])
    chosen = sorted((n for n, p in uses.items() if n in homes and len({q.session for q in p}) >= MIN_SESSIONS),
                    key=lambda n: (-len({q.session for q in uses[n]}), n))[:MAX_SKILLS]  # fmt: skip
    if not chosen:
        return []
    told = [_describe(name, uses[name], homes[name]) for name in chosen]
    bare = [_describe(name, uses[name], homes[name], what=False) for name in chosen]
    lines = ["Skills the sessions use: " + "; ".join(told[:n] + bare[n:]) + "." for n in range(len(chosen), -1, -1)]
    content = next((line for line in lines if len(line) <= MAX_CONTENT), lines[-1])  # what the last ones do goes first
    proofs = [proof for name in chosen for proof in uses[name]]
    return [make_item("commands", KEY, content, "verified", proofs, runs=sum(len(uses[n]) for n in chosen))]


def _uses(views: Sequence[SessionView], sessions: Sequence[SessionBatch]) -> dict[str, list[Proof]]:
    """Skill name -> a proof of each use: a ``Skill`` call that launched, or the user typing it."""
    uses: dict[str, list[Proof]] = {}
    for view in views:
        for step in view.steps:
            name = str(step.call.inp.get("skill") or "").strip().lstrip("/")
            if step.call.name == "Skill" and step.status == "ok" and name and " " not in name:
                uses.setdefault(name, []).append(step.proof(f"launched skill `{name}`"))
    for batch in sessions:
        for turn in batch.turns:
            typed = _TYPED_RE.search(turn.text or "") if turn.role == "user" else None
            if typed and typed[1] not in BUILT_IN:
                order = (turn.timestamp or batch.started_at or "", turn.session_id, 0, -1)
                source = (turn.source_path, turn.line_offsets, turn.uuids)
                proof = Proof(turn.session_id, turn.uuid, order, f"typed `/{typed[1]}`", source)
                uses.setdefault(typed[1], []).append(proof)
    return uses


def _homes(sessions: Sequence[SessionBatch], roots: Sequence[str]) -> dict[str, tuple[str, str]]:
    """Skill name -> (its folder in the repository, its ``SKILL.md``), from the newest expansion Claude Code logged of
    a skill that lives in the repository."""
    out: dict[str, tuple[str, str, str]] = {}
    for batch in sessions:
        for turn in batch.turns:
            found = _BASE_RE.match(turn.text or "") if turn.is_meta else None
            rel = next((r for r in (relative(found[1], "/", [root]) for root in roots) if r), None) if found else None
            name = posixpath.basename(found[1].rstrip("/")) if found else ""
            if rel and (name not in out or (turn.timestamp or "") >= out[name][0]):
                out[name] = (turn.timestamp or "", rel, found[2])
    return {name: (rel, text) for name, (_, rel, text) in out.items()}


def _describe(name: str, proofs: list[Proof], home: tuple[str, str], *, what: bool = True) -> str:
    rel, text = home
    does = description_text(first_paragraph(text, preamble=True)) if what else ""
    return f"`/{name}` (`{rel}`, {len({p.session for p in proofs})} sessions)" + (f": {does}" if does else "")

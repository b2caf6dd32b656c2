"""Skills: the Claude Code skills the sessions invoke again and again, where each lives and what it does.

A fresh reader of wakil's packet missed "the repo's own `.claude/skills/commit` and `development-docs` skills: they
define the commit procedure and the bar for TROUBLESHOOTING entries". The transcripts say it exactly: a ``Skill``
tool call that launched (``Launching skill: commit``), followed by Claude Code's expansion of the skill (a meta
message, "Base directory for this skill: <dir>", then its ``SKILL.md``); or the user typing it as a slash command
(``<command-name>/commit-commands:commit</command-name>``), which Claude Code's own commands (:data:`BUILT_IN`) are
not.

* a skill counts when :data:`MIN_SESSIONS` sessions or more used it: one session's use is that task's choice;
* where it lives: the project's own (a folder in the repository), the user's (``~/.claude/skills``), a plugin's, or
  built in (nothing said);
* what it does: the first sentence of its ``SKILL.md`` after the title, as the expansion showed it.
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
_PLUGIN_RE = re.compile(r"/plugins/(?:cache/[^/]+/|marketplaces/[^/]+/plugins/)?([^/]+)/")


def mine_skills(views: Sequence[SessionView], sessions: Sequence[SessionBatch]) -> list[BriefItem]:
    """At most one item: the skills :data:`MIN_SESSIONS` sessions or more used, most sessions first."""
    uses = _uses(views, sessions)
    chosen = sorted((n for n, p in uses.items() if len({q.session for q in p}) >= MIN_SESSIONS),
                    key=lambda n: (-len({q.session for q in uses[n]}), n))[:MAX_SKILLS]  # fmt: skip
    if not chosen:
        return []
    roots = {view.id: view.root for view in views}
    expanded = _expansions(sessions)
    told = [_describe(name, uses[name], expanded.get(name.split(":")[-1]), roots) for name in chosen]
    bare = [_describe(name, uses[name], expanded.get(name.split(":")[-1]), roots, what=False) for name in chosen]
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


def _expansions(sessions: Sequence[SessionBatch]) -> dict[str, tuple[str, str]]:
    """Skill name (its folder's, or the typed command's last part) -> (its base directory, its text), from the newest
    expansion Claude Code logged: a meta message after the launch or the typed command."""
    out: dict[str, tuple[str, str, str]] = {}
    for batch in sessions:
        typed = ""
        for turn in batch.turns:
            found = _BASE_RE.match(turn.text or "") if turn.is_meta else None
            base, text = (found[1].rstrip("/"), found[2]) if found else ("", turn.text or "")
            name = posixpath.basename(base) if found else typed
            if name and turn.is_meta and (name not in out or (turn.timestamp or "") >= out[name][0]):
                out[name] = (turn.timestamp or "", base, text)
            command = _TYPED_RE.search(turn.text or "") if turn.role == "user" else None
            typed = command[1].split(":")[-1] if command else ""  # the message right after a typed command
    return {name: (base, text) for name, (_, base, text) in out.items()}


def _describe(
    name: str, proofs: list[Proof], expansion: tuple[str, str] | None, roots: dict[str, str], *, what: bool = True
) -> str:
    count = f"{len({p.session for p in proofs})} sessions"
    if expansion is None:
        return f"`/{name}` ({count})"
    base, text = expansion
    does = description_text(first_paragraph(text, preamble=True)) if what else ""
    where = _where(base, [roots.get(p.session, "") for p in proofs])
    said = ", ".join(p for p in (where, count) if p)
    return f"`/{name}` ({said})" + (f": {does}" if does else "")


def _where(base: str, roots: list[str]) -> str:
    rel = next((r for r in (relative(base, "/", [root]) for root in roots if root) if r), None)
    if rel:
        return f"`{rel}`"
    if "/.claude/skills/" in base and "/plugins/" not in base:
        return "the user's `~/.claude/skills`"
    plugin = _PLUGIN_RE.search(base)
    return f"plugin `{plugin[1]}`" if plugin else ""

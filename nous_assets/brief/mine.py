"""The entry point: :func:`mine_brief` turns every session of one project into its brief items."""

from __future__ import annotations

from collections.abc import Sequence

from nous_assets.brief.ci import mine_ci
from nous_assets.brief.commands import mine_commands
from nous_assets.brief.gate import mine_gate
from nous_assets.brief.item import SECTIONS, BriefItem
from nous_assets.brief.layout import mine_layout
from nous_assets.brief.manifests import read_manifests
from nous_assets.brief.procedures import mine_procedures
from nous_assets.brief.recurring import mine_recurring
from nous_assets.brief.rules import mine_rules
from nous_assets.brief.skills import mine_skills
from nous_assets.brief.timeline import build_timeline
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules.text import BACKTICKED_RE


def mine_brief(sessions: Sequence[SessionBatch]) -> list[BriefItem]:
    """The project brief of one repository: its commands, gate, procedures, rules and layout.

    ``sessions`` are every session of the project (main session and subagents in each batch, in file
    order), in any order. Pure and deterministic: the same sessions give the same items, in section order
    (commands, gate, procedures, rules, layout), then key.
    """
    views = build_timeline(sessions)
    book = read_manifests(views)
    gate = mine_gate(views)
    items = [
        *_not_in(mine_commands(views, book), gate),
        *gate,
        *mine_ci(views),
        *mine_procedures(views),
        *mine_rules(views),
        *mine_layout(views, book),
        *mine_skills(views, sessions),
    ]
    items += mine_recurring(views, items)
    return sorted(items, key=lambda i: (SECTIONS.index(i.section), i.key))


CHECK_ONLY = frozenset({"--check", "--check-formatted", "--dry-run", "--diff", "--list", "--noEmit", "--no-emit",
                        "--verify"})  # fmt: skip
"""Flags that turn a command into a check of what it would do: ``mix format --check-formatted`` in the gate does not
say how to format."""


def _not_in(commands: list[BriefItem], gate: list[BriefItem]) -> list[BriefItem]:
    """The command items the gate does not already name: "Before committing: `uv run pytest -q`, then …" says how
    to run the tests; a second line saying it again is one line too many (a fresh reader marked it trivial). Nor
    does a stricter run of the same command: "Build with `mix compile`" beside a gate that runs `mix compile
    --warnings-as-errors` (a fresh reader marked it trivial too), unless the gate's run only checks."""
    named = {span for item in gate for span in BACKTICKED_RE.findall(item.content)}
    return [c for c in commands if not any(_says(g, span) for span in BACKTICKED_RE.findall(c.content)
                                           for g in named)]  # fmt: skip


def _says(gate_span: str, span: str) -> bool:
    """Whether the gate's command ``gate_span`` is ``span``, or ``span`` with more flags that do not make it a
    check (``mix compile --warnings-as-errors`` says ``mix compile``)."""
    if gate_span == span:
        return True
    extra = gate_span.removeprefix(span + " ").split() if gate_span.startswith(span + " ") else []
    return bool(extra) and extra[0].startswith("-") and not CHECK_ONLY & set(extra)

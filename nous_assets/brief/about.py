"""What the project is, in its own words: the sentence a senior engineer new to a repository reads first.

Fresh readers of packets asked for it in most projects ("what the repo is: a Claude Code plugin written in
Markdown"). It is taken only from what the project says of itself, never from a session's prose:

* a root manifest's ``description`` (``package.json``, ``pyproject.toml``, ``Cargo.toml``, a Claude Code plugin's
  ``.claude-plugin/plugin.json``: :mod:`~nous_assets.brief.manifests`);
* else the first paragraph of the root ``README.md``, from a Read that started at its top or a Write of the whole
  file (headings, badges, quotes and code skipped; a paragraph the read cut off says nothing);
* else a component's manifest, for its folder (``orchestrator/Cargo.toml``: "Local-first Agentic AI Runtime").

A template's placeholder ("TODO: Add description", "Add your description here") says nothing. The newest sighting
wins, and a file since removed or moved away no longer speaks.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from nous_assets.brief.item import Proof
from nous_assets.brief.manifests import DESCRIPTION, Manifests, description_text
from nous_assets.brief.timeline import SessionView, Step, removed
from nous_assets.extract.rules.text import unnumbered

_README_RE = re.compile(r"^readme(?:\.md|\.markdown|\.rst|\.txt)?$", re.I)
_SKIPPED_LINE_RE = re.compile(r"^(?:#|\[!\[|!\[|<|>|---|===|\*\*\*|\|)")
_ROOT_FOLDERS = ("", ".claude-plugin")


def describe(views: Sequence[SessionView], book: Manifests, gone: set[str]) -> tuple[str, Proof | None]:
    """("About: … (`file`)." or "", its proof)."""
    said = [(f, p) for f, p in book.facts.values() if f.topic == DESCRIPTION and not removed(f.file, gone)]
    root = [(f, p) for f, p in said if posixpath.dirname(f.file) in _ROOT_FOLDERS]
    if root:
        fact, proof = max(root, key=lambda fp: fp[1].order)
        return f"About: {fact.text} (`{fact.file}`).", proof
    readme = _readme(views, gone)
    if readme:
        return readme
    if said:
        fact, proof = max(said, key=lambda fp: fp[1].order)
        return f"About `{posixpath.dirname(fact.file)}/`: {fact.text} (`{fact.file}`).", proof
    return "", None


def _readme(views: Sequence[SessionView], gone: set[str]) -> tuple[str, Proof] | None:
    """The root README's first paragraph, from its newest sighting from the top."""
    found: tuple[Step, str, str] | None = None
    for view in views:
        for step in view.steps:
            rel, text = _whole_readme(step)
            if rel and not removed(rel, gone) and (found is None or step.order > found[0].order):
                found = (step, rel, text)
    if found is None:
        return None
    step, rel, text = found
    whole = step.call.name == "Write" or not step.call.inp.get("limit")
    first = description_text(first_paragraph(text, whole=whole))
    return (f"About: {first} (`{rel}`).", step.proof(f"read `{rel}`")) if first else None


def _whole_readme(step: Step) -> tuple[str, str]:
    call = step.call
    if call.name not in ("Read", "Write") or not call.path or step.status != "ok":
        return "", ""
    rel = step.rel(call.path)
    if not rel or "/" in rel or not _README_RE.match(rel):
        return "", ""
    if call.name == "Write":
        content = call.inp.get("content")
        return (rel, content) if isinstance(content, str) else ("", "")
    return (rel, unnumbered(step.output)) if int(call.inp.get("offset") or 1) <= 1 else ("", "")


def first_paragraph(text: str, *, whole: bool = True, preamble: bool = False) -> str:
    """The first paragraph of prose of a README: after its title, badges, quotes and code; "" when a text that is not
    the ``whole`` file (a read with a limit) ends before the paragraph does, or, for the ``preamble`` only, when a
    section (``## …``) starts first (a prompt's "## Context" holds the output of commands run for it)."""
    lines: list[str] = []
    fenced = listed = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fenced = not fenced
            if lines:
                return " ".join(lines)
            continue
        if fenced:
            continue
        if not stripped or _SKIPPED_LINE_RE.match(stripped):
            if lines:
                return " ".join(lines)
            if preamble and stripped.startswith("##"):
                return ""
            listed = False
            continue
        if not lines and (listed or re.match(r"^(?:[-*+]\s|\d+[.)]\s)", stripped)):
            listed = True  # a list before any prose, items and their continuations: a table of contents, or context
            continue
        lines.append(stripped)
    return " ".join(lines) if whole else ""

"""CI: the checks a project's CI workflows run on pushes and pull requests (key ``gate:ci``).

The gate (:mod:`.gate`) is what the sessions ran before their commits; what a pull request must pass is written in
the workflow files (``.github/workflows/*.yml``) a session read. Their ``run:`` steps are read line by line (a
``run: |`` block too), each simple command classified as the brief classifies the sessions' own commands
(:func:`~nous_assets.brief.runners.classify`: build, test, lint, format, type-check, check) and shown in its
canonical form, with the folder its step's ``working-directory`` names. Only workflows that run on pull requests
count (a deploy on push, a release or a manual dispatch is a procedure, not the gate a change must pass), each as
the sessions last saw it: the latest whole Read, with the Writes and Edits after it replayed (a file edited in a way
the text read cannot replay is left out). Fresh readers
asked for this line (wakil: ``uvx ty check .``, ``uv run ruff check .``, ``uv run pytest -q``; ironclaw: ``cargo
clippy -- -D warnings``, ``cargo fmt --all -- --check``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nous_assets.brief.item import BriefItem, make_item
from nous_assets.brief.runners import CHECK_PURPOSES, classify
from nous_assets.brief.shell_split import segments
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules.session import EDIT_TOOLS
from nous_assets.extract.rules.text import unnumbered

KEY = "gate:ci"
MAX_CHECKS = 6
MAX_LINE = 260  # room for the workflows' parts within the brief's line
TRIGGERS = frozenset({"pull_request", "pull_request_target", "merge_group"})
_WORKFLOW_RE = re.compile(r"^\.github/workflows/[^/]+\.ya?ml$")
_ON_RE = re.compile(r"^[\"']?on[\"']?:\s*(.*)$")
_STEP_RE = re.compile(r"^(\s*)-\s+[\w-]+:")
_RUN_RE = re.compile(r"^(\s*)(?:-\s+)?run:\s*(.*)$")
_WORKDIR_RE = re.compile(r"^\s*(?:-\s+)?working-directory:\s*[\"']?([^\"'#\s]+)")


def mine_ci(views: Sequence[SessionView]) -> list[BriefItem]:
    """At most one item: the checks of the pull-request workflows the sessions read."""
    latest: dict[str, tuple[str, Step]] = {}
    for step in sorted((s for v in views for s in v.steps), key=lambda s: s.order):
        call = step.call
        rel = step.rel(call.path) if call.path and step.status == "ok" else None
        if rel is None or not _WORKFLOW_RE.match(rel):
            continue
        if call.name == "Read":
            if not (call.inp.get("offset") or call.inp.get("limit")):  # a part of the file says nothing of the rest
                latest[rel] = (unnumbered(step.output), step)
        elif call.name in EDIT_TOOLS:
            text = _edited(latest[rel][0] if rel in latest else None, call.inp)
            if text is None:
                latest.pop(rel, None)
            else:
                latest[rel] = (text, step)
    found = sorted(((rel, checks, step) for rel, (text, step) in latest.items()
                    if _on_pull_requests(text) and (checks := workflow_checks(text))),
                   key=lambda f: (-len(f[1]), f[0]))  # fmt: skip
    parts: list[str] = []
    shown = []
    for rel, checks, step in found:  # the workflow with the most checks first, others while the line has room
        part = f"`{rel}` runs " + _shown(checks[:MAX_CHECKS])
        if not parts or len("; ".join([*parts, part])) <= MAX_LINE:
            parts.append(part)
            shown.append((rel, checks, step))
    if not shown:
        return []
    content = "CI on pull requests: " + "; ".join(parts) + "."
    proofs = [step.proof(f"read `{rel}`") for rel, _, step in shown]
    return [make_item("gate", KEY, content, "observed", proofs, runs=len(shown), paths=[r for r, _, _ in shown])]


def _edited(text: str | None, inp: dict) -> str | None:
    """The file after a Write (its content) or an Edit of ``text`` (its ``old_string`` replaced); None when the edit
    cannot be replayed on what was read (the text it changes was not in it)."""
    if isinstance(inp.get("content"), str):
        return inp["content"]
    old, new = inp.get("old_string"), inp.get("new_string")
    if text is None or not isinstance(old, str) or not isinstance(new, str) or not old or old not in text:
        return None
    return text.replace(old, new) if inp.get("replace_all") else text.replace(old, new, 1)


def _on_pull_requests(text: str) -> bool:
    """Whether the workflow's ``on:`` names a pull-request trigger (inline, a list or a mapping's keys)."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = _ON_RE.match(line)
        if not m:
            continue
        named = set(re.findall(r"[\w-]+", m.group(1)))
        for below in lines[i + 1 :]:
            if below.strip() and not below[0].isspace():
                break
            key = re.match(r"^\s+-?\s*([\w-]+)", below)
            named.update([key.group(1)] if key else [])
        return bool(named & TRIGGERS)
    return False


def workflow_checks(text: str) -> list[tuple[str, str]]:
    """(canonical form, folder) of each check the ``run:`` steps of one workflow run, in order, each once
    (``("cargo clippy -- -D warnings", "orchestrator")``; the folder is '' at the root)."""
    out: list[tuple[str, str]] = []
    for step in _steps(text.splitlines()):
        workdir = next((m.group(1) for line in step if (m := _WORKDIR_RE.match(line))), "").strip("./")
        for command in _run_lines(step):
            for seg in segments(command, "/"):
                use = classify(seg)
                if use is not None and use.purpose in CHECK_PURPOSES and "$" not in use.form:
                    out.append((use.form, workdir))
    return list(dict.fromkeys(out))


def _shown(checks: list[tuple[str, str]]) -> str:
    """``a``, ``b`` (in ``dir/``): the folder said once after the checks run there."""
    parts = []
    for folder in dict.fromkeys(f for _, f in checks):
        forms = ", ".join(f"`{form}`" for form, f in checks if f == folder)
        parts.append(forms + (f" (in `{folder}/`)" if folder else ""))
    return ", ".join(parts)


def _steps(lines: list[str]) -> list[list[str]]:
    """The workflow's lines cut at each list item that opens a mapping (``- name:``, ``- run:``, ``- uses:``)."""
    steps: list[list[str]] = [[]]
    for line in lines:
        if _STEP_RE.match(line):
            steps.append([])
        steps[-1].append(line)
    return steps


def _run_lines(step: list[str]) -> list[str]:
    """The shell lines of a step's ``run:`` (one line, or the block under ``run: |``, continuations joined)."""
    for i, line in enumerate(step):
        m = _RUN_RE.match(line)
        if not m:
            continue
        indent, value = len(m.group(1)), m.group(2).strip()
        if value and value[0] not in "|>":
            return [value.strip("\"'")]
        block = []
        for below in step[i + 1 :]:
            if below.strip() and len(below) - len(below.lstrip()) <= indent:
                break
            block.append(below.strip())
        return [x for x in "\n".join(block).replace("\\\n", " ").splitlines() if x and not x.startswith("#")]
    return []

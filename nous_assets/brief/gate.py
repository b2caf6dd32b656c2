"""Gate: the ordered checks that pass before commits and pushes, across sessions (key ``gate``).

The one-session rule in :mod:`nous_assets.extract.rules.workflow` sees one session's commits; this one
reads every session of the project. Each stream is walked in order: the checks (build, test, lint, format,
type-check, check) that passed since the previous commit form the *window* of the next successful
``git commit`` (or of a ``git push`` that follows checks). A check whose last run in the window failed
did not pass; a test run on one file is not the gate; a ``--no-verify`` commit ends a window without
counting it.

The gate is the checks present in at least half of the windows, in their usual order (mean relative
position), when there are at least two of them and the windows holding all of them come from two sessions
or number three. Each check is shown in the form it usually took, unless the sessions stopped using that form once
another took its place (:func:`_current`).
A pre-commit/pre-push hook seen in ``git commit``/``git push`` output (lefthook, husky, lint-staged,
pre-commit) is named too.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from nous_assets.brief.commands import Run, runs_of
from nous_assets.brief.item import BriefItem, make_item
from nous_assets.brief.runners import CHECK_PURPOSES
from nous_assets.brief.shell_split import Segment, commit_message, git_verb
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules import filters
from nous_assets.extract.rules.text import ANSI_RE

_HOOKS = (  # (runner, a substring its output always has — a cheap test before the regex —, the regex)
    ("lefthook", "lefthook", re.compile(r"\blefthook\b", re.I)),
    ("husky", "husky", re.compile(r"\bhusky\b", re.I)),
    ("lint-staged", "staged", re.compile(r"\blint-staged\b|\[STARTED\] Running tasks for staged files", re.I)),
    ("pre-commit", "....", re.compile(r"^\S[^\n]*?\.{4,}(?:Passed|Failed|Skipped)$", re.M)),
    ("", "pre-", re.compile(r"pre-commit (?:validation|hook|check)|pre-push (?:hook|check)", re.I)),  # a custom script
)


MIN_REPLACING_RUNS = 2  # a form that replaced another ran in two windows at least: not a one-off variant


@dataclass
class Window:
    """The checks that passed between two commits, and the commit (or push) that closed them."""

    closer: Step
    checks: list[Run] = field(default_factory=list)

    def families(self) -> list[tuple[str, str]]:
        return [(r.where, r.use.family) for r in self.checks]


def mine_gate(views: Sequence[SessionView]) -> list[BriefItem]:
    windows = [w for view in views for w in _windows(view)]
    hooks = _hooks(views)
    gate, full = _supported(_gate(windows), windows)
    if len(gate) < 2:
        return []
    folders = {where for where, _ in gate}
    shared = folders.pop() if len(folders) == 1 else None
    shown = [_shown(key, windows, folder=shared is None) for key in gate]
    lead = f"Before committing (in `{shared}/`): " if shared else "Before committing: "
    content = lead + ", then ".join(shown) + " (all must pass)."
    for verb in ("commit", "push"):
        names = sorted({name for name, step in hooks if _verb(step) == verb})
        if names:
            kind = "pre-commit" if verb == "commit" else "pre-push"
            runners = ", ".join(n for n in names if n)
            content += f" `git {verb}` also runs a {kind} hook" + (f" ({runners})." if runners else ".")
    proofs = [r.proof() for w in full for r in w.checks if (r.where, r.use.family) in gate]
    proofs += [w.closer.proof(f"then `{_first_line(w.closer)}`") for w in full]
    proofs += [step.proof(f"`{_first_line(step)}` ran a {name or 'git'} hook") for name, step in hooks]
    return [make_item("gate", "gate", content, "verified", proofs, runs=len(full))]


def _windows(view: SessionView) -> list[Window]:
    """The windows of each stream of one session."""
    out: list[Window] = []
    streams: dict[int, list[Step]] = {}
    for step in view.steps:
        streams.setdefault(step.order[2], []).append(step)
    for steps in streams.values():
        current: dict[tuple[str, str], Run] = {}
        for step in steps:
            runs = {id(r.seg): r for r in runs_of(step)}
            for seg, _ in step.parts:
                if id(seg) in runs:
                    _add(current, runs[id(seg)])
                    continue
                kind = _git(step, seg)
                if kind == "commit" or (kind == "push" and current):
                    passed = [r for r in current.values() if r.ok]
                    if passed and not filters.bypass(step.command):
                        out.append(Window(step, sorted(passed, key=lambda r: r.step.order)))
                    current = {}
    return out


def _add(current: dict[tuple[str, str], Run], run: Run) -> None:
    """Keep a check's first pass; a later failure replaces it (it no longer passes), a later pass then too."""
    if run.use.purpose not in CHECK_PURPOSES or (run.use.purpose == "test" and run.use.filtered):
        return
    key = (run.where, run.use.family)
    have = current.get(key)
    if have is None or not have.ok or not run.ok:
        current[key] = run


def _git(step: Step, seg: Segment) -> str:
    """``commit`` / ``push`` when this command of a successful step is one."""
    verb = git_verb(seg.tokens)
    return verb if verb in ("commit", "push") and step.status == "ok" else ""


def _gate(windows: list[Window]) -> list[tuple[str, str]]:
    """The checks present in at least half of the windows, in their usual order."""
    if not windows:
        return []
    counts: dict[tuple[str, str], int] = {}
    positions: dict[tuple[str, str], list[float]] = {}
    for w in windows:
        fams = w.families()
        for i, key in enumerate(fams):
            counts[key] = counts.get(key, 0) + 1
            positions.setdefault(key, []).append(i / max(1, len(fams) - 1))
    kept = [k for k, n in counts.items() if n * 2 >= len(windows)]
    return sorted(kept, key=lambda k: (sum(positions[k]) / len(positions[k]), k))


def _supported(gate: list[tuple[str, str]], windows: list[Window]) -> tuple[list[tuple[str, str]], list[Window]]:
    """The gate and the windows holding all of it, once it preceded commits in two sessions or three commits:
    the least frequent checks are dropped (the later one first on a tie) until it does."""
    gate = list(gate)
    while len(gate) >= 2:
        full = [w for w in windows if set(gate) <= set(w.families())]
        if len({w.closer.session for w in full}) >= 2 or len(full) >= 3:
            return gate, full
        counts = {k: sum(k in w.families() for w in windows) for k in gate}
        gate.remove(min(reversed(gate), key=lambda k: counts[k]))
    return [], []


def _shown(key: tuple[str, str], windows: list[Window], *, folder: bool) -> str:
    """The form a gate check usually took (on a tie, one run on the whole project), with its folder; a form the
    sessions stopped using once another took its place is not shown (:func:`_current`)."""
    forms: dict[str, list[Run]] = {}
    for w in windows:
        for r in w.checks:
            if (r.where, r.use.family) == key:
                forms.setdefault(r.use.form, []).append(r)
    whole = {f for f, runs in forms.items() if any(not r.use.filtered for r in runs)}
    form = sorted(_current(forms), key=lambda f: (-len(forms[f]), f not in whole, f))[0]
    return f"`{form}`" + (f" (in `{key[0]}/`)" if key[0] and folder else "")


def _current(forms: dict[str, list[Run]]) -> list[str]:
    """The forms still in use: not one whose every run came before the first run of a form used again since
    (wakil: `uv run pytest -q` until 2026-07-20, then `uv run pytest -q -m "not eval"` in every later window: the
    practice changed, and the older form, however often it ran, is no longer how the project runs its tests)."""
    first = {f: min(r.step.order for r in runs) for f, runs in forms.items()}
    last = {f: max(r.step.order for r in runs) for f, runs in forms.items()}
    later = [f for f, runs in forms.items() if len(runs) >= MIN_REPLACING_RUNS]
    return [f for f in forms if not any(first[g] > last[f] for g in later)]


def _hooks(views: Sequence[SessionView]) -> list[tuple[str, Step]]:
    """(hook runner, the commit/push whose output shows it), the latest sighting of each runner."""
    seen: dict[str, Step] = {}
    for view in views:
        for step in view.steps:
            if not any(git_verb(seg.tokens) in ("commit", "push") for seg, _ in step.parts):
                continue
            text = ANSI_RE.sub("", step.output[:20000])
            lower = text.lower()
            found = [name for name, needle, rx in _HOOKS if needle in lower and rx.search(text)]
            for name in found[:1]:  # the first match names the runner; the generic one only when none does
                seen[name] = step
    return sorted(seen.items())


def _verb(step: Step) -> str:
    return "commit" if any(seg.tokens[:2] == ("git", "commit") for seg, _ in step.parts) else "push"


def _first_line(step: Step) -> str:
    """How the commit or push that closed a window reads in evidence (a commit by its message)."""
    message = commit_message(step.command)
    if message:
        return f'git commit -m "{message}"'
    return next((seg.text for seg, _ in step.parts if git_verb(seg.tokens) in ("commit", "push")), "git")

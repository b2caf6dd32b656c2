"""Recurring commands: the project commands its sessions ran successfully again and again (``cmd:more``).

The purpose items (:mod:`.commands`) name one canonical command per purpose; a project's sessions also keep
running others — ``mix credo``, ``npm run db:migrate``, ``bd ready``, ``bash scripts/sync.sh`` — and a new
session that knows them does not rediscover them. A command is recurring when its normalised form
(:func:`~nous_assets.extract.rules.forms.command_forms`: program plus subcommand or script; exploration,
version-control porcelain, housekeeping and inline code never count) succeeded inside the repository in at least
:data:`MIN_SESSIONS` sessions — or, for a program with a subcommand or script that does something (``openspec
validate``, ``bash scripts/sync.sh``; not a bare ``curl`` nor a lookup such as ``qmd search`` or ``mise registry``:
research the session did, not the project's workflow), :data:`MIN_RUNS` times in one, each run doing more than
look something up with it (``qmd collection add``, not ``qmd collection list``): what the first session ran again
and again the second needs too — and its latest run did not fail. A run on a throwaway copy in a temporary folder
(:func:`on_scratch`) never counts. Forms another brief
item already names are left out: the line adds only what the rest of the brief does not say. So are the everyday
tools every session already knows (:data:`EVERYDAY`: ``git worktree``, ``gh pr edit``, ``docker run``, ``npx
prettier``): the bare form of one says nothing of how this project uses it (a fresh reader judged 2 of 16
recurring-command lines useful, and named those tools as what made a line a grab-bag). A form two runs or more
gave variables to is shown behind the ones its latest run set, as a purpose's command is.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from nous_assets.brief.commands import shown_settings
from nous_assets.brief.item import DESCRIBING_KEYS, RECURRING_KEY, BriefItem, Proof, make_item
from nous_assets.brief.shell_split import Segment
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules import filters
from nous_assets.extract.rules.forms import command_forms
from nous_assets.extract.rules.shell import LOOKUP_VERBS, looks_up
from nous_assets.extract.rules.text import BACKTICKED_RE

MIN_SESSIONS = 2
MIN_RUNS = 2
MAX_FORMS = 8
KEY = RECURRING_KEY
EVERYDAY = frozenset({"git", "gh", "docker", "podman", "npx", "bunx", "pnpx", "uvx", "pip", "pip3", "brew", "apt",
                      "apt-get", "curl", "wget"})  # fmt: skip
"""Programs every session knows how to use: that a project's sessions ran one again and again teaches nothing."""


LEAD = "Commands this project's sessions run again and again: "


@dataclass
class _Form:
    ok: list[Step] = field(default_factory=list)
    last: Step | None = None
    assigned: list[tuple[str, ...]] = field(default_factory=list)  # the variables each ok run set, as ``ok``
    acting: int = 0  # ok runs that did more than look something up with it (``qmd collection add``, not ``list``)

    @property
    def sessions(self) -> set[str]:
        return {s.session for s in self.ok}

    def order(self, form: str) -> tuple[int, int, str]:
        """Most sessions first, then most successful runs, then the form."""
        return -len(self.sessions), -len(self.ok), form


def mine_recurring(views: Sequence[SessionView], others: Sequence[BriefItem]) -> list[BriefItem]:
    """At most one item: the recurring commands no item in ``others`` names, most sessions first."""
    forms: dict[str, _Form] = {}
    for view in views:
        for step in view.steps:
            if not step.command or step.status not in ("ok", "fail") or filters.bypass(step.command):
                continue
            if step.rel(step.cwd) is None or on_scratch(step.command):
                continue  # a scratch folder outside the repository, or a throwaway copy in a temporary one
            segs = [(seg, command_forms(seg.text, step.cwd)) for seg, _ in step.parts]
            assigned = _assigned(segs) if step.status == "ok" else {}
            lookups = _lookups(segs)
            for form in command_forms(step.command, step.cwd):
                tally = forms.setdefault(form, _Form())
                if step.status == "ok":
                    tally.ok.append(step)
                    tally.assigned.append(assigned.get(form, ()))
                    tally.acting += form not in lookups
                if tally.last is None or step.order >= tally.last.order:
                    tally.last = step
    named = " ".join(span for item in others if item.key not in DESCRIBING_KEYS
                     for span in BACKTICKED_RE.findall(item.content))  # fmt: skip
    chosen = sorted(
        (f for f, t in forms.items() if _recurs(f, t) and not _named(f, named) and f.split(" ")[0] not in EVERYDAY),
        key=lambda f: forms[f].order(f),
    )[:MAX_FORMS]
    if not chosen:
        return []
    proofs = [_proof(step, form) for form in chosen for step in _latest_per_session(forms[form].ok)]
    shown = ", ".join(f"`{_with_settings(f, forms[f])}`" for f in chosen)
    content = LEAD + shown + "."
    runs = sum(len(forms[f].ok) for f in chosen)
    return [make_item("commands", KEY, content, "verified", proofs, runs=runs)]


_TEMP_PATH_RE = re.compile(r"(?<![\w./-])(?:/private)?/tmp/|(?<![\w./-])/var/folders/|\$\{?TMPDIR\b")
_OUTPUT_RE = re.compile(r"\d*(?:>>?|&>)\s*\S+|\btee\s+(?:-a\s+)?\S+")


def on_scratch(command: str) -> bool:
    """Whether a run works in or on a temporary folder (``/tmp``, ``/private/tmp``: Claude Code's scratchpad, a
    ``$TMPDIR``), not only to save its output there: a tool tried on a throwaway copy is research into the tool, not
    the project's workflow (wakil: `uv run wakil init` on a scratch knowledge base, eleven runs in one session, and
    never again; a fresh reader called the line one-off)."""
    return bool(_TEMP_PATH_RE.search(_OUTPUT_RE.sub(" ", command)))


_SegmentForms = list[tuple[Segment, tuple[str, ...]]]
"""A step's commands, each with its forms (:func:`command_forms`), computed once per step."""


def _assigned(segs: _SegmentForms) -> dict[str, tuple[str, ...]]:
    """The variables a step set before each of its commands, by form (the first command of a form)."""
    out: dict[str, tuple[str, ...]] = {}
    for seg, forms in segs:
        for form in forms:
            out.setdefault(form, seg.assigned)
    return out


def _lookups(segs: _SegmentForms) -> set[str]:
    """The forms a step ran only to look something up (``qmd collection list``: :func:`looks_up`)."""
    looked: set[str] = set()
    acted: set[str] = set()
    for seg, forms in segs:
        (looked if looks_up(seg.text) else acted).update(forms)
    return looked - acted


def _with_settings(form: str, tally: _Form) -> str:
    """``form`` behind the variables its latest run set, when two runs or more set some
    (``GITHUB_TOKEN=$(gh auth token) mise exec -- gx lint``): how the sessions came to run it, as for a purpose's
    command (:func:`~nous_assets.brief.commands.shown_settings`)."""
    if sum(1 for a in tally.assigned if a) < 2:
        return form
    latest = max(range(len(tally.ok)), key=lambda i: tally.ok[i].order)
    return " ".join([*shown_settings(tally.assigned[latest]), form])


def _named(form: str, named: str) -> bool:
    """Another item names the command, or the script it runs (``mise run lint`` "runs `./script/validate.sh`")."""
    script = form.rsplit(" ", 1)[-1]
    return form in named or ("/" in script and script.removeprefix("./") in named)


def _recurs(form: str, tally: _Form) -> bool:
    """Enough successful runs (see the module doc), the latest of all its runs among them."""
    if tally.last is None or tally.last.status != "ok":
        return False
    return len(tally.sessions) >= MIN_SESSIONS or (_does_something(form) and tally.acting >= MIN_RUNS)


def _does_something(form: str) -> bool:
    """A program with a subcommand or script that acts (``openspec validate``), not a bare program or a lookup."""
    words = form.split(" ")
    return len(words) > 1 and words[-1] not in LOOKUP_VERBS


def _latest_per_session(steps: list[Step]) -> list[Step]:
    latest: dict[str, Step] = {}
    for step in steps:
        if step.session not in latest or step.order > latest[step.session].order:
            latest[step.session] = step
    return list(latest.values())


def _proof(step: Step, form: str) -> Proof:
    return step.proof(f"ran `{form}`: ok")


def without(content: str, named: str) -> str | None:
    """The recurring-commands line ``content`` without the commands ``named`` names (the code spans of a packet's
    other lines, joined; :func:`_named`: `bd ready`, `bd close` beside the line that says how work is tracked with
    `bd`, `bash scripts/generate-readme.sh` beside the hook that runs `scripts/generate-readme.sh`); None when none is
    left, ``content`` itself when it is no such line."""
    if not content.startswith(LEAD):
        return content
    spans = BACKTICKED_RE.findall(content[len(LEAD) :])
    kept = [s for s in spans if not (forms := command_forms(s)) or not all(_named(f, named) for f in forms)]
    if not kept:
        return None
    return content if len(kept) == len(spans) else LEAD + ", ".join(f"`{s}`" for s in kept) + "."

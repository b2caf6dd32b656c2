"""Commands: the canonical way to build, test, lint, format, type-check, check and run the project.

One item per purpose (key ``cmd:<purpose>``). Every project command of every session is read by
:mod:`~nous_assets.brief.runners` into a *family* (``uv run pytest``, whatever the flags) and a canonical
*form* (``uv run pytest -q``, filters dropped). Per purpose the family with the most successful uses wins
(ties: more sessions, then the most recent success), and within it the form with the most successful uses.

Conservative on purpose — a wrong command in a brief costs more than a missing one:

* a command is canonical with at least two successful uses, or one that a manifest entry backs (a
  ``package.json`` script, Makefile target, ``mise.toml`` task, ``[tool.*]`` section … that a session saw) or
  that ran a project task by name (``bun run lint``, ``make test``, ``mise run check``: the task exists, and it
  passed);
* a form whose latest use failed is not canonical (the next one may be);
* a package script that another script for the same purpose runs as one step says so (``css:build`` inside
  ``build``): it is a part of the project's way, not the whole;
* a test command must have run at least once without a filter — ``pytest tests/test_x.py -k foo`` shows
  the runner works, not that the suite does; a linter run on named files generalises to the project;
* commands run outside the repository (a scratch folder), masked (``|| true``, ``&``) or bypassing a check
  (``--no-verify``) are not evidence;
* variables the runs set before the command (``DB_HOST=10.0.0.5 pnpm dev``) are shown as its latest run set
  them when two runs or more set some: how the sessions came to run it (the services live on another host, a
  port is taken), not a one-off; a variable whose name says it holds a credential only when its value is read at
  run time (``GITHUB_TOKEN=$(gh auth token)``), never a value.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from nous_assets.brief.item import BriefItem, Proof, make_item
from nous_assets.brief.manifests import Entry, Manifests
from nous_assets.brief.runners import PURPOSES, Use, purpose_of_name
from nous_assets.brief.shell_split import Segment
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules import filters
from nous_assets.extract.rules.shell import names_a_secret

LABELS = {
    "build": "Build with",
    "test": "Run the tests with",
    "lint": "Lint with",
    "format": "Format the code with",
    "typecheck": "Type-check with",
    "check": "Run the project's checks with",
    "coverage": "Measure test coverage with",
    "run": "Start it locally with",
}
MAX_BODY = 80
MAX_SETTING = 80  # one variable as written (NAME=value): a longer value is a payload, not a setting
TASK_RUNNERS = frozenset({"mise", "make", "just", "task", "npm", "pnpm", "yarn", "bun"})
"""Runners of a project's named tasks: a successful run shows the task exists, as a manifest entry would."""


@dataclass(frozen=True)
class Run:
    """One use of a project command: which, where (repo-relative folder), and whether it passed."""

    use: Use
    where: str
    ok: bool
    step: Step
    seg: Segment

    def proof(self) -> Proof:
        return self.step.proof(f"ran `{self.seg.text}`: {'ok' if self.ok else 'failed'}")


@dataclass
class Tally:
    """The runs of one family or form."""

    runs: list[Run] = field(default_factory=list)

    @property
    def ok(self) -> list[Run]:
        return [r for r in self.runs if r.ok]

    @property
    def sessions(self) -> set[str]:
        return {r.step.session for r in self.ok}

    @property
    def last(self) -> Run:
        return max(self.runs, key=lambda r: r.step.order)

    def rank(self) -> tuple[int, int, tuple]:
        ok = self.ok
        return (len(ok), len(self.sessions), max(r.step.order for r in ok) if ok else ())


def runs_of(step: Step) -> list[Run]:
    """The project commands one Bash call ran, each once, with its outcome (unknown outcomes are left out)."""
    if "runs" not in step.cache:
        step.cache["runs"] = _runs(step)
    return step.cache["runs"]  # type: ignore[return-value]


def _runs(step: Step) -> list[Run]:
    if not step.parts or not any(use for _, use in step.parts) or filters.bypass(step.command):
        return []
    out: list[Run] = []
    seen: set[tuple[str, str]] = set()
    for seg, use in step.parts:
        where = step.where(seg)
        if use is None or where is None or (where, use.form) in seen:
            continue
        ok = (step.status == "ok" and not seg.guarded) or (use.purpose == "run" and step.background)
        failed = step.status == "fail" and not seg.guarded
        if ok or failed:
            seen.add((where, use.form))
            out.append(Run(use, where, ok, step, seg))
    return out


def all_runs(views: Sequence[SessionView]) -> list[Run]:
    return [run for view in views for step in view.steps for run in runs_of(step)]


def mine_commands(views: Sequence[SessionView], book: Manifests) -> list[BriefItem]:
    """One ``cmd:<purpose>`` item per purpose that has a canonical command."""
    families: dict[tuple[str, str, str], Tally] = {}
    for run in all_runs(views):
        families.setdefault((run.use.purpose, run.where, run.use.family), Tally()).runs.append(run)
    chosen: list[tuple[str, Tally, Entry | None]] = []
    for purpose in PURPOSES:
        for key in best_first([k for k in families if k[0] == purpose], families.__getitem__):
            found = _canonical(purpose, families[key], book)
            if found is not None:
                chosen.append((purpose, *found))
                break
    bodies = " ".join(entry.body for _, _, entry in chosen if entry is not None)
    return [_render(purpose, tally, entry, book) for purpose, tally, entry in chosen if not _wrapped(tally, bodies)]


def _wrapped(tally: Tally, bodies: str) -> bool:
    """A script that another chosen command's task runs (`mise run lint` runs `./script/validate.sh`)."""
    use = tally.last.use
    return use.runner == "script" and use.target in bodies.replace("./", "")


K = TypeVar("K")


def best_first(keys: list[K], tally_of: Callable[[K], Tally]) -> list[K]:
    """Keys by their tally's rank (most successful uses, sessions, latest success), ties by the key itself."""
    ordered = sorted(keys)  # type: ignore[type-var]
    ordered.sort(key=lambda k: tally_of(k).rank(), reverse=True)  # stable: equal ranks keep the key order
    return ordered


def _canonical(purpose: str, family: Tally, book: Manifests) -> tuple[Tally, Entry | None] | None:
    """The family's canonical form (its runs and manifest entry), or None when it has none."""
    if purpose == "test" and not any(r.ok and not r.use.filtered for r in family.runs):
        return None  # only filtered runs: the suite itself never ran
    forms: dict[str, Tally] = {}
    for run in family.runs:
        forms.setdefault(run.use.form, Tally()).runs.append(run)
    for form in best_first(list(forms), forms.__getitem__):
        tally = forms[form]
        last = tally.last
        entry = book.entry(last.use, last.where)
        backed = (entry is not None and entry.backs) or last.use.runner in TASK_RUNNERS
        if tally.ok and last.ok and (len(tally.ok) >= 2 or backed):
            return tally, entry
    return None


def _whole(purpose: str, entry: Entry | None, book: Manifests) -> str:
    """", one step of `build` (`bun run css:build && bun build …`)" when another script for the same purpose runs
    this one as a step: the line must not read as the whole build (a fresh reader judged "Build with `bun run
    css:build`" harmful where ``build`` does more), and the whole was not seen to pass, so it is not offered."""
    for caller in book.callers(entry) if entry is not None else []:
        name = caller.name.removeprefix("scripts.")
        if purpose_of_name(name) == purpose:
            body = caller.body.strip()
            return f", one step of `{name}`" + (f" (`{body}`)" if len(body) <= MAX_BODY and "`" not in body else "")
    return ""


def _settings(run: Run) -> tuple[str, ...]:
    """The variables a run set that its form does not name already (``MIX_ENV=test`` is part of the form)."""
    return tuple(a for a in run.seg.assigned if a not in run.seg.env)


def _set_by_runs(tally: Tally) -> str:
    """"; its latest run set `DB_HOST=10.0.0.5 REDIS_HOST=10.0.0.5`" when two or more runs set variables (see the
    module doc), else ""."""
    if sum(1 for r in tally.ok if _settings(r)) < 2:
        return ""
    shown = shown_settings(_settings(tally.last))
    return f"; its latest run set `{' '.join(shown)}`" if shown else ""


def shown_settings(assigned: Sequence[str]) -> list[str]:
    """The variable assignments a brief line may repeat: short, and no credential — one whose name says it holds
    one is shown only when its value is read when the command runs (``GITHUB_TOKEN=$(gh auth token)``: how to
    get it, not it)."""
    return [a for a in assigned if len(a) <= MAX_SETTING and "`" not in a
            and (not names_a_secret(a) or a.split("=", 1)[1].startswith("$"))]  # fmt: skip


def _render(purpose: str, tally: Tally, entry: Entry | None, book: Manifests) -> BriefItem:
    where, form = tally.last.where, tally.last.use.form
    content = f"{LABELS[purpose]} `{form}`"
    content += f" from `{where}/`" if where else ""
    body = entry.body.strip() if entry else ""
    runs = f"it runs `{body}`" if body and len(body) <= MAX_BODY and body not in form and "`" not in body else ""
    about = f'"{entry.about}"' if entry and entry.about else ""
    if about or runs:
        content += f" ({'; '.join(x for x in (about, runs) if x)})"
    content += _whole(purpose, entry, book) + _set_by_runs(tally)
    proofs = [r.proof() for r in tally.ok]
    backing = book.proof(entry) if entry is not None and entry.backs else None
    paths = [entry.ref] if entry else []
    if tally.last.use.runner == "script":
        paths.append(tally.last.use.target)
    return make_item(
        "commands", f"cmd:{purpose}", content + ".", "verified", proofs + ([backing] if backing else []),
        runs=len(tally.ok), paths=paths,
    )  # fmt: skip

"""Layout: one short paragraph — what the project is (:mod:`~nous_assets.brief.about`), the stack with versions,
then the top-level folders and what they hold.

* **Stack** from the manifests the sessions saw (:mod:`~nous_assets.brief.manifests`: ``requires-python``,
  ``engines``, Cargo ``edition``, ``go``, Elixir, mise/asdf tools, Dockerfile bases, main frameworks); when
  no manifest names the language, the toolchain the project's commands ran with (``uv``, ``cargo``, ``bun`` …).
* **Folders** from the files read and edited across sessions (Read/Edit/Write, Grep/Glob paths), at most
  six top-level folders, most used first, each with its most used entries (``src/wakil/ (cli/, app/, …)``;
  a folder holding a single package folder is shown as that folder).

Deleted and moved paths never show: every ``rm``, ``git rm``, ``mv``, ``git mv`` is replayed in time order,
so a file a session wrote and a later ``rm`` removed is gone, a moved file counts under its new name, and a
path used again after its removal is back. Paths are relative to the repository root (worktrees included).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nous_assets.brief.about import describe
from nous_assets.brief.commands import all_runs
from nous_assets.brief.item import MAX_LAYOUT, BriefItem, Proof, make_item
from nous_assets.brief.manifests import DESCRIPTION, Manifests
from nous_assets.brief.shell_split import Segment, git_verb
from nous_assets.brief.timeline import SessionView, Step, removed, under
from nous_assets.extract.rules.session import EDIT_TOOLS

MAX_DIRS = 6
MAX_CHILDREN = 4
MIN_USES = 2
MAX_NAME = 32
_DATED_RE = re.compile(r"\d{4}-\d{2}-\d{2}|\d{8}|\d{6,}")
_SKIPPED = frozenset(
    ".git node_modules .venv venv env __pycache__ target dist build _build deps .next .nuxt coverage .pytest_cache "
    ".mypy_cache .ruff_cache .idea .vscode .entire .cache .turbo .tox .gradle out tmp".split()
)
_TOPIC_ORDER = (
    "python",
    "engine:node",
    "node",
    "rust",
    "go",
    "elixir",
    "package-manager",
    "frameworks",
    "tools",
    "image",
)
_TOOLCHAINS = {
    "uv": "Python (uv)", "poetry": "Python (Poetry)", "pdm": "Python (PDM)", "hatch": "Python (Hatch)",
    "pytest": "Python", "python": "Python", "cargo": "Rust (cargo)", "go": "Go", "mix": "Elixir (mix)",
    "bun": "TypeScript/JavaScript (Bun)", "pnpm": "JavaScript/TypeScript (pnpm)", "npm": "JavaScript/TypeScript (npm)",
    "yarn": "JavaScript/TypeScript (Yarn)", "dotnet": ".NET", "gradle": "JVM (Gradle)", "mvn": "JVM (Maven)",
    "bundle": "Ruby (Bundler)", "swift": "Swift", "flutter": "Dart (Flutter)", "dart": "Dart",
}  # fmt: skip
_LANGUAGE_TOPICS = frozenset({"python", "engine:node", "node", "rust", "go", "elixir"})


@dataclass(frozen=True)
class _Event:
    kind: str  # use | remove | move
    path: str
    to: str
    step: Step


def mine_layout(views: Sequence[SessionView], book: Manifests) -> list[BriefItem]:
    counts, last, gone = _replay(sorted((e for v in views for e in _events(v)), key=lambda e: e.step.order))
    dirs = _top_dirs(counts)
    stack, stack_proofs = _stack(views, book, gone)
    if len(dirs) < 2 and not (stack and dirs):
        return []
    about, about_proof = describe(views, book, gone)
    content, dirs = _fit(" ".join(p for p in (about, f"Stack: {stack}." if stack else "") if p), dirs, counts)
    proofs = ([about_proof] if about_proof else []) + stack_proofs + [last[d] for d in dirs if d in last]
    runs = sum(n for p, n in counts.items() if p.split("/")[0] in dirs)
    return [make_item("layout", "layout", content, "observed", proofs, runs=runs,
                      paths=[d + "/" for d in dirs])]  # fmt: skip


def _fit(head: str, dirs: list[str], counts: dict[str, int]) -> tuple[str, list[str]]:
    """(the paragraph, the folders it shows): the least used folders are left out before the text is cut."""
    while True:
        content = " ".join(p for p in (head, "Layout: " + ", ".join(_describe(d, counts) for d in dirs) + ".") if p)
        if len(content) <= MAX_LAYOUT or len(dirs) <= 2:
            return content, dirs
        dirs = dirs[:-1]


# ---------------------------------------------------------------------------------------------------------
# events


def _events(view: SessionView) -> list[_Event]:
    out: list[_Event] = []
    for step in view.steps:
        call = step.call
        if call.name in EDIT_TOOLS or call.name in ("Read", "Grep", "Glob"):
            rel = step.rel(call.path) if call.path else None
            if rel and _kept(rel) and step.status == "ok":
                out.append(_Event("use", rel, "", step))
        for seg, _ in step.parts:
            if seg.tokens[0] in ("rm", "mv", "git") and step.status == "ok":
                out.extend(_shell_events(step, seg))
        reporter = next((seg for seg, _ in step.parts if git_verb(seg.tokens) in _GIT_REPORTERS), None)
        if reporter is not None:
            out.extend(_reported_events(step, reporter))
    return out


_GIT_REPORTERS = frozenset({"status", "commit"})
_STATUS_DELETED_RE = re.compile(r"^(?:[ MARC]D|D[ M]?)\s+(\S.*?)\s*$|^\s+deleted:\s+(\S.*?)\s*$", re.M)
_COMMIT_DELETED_RE = re.compile(r"^ delete mode \d+ (\S.*?)\s*$", re.M)
_RENAMED_RE = re.compile(r"^(?:R[ M]?\s+|\s+renamed:\s+)(\S.*?) -> (\S.*?)\s*$", re.M)


def _reported_events(step: Step, seg: Segment) -> list[_Event]:
    """Deletions and renames git itself reports (``git status`` ``D``/``deleted:``, a commit's ``delete mode``):
    files removed some other way (by the user, by a tool) are gone too."""
    text = step.output[:30000]
    status = any(git_verb(sg.tokens) == "status" for sg, _ in step.parts)
    out = []
    for m in (_STATUS_DELETED_RE if status else _COMMIT_DELETED_RE).finditer(text):
        rel = step.rel(posixpath.join(seg.cwd, next(g for g in m.groups() if g).strip('"')))
        if rel:
            out.append(_Event("remove", rel, "", step))
    for m in _RENAMED_RE.finditer(text) if status else ():
        src, dst = (step.rel(posixpath.join(seg.cwd, g.strip('"'))) for g in m.groups())
        if src and dst:
            out.append(_Event("move", src, dst, step))
    return out


def _shell_events(step: Step, seg: Segment) -> list[_Event]:
    words = list(seg.tokens)
    if words[:2] == ["git", "rm"] and "--cached" not in words:
        words = words[1:]
    if words[:2] == ["git", "mv"]:
        words = words[1:]
    args = [w for w in words[1:] if not w.startswith("-")]
    if not words or any(c in w for w in args for c in "*?$`{"):
        return []
    rels = [step.rel(posixpath.join(seg.cwd, a)) for a in args]
    if words[0] == "rm":
        return [_Event("remove", r, "", step) for r in rels if r]
    if words[0] == "mv" and len(rels) >= 2 and all(r is not None for r in rels):
        *sources, target = rels
        into = len(sources) > 1 or args[-1].endswith("/")
        return [_Event("move", s, posixpath.join(target, posixpath.basename(s)) if into else target, step)
                for s in sources]  # fmt: skip
    return []


def _kept(rel: str) -> bool:
    return bool(rel) and not rel.startswith("../") and not any(part in _SKIPPED for part in rel.split("/"))


def _replay(events: list[_Event]) -> tuple[dict[str, int], dict[str, Proof], set[str]]:
    """(uses per path that still exists, latest proof per top-level folder, paths removed or moved away and not
    used since) after every remove and move."""
    counts: dict[str, int] = {}
    last: dict[str, Proof] = {}
    gone: set[str] = set()
    for e in events:
        back = e.path if e.kind == "use" else e.to
        gone = {g for g in gone if not under(back, g)} if back else gone
        if e.kind != "use":
            gone.add(e.path)
        if e.kind == "use":
            counts[e.path] = counts.get(e.path, 0) + 1
            if "/" in e.path:
                last[e.path.split("/")[0]] = e.step.proof(f"{_verb(e.step)} `{e.path}`")
        elif e.kind == "remove":
            for path in [p for p in counts if under(p, e.path)]:
                del counts[path]
        elif e.kind == "move":
            for path in [p for p in counts if under(p, e.path)]:
                moved = e.to + path[len(e.path) :]
                counts[moved] = counts.get(moved, 0) + counts.pop(path)
    return counts, last, gone


def _verb(step: Step) -> str:
    return {"Read": "read", "Grep": "searched", "Glob": "listed"}.get(step.call.name, "edited")


# ---------------------------------------------------------------------------------------------------------
# folders


def _top_dirs(counts: dict[str, int]) -> list[str]:
    totals: dict[str, int] = {}
    for path, n in counts.items():
        if "/" in path:
            top = path.split("/")[0]
            totals[top] = totals.get(top, 0) + n
    kept = [d for d, n in totals.items() if n >= MIN_USES]
    return sorted(kept, key=lambda d: (-totals[d], d))[:MAX_DIRS]


def _describe(top: str, counts: dict[str, int]) -> str:
    """``src/wakil/ (cli/, app/, llm/, …)``: the folder (down a single-package chain) and its main entries; a folder
    whose only used entry is one file is shown as that file (``.claude-plugin/plugin.json``)."""
    folder = top
    folders = {p.rsplit("/", i)[0] for p in counts for i in range(1, p.count("/") + 1)}
    while True:
        children = _children(folder, counts, folders)
        total = sum(children.values())
        only = [c for c in children if c.endswith("/")]
        if len(children) == 1 and only and total:
            folder = folder + "/" + only[0].rstrip("/")
            continue
        break
    ranked = sorted(children, key=lambda c: (-children[c], c))
    named = [c for c in ranked if len(c) <= MAX_NAME and not _DATED_RE.search(c)]  # dated notes say little
    if len(ranked) == 1 and named and not named[0].endswith("/"):
        return f"`{folder}/{named[0]}`"  # the one file used there: `.claude-plugin/plugin.json` says what it is
    shown = named[:MAX_CHILDREN] + (["…"] if len(ranked) > min(len(named), MAX_CHILDREN) else [])
    inside = f" ({', '.join(shown)})" if len(ranked) > 1 and named else ""
    return f"`{folder}/`{inside}"


def _children(folder: str, counts: dict[str, int], folders: set[str]) -> dict[str, int]:
    """Entries of ``folder`` with their uses; sub-folders end with ``/`` (also when used as a search path)."""
    out: dict[str, int] = {}
    for path, n in counts.items():
        if path.startswith(folder + "/"):
            rest = path[len(folder) + 1 :].split("/")
            is_folder = len(rest) > 1 or f"{folder}/{rest[0]}" in folders
            name = rest[0] + ("/" if is_folder else "")
            out[name] = out.get(name, 0) + n
    return out


# ---------------------------------------------------------------------------------------------------------
# stack


def _stack(views: Sequence[SessionView], book: Manifests, gone: set[str]) -> tuple[str, list[Proof]]:
    """What the manifests say (a file since removed or moved away says nothing any more)."""
    facts = [fp for fp in book.facts.values()
             if fp[0].topic != DESCRIPTION and not removed(fp[0].file, gone)]  # fmt: skip
    facts.sort(key=lambda fp: (_topic_rank(fp[0].topic), fp[0].file))
    shown: list[str] = []
    proofs: list[Proof] = []
    for fact, proof in facts:
        folder = posixpath.dirname(fact.file)
        text = fact.text + (f" in `{folder}/`" if folder and fact.topic in _LANGUAGE_TOPICS else "")
        text = f"{text} ({fact.file})" if fact.topic == "image" else text
        if text not in shown:
            shown.append(text)
            proofs.append(proof)
    if not any(f.topic in _LANGUAGE_TOPICS for f, _ in facts):
        toolchain, toolchain_proofs = _toolchain(views)
        if toolchain:
            shown.insert(0, toolchain)
            proofs.extend(toolchain_proofs)
    return "; ".join(shown[:6]), proofs


def _topic_rank(topic: str) -> int:
    return _TOPIC_ORDER.index(topic) if topic in _TOPIC_ORDER else len(_TOPIC_ORDER)


def _toolchain(views: Sequence[SessionView]) -> tuple[str, list[Proof]]:
    """The language the project's successful commands ran with, when no manifest said it."""
    tally: dict[str, list[Proof]] = {}
    for run in all_runs(views):
        if run.ok:
            head = re.split(r"[\s/]", run.use.family)[0].removeprefix("./")
            name = _TOOLCHAINS.get(head) or _TOOLCHAINS.get(run.use.target.split()[0])
            if name:
                tally.setdefault(name, []).append(run.proof())
    ranked = sorted((n for n in tally if len(tally[n]) >= 2), key=lambda n: (-len(tally[n]), n))
    return (ranked[0], tally[ranked[0]]) if ranked else ("", [])

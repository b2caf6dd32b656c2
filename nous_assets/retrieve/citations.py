"""Memories that cite what no longer exists in the project's checkout are stale.

A memory that says "run `scripts/old_release.sh`" or "docs/setup.md explains X" after the script was renamed
or the doc deleted misleads the next session. When the project's work tree is on this machine, packet building
checks every citation a memory makes against it; a memory whose citation definitely does not resolve is held
back and listed for review as stale. This module is the pure checker: standard library only, no database, and
it never raises (a checker bug must never break packet building or hide memories).

Being wrong costs asymmetrically: a false "stale" hides a good memory, a missed one injects a note that is
already marked "may be stale". So every rule below decides *only* what it can decide with certainty, and
anything ambiguous is "can't check" (``None``), never "unresolved".

**What is a citation** (:func:`citations`; text inside double quotes — user quotes, error messages — is not
read at all, since it reports what someone said or saw, not what the project has):

* ``path`` — a repository-relative path in prose or a code span, with its markdown and punctuation
  stripped (``(…)``, ``**…**``, trailing ``.,;:!?``, a ``:12``/``:12:5``/``#L12`` line suffix, a leading
  ``./`` or the ``@`` of an ``@docs/x.md`` file mention). Never a citation: URLs and anything with a colon
  (``host:path``, ``git@…``), ``~/…``, paths with ``.`` / ``..`` segments, globs and placeholders (any of
  ``* ? { } [ ] < > $ % \\ | ! # , ; = ( )``), truncated tokens (``…``), ``@scope/pkg`` package names,
  paths inside ``.git/``, paths whose first segment is numeric (dates, fractions) or dotted like a domain or
  version (``github.com/x``, ``v1.2/x``), single-segment absolute paths (``/sweep`` is a slash command), and
  extensionless pairs (``and/or``, ``I/O``, ``owner/repo``, ``feat/login``: two segments, the last neither
  with a file extension nor a known file name like ``Dockerfile``, and no trailing ``/``; ``src/app/`` and
  ``src/wakil/storage`` are citations). A name without ``/`` is a citation only when it is a well-known
  manifest or doc file (:data:`KNOWN_FILES`: ``Makefile``, ``package.json``, ``README.md`` …) or written
  ``./name.ext``: other bare names (``research.md``, ``CLAUDE.md``, ``MEMORY.md``) may live anywhere,
  including outside the repository (Claude's own memory files), so they are not checked. In a code span,
  paths are not read from spans that ``cd`` (their base directory is unknown), from ``gh api``/``curl``/
  ``wget``/``http`` commands (their arguments are URLs), nor from the arguments of ``make``/``npm``/
  ``mise``/``just``… (targets and scripts, read below); in ``git`` and ``gh`` commands only file-like
  tokens count, since the others may be refs or slugs (``git push origin feat/x/y``, ``--repo o/r``).
* ``npm-script`` — ``npm run X``/``npm run-script X``/``pnpm run X`` (scripts only), ``yarn X``/
  ``yarn run X``/``bun run X`` (a script or a dependency's binary), ``pnpm X`` (a script, else pnpm runs
  it as any command, so it can only be confirmed). Skipped: ``--if-present``, ``npm run env``, option
  forms (``npm run --silent x``), and ``X`` naming a package manager's own command (``yarn add``).
* ``make-target`` — ``make X [Y …]`` (``VAR=value`` and options skipped; ``-C``/``-f`` skip the command).
* ``mise-task`` — ``mise run X``/``mise r X`` (``-C``/``--cd`` or an option before the task skip it).
* ``just-recipe`` — ``just X`` (the first recipe; options before it or a ``dir/recipe`` skip it).
* ``workflow`` — ``gh workflow run|view|enable|disable NAME.yml`` and ``gh run … --workflow NAME.yml``: a
  bare workflow file name, resolved against ``.github/workflows/`` (``--repo``/``-R`` skips it: another
  repository). ``cargo X`` is not read: any installed ``cargo-X`` binary makes it resolve.

Commands are only read from code spans (backticks), at the start of a simple command (after ``&&``, ``;``,
``|``, ``(``, ``VAR=x`` assignments, ``sudo``/``env``/``time`` and wrappers such as ``timeout 60``), so "make
sure" in prose is not ``make sure``. A name with a variable or placeholder (``make $TARGET``, ``npm run
<script>``) is skipped.

**What resolves** (:class:`Checkout`; all file reads are direct, git is never run):

* A relative path resolves if it exists under the root, or anywhere in the work tree as a path suffix (a
  session whose cwd was a subdirectory cites paths relative to it). It is unresolved only when its first
  segment is an existing top-level entry of the checkout (exact case) and the tree index is complete: a
  path whose first segment is not may name another repository's file (upstream source the session read), a
  generated directory, or a whole directory deleted since — they can't be told apart, so ``docs/setup.md``
  is only flagged while ``docs/`` exists. An absolute path inside the root is checked exactly; one outside
  it is skipped. Never flagged:
  paths gitignored by the root ``.gitignore``/``.git/info/exclude``/the global ignore file (they come and
  go), under generated directories (:data:`SKIP_DIRS`), under a git submodule, or in a sparse checkout. A
  known bare file name resolves if a file by that name exists anywhere in the work tree.
* A command resolves if *any* manifest of its kind in the work tree defines it (the root's or a
  subdirectory's: monorepos and sessions run from a subdirectory), and a kind is checked only when the
  checkout has at least one such manifest. Any manifest that cannot be read completely — invalid JSON/TOML,
  an ``include`` that cannot be followed, ``$(eval …)`` or a rule target with an unknown variable in a
  Makefile, ``set fallback`` in a justfile, a remote mise include — makes every miss of that kind "can't
  check". Make targets: rule lines (multi-target, ``::``, static pattern), ``.PHONY`` lists, ``%`` pattern
  rules (``%:`` and ``.DEFAULT`` match everything), plain variables expanded, followed ``include``s; a file
  named ``X`` or ``X.*`` next to the Makefile also resolves (up-to-date target or built-in implicit rule).
  mise tasks: ``[tasks.X]``/``[tasks."X"]``/``tasks.X = …`` and ``alias`` in any mise config of the
  checkout, its parent directories and the global config, ``task_config.includes``, and file tasks
  (``mise-tasks/``, ``.mise-tasks/``, ``mise/tasks/``, ``.mise/tasks/``, ``.config/mise/tasks/``; ``a:b`` →
  ``a/b`` with or without an extension). just recipes: recipes, aliases, ``import``ed files and ``mod``
  names. npm scripts: ``scripts`` keys of every ``package.json``; a binary form also resolves from a
  ``node_modules/.bin`` and is flagged only when that directory exists and lacks it (never under Yarn PnP).

**Whole-memory rules** (:meth:`Checkout.check`, on the memory's words around its citations, so
``scripts/remove_user.sh`` is not about removing): a memory that talks about something missing, moved,
renamed, failing or planned ("deleted", "renamed", "instead", "failed", "no longer", "proposed", ``mv``/
``rm`` …, see :data:`ABSENCE`) is never flagged — it cites the old name on purpose ("``make tset`` failed;
fixed by running ``make test`` instead"), and so is one narrating a past session ("— after Claude said …;
Claude then ran ``grep … docs/X.md``": a user correction stays true after X.md is gone); and in a memory
about branches or pull requests (:data:`BRANCHY`) a path without a file extension is never flagged
(``feat/ui/login`` may be a branch).

Use one :class:`Checkout` per packet build (it reads the tree and manifests once); :func:`check` is the
one-off form.
"""

from __future__ import annotations

import contextlib
import fnmatch
import json
import os
import re
import shlex
import tomllib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from nous_assets.extract.rules.shell import unwrapped

KINDS = ("path", "npm-script", "make-target", "mise-task", "just-recipe", "workflow")

KNOWN_FILES = frozenset(
    (
        "Makefile GNUmakefile makefile justfile Justfile .justfile Dockerfile Containerfile Procfile Gemfile "
        "Rakefile Vagrantfile Jenkinsfile Brewfile Taskfile.yml package.json package-lock.json pnpm-lock.yaml "
        "pnpm-workspace.yaml yarn.lock tsconfig.json deno.json turbo.json pyproject.toml setup.py setup.cfg "
        "tox.ini noxfile.py requirements.txt uv.lock Cargo.toml Cargo.lock go.mod go.sum pom.xml build.gradle "
        "build.gradle.kts CMakeLists.txt mise.toml .mise.toml docker-compose.yml docker-compose.yaml compose.yml "
        "compose.yaml .pre-commit-config.yaml .gitignore .gitattributes .editorconfig README.md CHANGELOG.md "
        "CONTRIBUTING.md ARCHITECTURE.md"
    ).split()
)
"""Bare file names that are checked: a project's manifests and top-level docs."""

EXTENSIONLESS_FILES = frozenset(
    (
        "Makefile GNUmakefile makefile justfile Justfile Dockerfile Containerfile Procfile Gemfile Rakefile "
        "Vagrantfile Jenkinsfile Brewfile LICENSE"
    ).split()
)
"""Names that look like files though they have no extension (``docker/Dockerfile``)."""

SKIP_DIRS = frozenset(
    (
        ".git node_modules .venv venv __pycache__ .tox .nox .mypy_cache .pytest_cache .ruff_cache .hypothesis "
        ".cache .gradle .idea .next .nuxt .turbo target dist build out coverage htmlcov site-packages vendor"
    ).split()
)
"""Generated or vendored directories: not indexed, and paths under them are never flagged."""

MAX_ENTRIES = 50_000
"""Work-tree entries indexed at most; beyond it, a path found nowhere is "can't check"."""

ABSENCE = re.compile(
    r"\b(?:delet|remov|renam|moved\b|moving\b|mv\b|rm\b|dropp|replac|deprecat|obsolet|retir|miss|absent|gone\b"
    r"|formerly|previously|no longer|used to\b|instead|fail|not found|no such|no rule|did ?n[o']t match"
    r"|does ?n[o']t exist|not exist|nonexist|non-exist|not yet|propos|plann|todo\b|stale|claude then|after claude)",
    re.IGNORECASE,
)
"""Words of a memory about something missing, moved, failing or planned, or narrating what happened in a session
("after Claude said …; Claude then ran `…`"): its misses are deliberate or history."""

BRANCHY = re.compile(r"\b(?:branch|checkout|switch|worktree|rebase|merg|origin/|pull request|PRs?\b)", re.IGNORECASE)
"""Words of a memory about branches: an extensionless path in it may be a branch name."""


@dataclass(frozen=True)
class Citation:
    """Something a memory cites that a checkout can confirm or deny.

    ``kind`` is one of :data:`KINDS`; ``value`` the path (repository-relative, or absolute), script, target,
    task, recipe or workflow file name; ``text`` the token or simple command of the memory it came from.
    """

    kind: str
    value: str
    text: str


@dataclass(frozen=True)
class CheckResult:
    """``unresolved``: citations that definitely do not resolve (the memory is stale); ``checked``: how many
    citations could be decided either way."""

    unresolved: tuple[Citation, ...]
    checked: int

    @property
    def stale(self) -> bool:
        return bool(self.unresolved)


# ---------------------------------------------------------------------------------------------- text scanning

_QUOTES = '"“”'
_BACKTICKS = re.compile(r"`+")


def _spans(text: str) -> list[tuple[str, bool]]:
    """``(span, is_code)`` for the parts of ``text`` outside double quotes; code spans run between equal
    backtick runs (an unclosed one runs to the end), and an unclosed quote hides the rest."""
    spans: list[tuple[str, bool]] = []
    prose: list[str] = []
    quoted, i = False, 0
    while i < len(text):
        ch = text[i]
        if ch == "`":
            run = _BACKTICKS.match(text, i).group()
            close = re.compile(rf"(?<!`){run}(?!`)").search(text, i + len(run))
            end = close.start() if close else len(text)
            if not quoted:
                spans.append(("".join(prose), False))
                prose = []
                spans.append((text[i + len(run) : end], True))
            i = end + len(run) if close else len(text)
            continue
        if ch in _QUOTES:
            quoted = not quoted
        elif not quoted:
            prose.append(ch)
        i += 1
    spans.append(("".join(prose), False))
    return [(s, code) for s, code in spans if s.strip()]


_LEAD = "([{\"'*“‘"
_TRAIL = ".,;:!?)]}\"'*”’"
_LINE_SUFFIX = re.compile(r"(?::\d+)+(?:-\d+)?$|#L\d+(?:-L?\d+)?$")
_FORBIDDEN = set("*?{}[]<>$%\\|!#,;\"'=:()`…")
_SEGMENT = re.compile(r"[A-Za-z0-9_.+@-]+")
_EXTENSION = re.compile(r".*[^.]\.[A-Za-z][A-Za-z0-9_]{0,9}")
_NUMERIC = re.compile(r"v?\d[\d.]*")


def _has_extension(name: str) -> bool:
    return bool(_EXTENSION.fullmatch(name))


def _file_like(name: str) -> bool:
    return _has_extension(name) or name in EXTENSIONLESS_FILES


def _strip(token: str) -> str:
    t = token.strip()
    while t and t[0] in _LEAD:
        t = t[1:]
    previous = None
    while t != previous:
        previous = t
        t = _LINE_SUFFIX.sub("", t.rstrip(_TRAIL))
    return t


def _unmention(t: str) -> str | None:
    """``@docs/x.md`` (a Claude Code file mention) → ``docs/x.md``; ``@scope/pkg`` → None."""
    if not t.startswith("@"):
        return t
    rest = t[1:]
    return rest if "/" in rest and _has_extension(rest.rsplit("/", 1)[-1]) else None


def _segments(t: str) -> tuple[list[str], bool] | None:
    """The path's segments (a leading ``./`` dropped) and whether it was written ``./``."""
    dotted = t.startswith("./")
    while t.startswith("./"):
        t = t[2:]
    segs = t.strip("/").split("/")
    if any(s in ("", ".", "..") or not _SEGMENT.fullmatch(s) for s in segs):
        return None
    return segs, dotted


def _relative_value(segs: list[str], dotted: bool, trailing: bool) -> str | None:
    if len(segs) == 1:
        name = segs[0]
        return name if name in KNOWN_FILES or (dotted and _has_extension(name)) else None
    first = segs[0]
    if _NUMERIC.fullmatch(first) or "." in first[1:] or first == ".git":
        return None
    if not trailing and len(segs) == 2 and not _file_like(segs[1]):
        return None
    return "/".join(segs)


def _path_value(token: str) -> str | None:
    """The path a token cites, normalised, or None when it is not a checkable path."""
    t = _unmention(_strip(token))
    if not t or "://" in t or t.startswith("~") or _FORBIDDEN.intersection(t):
        return None
    parsed = _segments(t)
    if parsed is None:
        return None
    segs, dotted = parsed
    if t.startswith("/"):
        return "/" + "/".join(segs) if len(segs) >= 2 else None
    return _relative_value(segs, dotted, t.endswith("/"))


def _path_citations(span: str, code: bool, *, file_like_only: bool = False) -> Iterator[Citation]:
    for token in span.split():
        if code and token.startswith("-"):
            token = token.split("=", 1)[1] if "=" in token else ""
        value = _path_value(token)
        if value and (not file_like_only or _file_like(value.rsplit("/", 1)[-1])):
            yield Citation("path", value, token.strip())


# --------------------------------------------------------------------------------------------- code commands

_SEPARATORS = re.compile(r"&&|\|\||\$\(|[;|\n()]")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*")
_RUNNERS = frozenset({"make", "gmake", "npm", "pnpm", "yarn", "bun", "mise", "just"})
_URL_COMMANDS = frozenset({"curl", "wget", "http", "https", "xh", "open", "xdg-open"})
_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.:@+/-]*")
_MAKE_NAME = re.compile(r"[A-Za-z0-9_.][A-Za-z0-9_.+/-]*")
_RECIPE = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*(?:::[A-Za-z_][A-Za-z0-9_-]*)*")
_WORKFLOW = re.compile(r"[A-Za-z0-9_.-]+\.ya?ml")
_ENV = "env"


def _tokens(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return command.split()


def _simple_commands(code: str) -> list[tuple[list[str], str]]:
    """The simple commands of a code span as ``(words, text)``, what runs them dropped from the words (variable
    assignments, ``sudo``-like prefixes, ``timeout 60``-like wrappers: :func:`~nous_assets.extract.rules.shell.
    unwrapped`)."""
    out = []
    for part in _SEPARATORS.split(code):
        words = unwrapped(_tokens(part))
        if words:
            out.append((words, part.strip()))
    return out


def _make(args: list[str]) -> list[str] | None:
    targets, skip = [], False
    for a in args:
        if skip:
            skip = False
        elif a.startswith(("-C", "-f", "--file", "--makefile", "--directory", "-I", "--include-dir")):
            return None
        elif a in ("-o", "-W", "-l", "-O", "--old-file", "--what-if", "--assume-new", "--assume-old"):
            skip = True
        elif a.startswith("-") or "=" in a or a.isdigit():
            continue
        elif not _MAKE_NAME.fullmatch(a):
            return None
        else:
            targets.append(a)
    return targets


_PM_COMMANDS = {
    "pnpm": frozenset(
        "add install i update up upgrade remove rm uninstall un link ln unlink import rebuild rb prune fetch patch "
        "patch-commit patch-remove audit list ls outdated why licenses exec dlx create run test t start publish pack "
        "store root bin config c set get setup env init server deploy recursive help doctor self-update "
        "approve-builds ignored-builds cat-file cat-index find-hash sbom restart stop version login logout whoami "
        "dedupe catalog".split()
    ),
    "yarn": frozenset(
        "add install remove upgrade up upgrade-interactive info init dlx exec workspace workspaces why set config "
        "cache constraints npm pack plugin rebuild run node patch patch-commit link unlink version explain search "
        "stage unplug bin dedupe global audit outdated create login logout publish tag team owner list licenses "
        "generate-lock-entry import check autoclean policies help test start sdks".split()
    ),
}


_VALUE_OPTIONS = frozenset({"--filter", "-F", "--prefix", "-C", "--dir", "--cwd", "-w", "--workspace"})


def _only_options(args: list[str]) -> bool:
    """Whether ``args`` are options (and the values of workspace options) only: ``npm -w web run x`` runs a
    script, ``yarn vitest run x`` runs a binary."""
    expect_value = False
    for a in args:
        if expect_value:
            expect_value = False
        elif a.startswith("-"):
            expect_value = a in _VALUE_OPTIONS
        else:
            return False
    return True


def _npm(words: list[str]) -> tuple[str, str] | None:
    """``(script, form)``: form ``strict`` (scripts only), ``binary`` (a script or a dependency's binary) or
    ``confirm`` (``pnpm X``: anything runs, so only a hit counts)."""
    pm, args = words[0], words[1:]
    if "--if-present" in args:
        return None
    if "run" in args or "run-script" in args:
        at = next(i for i, a in enumerate(args) if a in ("run", "run-script"))
        if not _only_options(args[:at]):
            return None
        name, form = (args[at + 1] if at + 1 < len(args) else ""), "strict" if pm in ("npm", "pnpm") else "binary"
    elif pm in ("yarn", "pnpm") and args:
        name, form = args[0], "binary" if pm == "yarn" else "confirm"
        if name in _PM_COMMANDS[pm]:
            return None
    else:
        return None
    if name == _ENV or name.startswith("-") or not _NAME.fullmatch(name) or (pm == "bun" and "." in name):
        return None
    return name, form


def _mise(args: list[str]) -> str | None:
    if any(a in ("-C", "--cd") or a.startswith(("-C", "--cd=")) for a in args):
        return None
    at = next((i for i, a in enumerate(args) if not a.startswith("-")), len(args))
    if args[at : at + 1] not in (["run"], ["r"]) or at + 1 >= len(args):
        return None
    name = args[at + 1]
    return name if _NAME.fullmatch(name) and "/" not in name else None


def _just(args: list[str]) -> str | None:
    rest = [a for a in args if not _ASSIGNMENT.fullmatch(a)]
    if not rest or rest[0].startswith("-"):
        return None
    return rest[0] if _RECIPE.fullmatch(rest[0]) else None


def _gh_workflow(args: list[str]) -> str | None:
    if any(a in ("--repo", "-R") or a.startswith(("--repo=", "-R")) for a in args):
        return None
    name = None
    if len(args) >= 3 and args[0] == "workflow" and args[1] in ("run", "view", "enable", "disable"):
        name = args[2]
    elif args[:1] == ["run"]:
        for i, a in enumerate(args):
            if a.startswith("--workflow="):
                name = a.split("=", 1)[1]
            elif a in ("--workflow", "-w") and i + 1 < len(args):
                name = args[i + 1]
    return name if name and _WORKFLOW.fullmatch(name) else None


def _words(text: str) -> list[str]:
    commands = _simple_commands(text)
    return commands[-1][0] if commands else []


def _leaves(words: list[str]) -> bool:
    """A ``cd`` away from the work tree (absolute, home, parent, variable, previous directory): the commands
    after it are not about this checkout's manifests."""
    target = words[1] if len(words) > 1 else "~"
    return words[0] == "cd" and (target.startswith(("/", "~", "$", "-")) or ".." in target)


def _command_citations(words: list[str], text: str) -> Iterator[Citation]:
    head, args = words[0], words[1:]
    if head in ("make", "gmake"):
        for target in _make(args) or []:
            yield Citation("make-target", target, text)
    elif head in ("npm", "pnpm", "yarn", "bun") and (found := _npm(words)):
        yield Citation("npm-script", found[0], text)
    elif head == "mise" and (task := _mise(args)):
        yield Citation("mise-task", task, text)
    elif head == "just" and (recipe := _just(args)):
        yield Citation("just-recipe", recipe, text)
    elif head == "gh" and (workflow := _gh_workflow(args)):
        yield Citation("workflow", workflow, text)


def _code_citations(code: str) -> Iterator[Citation]:
    commands = _simple_commands(code)
    heads = {words[0] for words, _ in commands}
    paths = not ({"cd"} | _URL_COMMANDS) & heads and not any(w[:2] == ["gh", "api"] for w, _ in commands)
    away = False
    for words, text in commands:
        away = away or _leaves(words)
        if not away:
            yield from _command_citations(words, text)
        if paths and words[0] not in _RUNNERS:
            yield from _path_citations(text, True, file_like_only=words[0] in ("git", "gh"))


def _citations(text: str) -> list[Citation]:
    found: dict[tuple[str, str], Citation] = {}
    for span, code in _spans(text):
        for c in _code_citations(span) if code else _path_citations(span, False):
            found.setdefault((c.kind, c.value), c)
    return list(found.values())


def citations(text: str) -> list[Citation]:
    """What a memory's text cites that a checkout can confirm or deny, in order, each (kind, value) once."""
    try:
        return _citations(text) if isinstance(text, str) else []
    except Exception:  # the checker never breaks packet building
        return []


# --------------------------------------------------------------------------------------------- checkout root


def _points_to_git_dir(marker: Path) -> bool:
    """A ``.git`` directory with a HEAD, or a ``.git`` file (linked worktree, submodule) whose
    ``gitdir:`` exists."""
    if marker.is_dir():
        return (marker / "HEAD").is_file()
    if not marker.is_file():
        return False
    target = _gitdir_of_file(marker)
    return target is not None and target.is_dir()


def _gitdir_of_file(marker: Path) -> Path | None:
    m = re.match(r"gitdir:\s*(.+)", marker.read_text(encoding="utf-8", errors="replace")[:4096].strip())
    if not m:
        return None
    target = Path(m.group(1).strip())
    return target if target.is_absolute() else marker.parent / target


def _work_tree_of(cwd: str) -> Path | None:
    try:
        if not cwd:
            return None
        start = Path(cwd).absolute()
        if not start.is_dir():
            return None
        return next((d for d in (start, *start.parents) if _points_to_git_dir(d / ".git")), None)
    except (OSError, ValueError, TypeError):
        return None


def checkout_root(cwds: Iterable[str]) -> Path | None:
    """The work tree of the project on this machine: the top-level directory of the git work tree holding the
    first of ``cwds`` (the directories its sessions ran in) that exists and is inside one (a ``.git``
    directory, or a ``.git`` file for linked worktrees, found by walking up). None when there is none."""
    try:
        for cwd in cwds:
            if isinstance(cwd, str) and (top := _work_tree_of(cwd)) is not None:
                return top
    except Exception:  # a bad iterable is "no checkout", never an error
        return None
    return None


# ------------------------------------------------------------------------------------------------ manifests


def _glob_escape(name: str) -> str:
    return re.sub(r"([*?\[])", r"[\1]", name)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except (OSError, ValueError):
        return None


def _toml(path: Path) -> dict | None:
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


@dataclass
class _Names:
    """The names a set of manifests defines, and whether it was read completely (else misses can't be told)."""

    names: set[str]
    patterns: list[re.Pattern[str]]
    complete: bool = True

    def add(self, other: _Names) -> None:
        self.names |= other.names
        self.patterns += other.patterns
        self.complete = self.complete and other.complete

    def has(self, name: str) -> bool:
        return name in self.names or any(p.fullmatch(name) for p in self.patterns)


def _npm_scripts(path: Path) -> _Names:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return _Names(set(), [], False)
    scripts = data.get("scripts", {}) if isinstance(data, dict) else None
    return _Names(set(scripts), []) if isinstance(scripts, dict) else _Names(set(), [], False)


# Make ----------------------------------------------------------------------------------------------------

_MAKE_VAR = re.compile(r"\$[({]([A-Za-z_][A-Za-z0-9_.-]*)[)}]")
_MAKE_ASSIGN = re.compile(
    r"(?:(?:export|override|private)\s+)*([A-Za-z_][A-Za-z0-9_.-]*)\s*(::?=|:::=|\?=|\+=|!=|=)(.*)"
)
_INCLUDE = re.compile(r"(-?include|sinclude)\s+(.*)")
_MAX_EXPANSIONS = 64


def _logical_lines(text: str) -> list[str]:
    return re.sub(r"\\\n", " ", text).splitlines()


def _expand(value: str, variables: dict[str, set[str] | None], depth: int = 0) -> set[str] | None:
    """Every value a make expression can take from plain variables; None if it uses anything else."""
    m = _MAKE_VAR.search(value)
    if m is None:
        return None if "$" in value.replace("$$", "") else {value}
    options = variables.get(m.group(1))
    if options is None or depth > 10:
        return None
    out: set[str] = set()
    for option in options:
        expanded = _expand(value[: m.start()] + option + value[m.end() :], variables, depth + 1)
        if expanded is None or len(out | expanded) > _MAX_EXPANSIONS:
            return None
        out |= expanded
    return out


def _make_variables(lines: list[str]) -> dict[str, set[str] | None]:
    variables: dict[str, set[str] | None] = {}
    for line in lines:
        m = _MAKE_ASSIGN.fullmatch(line.split("#", 1)[0].strip()) if not line.startswith("\t") else None
        if not m:
            continue
        name, op, value = m.group(1), m.group(2), m.group(3).strip()
        known = variables.get(name, set())
        if op == "!=" or known is None:
            variables[name] = None
        elif op == "+=":
            variables[name] = {f"{k} {value}".strip() for k in known or {""}}
        else:
            variables[name] = known | {value}
    return variables


def _pattern(target: str) -> re.Pattern[str]:
    return re.compile(".+".join(re.escape(part) for part in target.split("%")))


def _rule_targets(line: str) -> tuple[str, str] | None:
    """``(targets, prerequisites)`` of a rule line, None for anything else (assignments, directives)."""
    if line.startswith("\t") or _MAKE_ASSIGN.fullmatch(line.strip()):
        return None
    colon = line.find(":")
    if colon <= 0 or line[colon + 1 : colon + 2] == "=":
        return None
    return line[:colon], line[colon + 1 :].lstrip(":")


def _add_rule(names: _Names, targets: str, prerequisites: str, variables: dict[str, set[str] | None]) -> None:
    words = _expand(targets, variables)
    if words is None:
        names.complete = False
        return
    for word in " ".join(words).split():
        if word in (".DEFAULT", "%"):
            names.patterns.append(re.compile(".*"))
        elif word == ".PHONY":
            names.add(_phony(prerequisites, variables))
        elif "%" in word:
            names.patterns.append(_pattern(word))
        else:
            names.names.add(word)


def _phony(prerequisites: str, variables: dict[str, set[str] | None]) -> _Names:
    words = _expand(prerequisites.split(";", 1)[0], variables)
    return _Names(set(" ".join(words).split()), []) if words is not None else _Names(set(), [], False)


def _make_includes(line: str, base: Path, variables: dict[str, set[str] | None]) -> list[Path] | None:
    m = _INCLUDE.fullmatch(line.split("#", 1)[0].strip())
    if not m:
        return []
    words = _expand(m.group(2), variables)
    if words is None:
        return None
    files: list[Path] = []
    for word in " ".join(words).split():
        matched = sorted(base.glob(word)) if any(c in word for c in "*?[") else [base / word]
        if not matched or not all(p.is_file() for p in matched):
            return None
        files += matched
    return files


def _makefile_names(path: Path, seen: set[Path] | None = None) -> _Names:
    seen = seen if seen is not None else set()
    text = _read(path)
    if text is None or path in seen or len(seen) > 20:
        return _Names(set(), [], path in seen)
    seen.add(path)
    lines = _logical_lines(text)
    dynamic = re.search(r"\$[({]eval\b|^\s*\.(?:-|s)?include\b|^\.RECIPEPREFIX", text, re.MULTILINE)
    variables, names, in_define = _make_variables(lines), _Names(set(), [], not dynamic), False
    for line in lines:
        stripped = line.split("#", 1)[0].rstrip()
        if re.match(r"\s*define\b", stripped) or re.match(r"\s*endef\b", stripped):
            in_define = stripped.lstrip().startswith("define")
            continue
        if in_define or not stripped.strip():
            continue
        includes = _make_includes(stripped, path.parent, variables)
        if includes is None:
            names.complete = False
        for included in includes or []:
            names.add(_makefile_names(included, seen))
        if not includes and (rule := _rule_targets(stripped)):
            _add_rule(names, rule[0], rule[1], variables)
    return names


# just ---------------------------------------------------------------------------------------------------

_JUST_IMPORT = re.compile(r"import(\?)?\s+(['\"])(.+?)\2")
_JUST_MOD = re.compile(r"mod(\?)?\s+([A-Za-z_][A-Za-z0-9_-]*)")
_JUST_ALIAS = re.compile(r"alias\s+([A-Za-z_][A-Za-z0-9_-]*)\s*:=")
_JUST_RECIPE = re.compile(r"@?([A-Za-z_][A-Za-z0-9_-]*).*?:(?!=)")


def _just_line(line: str, base: Path, names: _Names, seen: set[Path]) -> None:
    if m := _JUST_IMPORT.match(line):
        target = base / m.group(3)
        if target.is_file():
            names.add(_justfile_names(target, seen))
        elif not m.group(1):
            names.complete = False
    elif m := _JUST_MOD.match(line):
        names.names.add(m.group(2))
    elif m := _JUST_ALIAS.match(line):
        names.names.add(m.group(1))
    elif re.match(r"set\s+fallback\b(?!\s*:=\s*false)", line):
        names.complete = False
    elif re.match(r"(?:set|export)\s|[A-Za-z_][A-Za-z0-9_-]*\s*:=", line):
        return
    elif m := _JUST_RECIPE.match(line):
        names.names.add(m.group(1))


def _justfile_names(path: Path, seen: set[Path] | None = None) -> _Names:
    seen = seen if seen is not None else set()
    text = _read(path)
    if text is None or path in seen or len(seen) > 20:
        return _Names(set(), [], path in seen)
    seen.add(path)
    names = _Names(set(), [])
    for line in _logical_lines(text):
        if line and line[0] not in " \t#[":
            _just_line(line.rstrip(), path.parent, names, seen)
    return names


# mise ---------------------------------------------------------------------------------------------------

MISE_CONFIGS = (
    "mise.toml",
    ".mise.toml",
    "mise.local.toml",
    ".mise.local.toml",
    "mise/config.toml",
    ".mise/config.toml",
    ".config/mise.toml",
    ".config/mise/config.toml",
)
MISE_CONFIG_GLOBS = ("mise.*.toml", ".mise.*.toml", ".config/mise/conf.d/*.toml")
MISE_TASK_DIRS = ("mise-tasks", ".mise-tasks", "mise/tasks", ".mise/tasks", ".config/mise/tasks")


def _task_names(tasks: object) -> _Names:
    if not isinstance(tasks, dict):
        return _Names(set(), [], tasks is None)
    names = _Names(set(tasks), [])
    for spec in tasks.values():
        alias = spec.get("alias") if isinstance(spec, dict) else None
        names.names |= {alias} if isinstance(alias, str) else {a for a in alias or () if isinstance(a, str)}
    return names


def _file_tasks(directory: Path) -> _Names:
    files, dirs, truncated = _walk(directory, 5_000)
    names = _Names(set(), [], not truncated)
    for path in files + dirs:
        rel = path.relative_to(directory).as_posix()
        names.names |= {rel.replace("/", ":"), rel.rsplit(".", 1)[0].replace("/", ":")}
    return names


def _mise_config_names(path: Path) -> _Names:
    data = _toml(path)
    if data is None:
        return _Names(set(), [], False)
    names = _task_names(data.get("tasks"))
    task_config = data.get("task_config")
    includes = task_config.get("includes", []) if isinstance(task_config, dict) else []
    for include in includes if isinstance(includes, list) else [None]:
        names.add(_mise_include(path.parent, include))
    return names


def _mise_include(base: Path, include: object) -> _Names:
    if not isinstance(include, str) or "://" in include or "::" in include:
        return _Names(set(), [], False)
    target = base / include
    if target.is_dir():
        return _file_tasks(target)
    data = _toml(target) if target.is_file() else None
    return _task_names(data) if data is not None else _Names(set(), [], False)


def _mise_dir_names(directory: Path) -> tuple[_Names, bool]:
    """The tasks the mise configs of one directory define, and whether there was any."""
    names, found = _Names(set(), []), False
    configs = [directory / c for c in MISE_CONFIGS if (directory / c).is_file()]
    configs += [p for g in MISE_CONFIG_GLOBS for p in sorted(directory.glob(g)) if p.is_file()]
    for config in dict.fromkeys(configs):
        names.add(_mise_config_names(config))
        found = True
    for task_dir in MISE_TASK_DIRS:
        if (directory / task_dir).is_dir():
            names.add(_file_tasks(directory / task_dir))
            found = True
    return names, found


def _mise_global_dirs() -> list[Path]:
    dirs = [os.environ.get("MISE_CONFIG_DIR"), os.environ.get("XDG_CONFIG_HOME")]
    out = [Path(dirs[0])] if dirs[0] else []
    out += [Path(dirs[1]) / "mise"] if dirs[1] else []
    with contextlib.suppress(RuntimeError, KeyError, OSError):
        out.append(Path.home() / ".config" / "mise")
    return out + [Path("/etc/mise")]


def _mise_global_names() -> _Names:
    names = _Names(set(), [])
    for directory in _mise_global_dirs():
        for config in ("config.toml", "mise.toml"):
            if (directory / config).is_file():
                names.add(_mise_config_names(directory / config))
        if (directory / "tasks").is_dir():
            names.add(_file_tasks(directory / "tasks"))
    return names


# ------------------------------------------------------------------------------------------------- the tree


def _walk(top: Path, limit: int) -> tuple[list[Path], list[Path], bool]:
    """Files and directories under ``top`` (generated directories pruned, symlinks not followed), and whether
    the walk stopped at ``limit`` entries."""
    files: list[Path] = []
    dirs: list[Path] = []
    errors: list[OSError] = []
    for current, subdirs, names in os.walk(top, onerror=errors.append):
        subdirs[:] = sorted(d for d in subdirs if d not in SKIP_DIRS)
        base = Path(current)
        dirs += [base / d for d in subdirs]
        files += [base / n for n in names]
        if len(files) + len(dirs) > limit:
            return files, dirs, True
    return files, dirs, bool(errors)


def _ignore_patterns(text: str | None) -> list[str]:
    lines = (line.strip() for line in (text or "").splitlines())
    return [line for line in lines if line and not line.startswith(("#", "!"))]


def _ignored(segs: list[str], patterns: list[str]) -> bool:
    """Whether a .gitignore pattern matches the path or one of its ancestors (over-matching is safe: an
    ignored path is only never flagged)."""
    for raw in patterns:
        pattern = raw.strip("/")
        anchored = "/" in pattern and not pattern.startswith("**/")
        pattern = pattern.removeprefix("**/")
        for i in range(1, len(segs) + 1):
            if fnmatch.fnmatchcase("/".join(segs[:i]) if anchored else segs[i - 1], pattern):
                return True
    return False


def _global_ignore() -> Path:
    """git's default global excludes file (``core.excludesFile`` is not read: that would mean running git)."""
    xdg = os.environ.get("XDG_CONFIG_HOME")
    try:
        return Path(xdg) / "git" / "ignore" if xdg else Path.home() / ".config" / "git" / "ignore"
    except (RuntimeError, KeyError, OSError):
        return Path("/nonexistent")


class Checkout:
    """A project's work tree, read lazily and at most once per instance: one per packet build."""

    def __init__(self, root: Path | str) -> None:
        self.root = Path(root)

    @cached_property
    def _top_level(self) -> set[str]:
        try:
            return set(os.listdir(self.root))
        except (OSError, ValueError):
            return set()

    @cached_property
    def _tree(self) -> tuple[set[str], dict[str, list[Path]], bool]:
        """Every indexed relative path (files and directories), files by name, and whether the index is
        complete."""
        files, dirs, truncated = _walk(self.root, MAX_ENTRIES)
        paths = {p.relative_to(self.root).as_posix() for p in files + dirs}
        by_name: dict[str, list[Path]] = {}
        for f in files:
            by_name.setdefault(f.name, []).append(f)
        return paths, by_name, not truncated

    @cached_property
    def _git_dirs(self) -> list[Path]:
        """This work tree's git directory and the common one (they differ for a linked worktree)."""
        marker = self.root / ".git"
        git_dir = marker if marker.is_dir() else _gitdir_of_file(marker) if marker.is_file() else None
        if git_dir is None:
            return []
        common = _read(git_dir / "commondir")
        return [git_dir] + ([git_dir / common.strip()] if common else [])

    @cached_property
    def _ignore(self) -> list[str]:
        texts = [_read(self.root / ".gitignore")] + [_read(d / "info" / "exclude") for d in self._git_dirs]
        texts.append(_read(_global_ignore()))
        return [p for t in texts for p in _ignore_patterns(t)]

    @cached_property
    def _partial_paths(self) -> list[str]:
        """Paths that may be missing from the work tree while present in the repository: submodules, and all
        of it in a sparse checkout."""
        if any((d / "info" / "sparse-checkout").is_file() for d in self._git_dirs):
            return [""]
        modules = _read(self.root / ".gitmodules") or ""
        return [m.strip().strip("/") for m in re.findall(r"^\s*path\s*=\s*(.+)$", modules, re.MULTILINE)]

    def _uncheckable(self, segs: list[str]) -> bool:
        rel = "/".join(segs)
        partial = any(p == "" or rel == p or rel.startswith(p + "/") for p in self._partial_paths)
        return partial or segs[0] in SKIP_DIRS or _ignored(segs, self._ignore)

    # paths ---------------------------------------------------------------------------------------------

    def _relative_to_root(self, value: str) -> str | None:
        """An absolute path inside the root as a relative one ("" for the root itself); None outside it."""
        value = os.path.normpath(value)
        for root in {os.path.normpath(str(self.root)), os.path.normpath(str(self.root.resolve()))}:
            if value == root:
                return ""
            if value.startswith(root.rstrip("/") + "/"):
                return value[len(root.rstrip("/")) + 1 :]
        return None

    def _exists(self, rel: str) -> bool:
        return os.path.lexists(self.root / rel)

    def _found_anywhere(self, rel: str, *, by_name: bool) -> bool:
        paths, names, _ = self._tree
        return bool(names.get(rel)) if by_name else rel in paths or any(p.endswith("/" + rel) for p in paths)

    def _path(self, value: str) -> bool | None:
        """Found anywhere is always safe to say; not found is said only under the rules of the docstring."""
        if value.startswith("/"):
            rel = self._relative_to_root(value)
            if rel is None:
                return None
            if not rel or self._exists(rel):
                return True
            return None if self._uncheckable(rel.split("/")) else False
        segs = value.split("/")
        if self._exists(value) or self._found_anywhere(value, by_name=len(segs) == 1):
            return True
        if (len(segs) > 1 and segs[0] not in self._top_level) or self._uncheckable(segs):
            return None
        return False if self._tree[2] else None

    # commands ------------------------------------------------------------------------------------------

    def _manifests(self, names: Iterable[str]) -> list[Path]:
        found = [self.root / n for n in names if (self.root / n).is_file()]
        found += [p for n in names for p in self._tree[1].get(n, []) if p.parent != self.root]
        return list(dict.fromkeys(found))

    @cached_property
    def _make(self) -> _Names | None:
        makefiles = self._manifests(("GNUmakefile", "makefile", "Makefile"))
        if not makefiles:
            return None
        names = _Names(set(), [], self._tree[2])
        for makefile in makefiles:
            names.add(_makefile_names(makefile))
        return names

    @cached_property
    def _makefile_dirs(self) -> list[Path]:
        return list(dict.fromkeys(p.parent for p in self._manifests(("GNUmakefile", "makefile", "Makefile"))))

    def _make_target(self, target: str) -> bool | None:
        names = self._make
        if names is None:
            return None
        if names.has(target) or any(self._file_target(d, target) for d in self._makefile_dirs):
            return True
        return False if names.complete else None

    @staticmethod
    def _file_target(directory: Path, target: str) -> bool:
        """A file ``target`` (up to date) or ``target.*`` (a built-in implicit rule may make it)."""
        try:
            return os.path.lexists(directory / target) or any(directory.glob(_glob_escape(target) + ".*"))
        except (OSError, ValueError):
            return False

    @cached_property
    def _npm(self) -> _Names | None:
        manifests = self._manifests(("package.json",))
        if not manifests:
            return None
        names = _Names(set(), [], self._tree[2])
        for manifest in manifests:
            names.add(_npm_scripts(manifest))
        return names

    @cached_property
    def _npm_bins(self) -> tuple[set[str], bool]:
        """Binaries of ``node_modules/.bin`` next to any package.json, and whether there is such a directory
        (and no Yarn Plug'n'Play, which has none)."""
        bins: set[str] = set()
        dirs = [p.parent / "node_modules" / ".bin" for p in self._manifests(("package.json",))]
        present = [d for d in dirs if d.is_dir()]
        for d in present:
            try:
                bins |= set(os.listdir(d))
            except OSError:
                return set(), False
        pnp = any((self.root / n).exists() for n in (".pnp.cjs", ".pnp.js"))
        return bins, bool(present) and not pnp

    def _npm_script(self, c: Citation) -> bool | None:
        names = self._npm
        parsed = _npm(_words(c.text))
        if names is None or parsed is None:
            return None
        if names.has(c.value):
            return True
        if not names.complete or parsed[1] == "confirm":
            return None
        if parsed[1] == "binary":
            bins, known = self._npm_bins
            return None if not known or c.value in bins else False
        return False

    @cached_property
    def _mise_dirs(self) -> list[Path]:
        """The root and every directory of the work tree with a mise config."""
        dirs = [self.root]
        for config in MISE_CONFIGS:
            for p in self._tree[1].get(config.rsplit("/", 1)[-1], []):
                if p.as_posix().endswith("/" + config):
                    dirs.append(p.parents[config.count("/")])
        return list(dict.fromkeys(dirs))

    @cached_property
    def _mise(self) -> _Names | None:
        names, found = _Names(set(), [], self._tree[2]), False
        for directory in self._mise_dirs:
            dir_names, dir_found = _mise_dir_names(directory)
            names.add(dir_names)
            found = found or dir_found
        if not found:
            return None
        for parent in self.root.absolute().parents:
            names.add(_mise_dir_names(parent)[0])
        names.add(_mise_global_names())
        return names

    def _mise_task(self, task: str) -> bool | None:
        names = self._mise
        if names is None:
            return None
        if names.has(task):
            return True
        return False if names.complete else None

    @cached_property
    def _just(self) -> _Names | None:
        justfiles = self._manifests(("justfile", "Justfile", ".justfile", "JUSTFILE"))
        if not justfiles:
            return None
        names = _Names(set(), [], self._tree[2])
        for justfile in justfiles:
            names.add(_justfile_names(justfile))
        return names

    def _just_recipe(self, recipe: str) -> bool | None:
        names = self._just
        if names is None:
            return None
        if names.has(recipe.split("::", 1)[0]):
            return True
        return False if names.complete and "::" not in recipe else None

    def _workflow(self, name: str) -> bool | None:
        workflows = self.root / ".github" / "workflows"
        return (workflows / name).is_file() if workflows.is_dir() else None

    # the checker ---------------------------------------------------------------------------------------

    def resolves(self, c: Citation) -> bool | None:
        """True if the citation resolves in this checkout, False if it definitely does not, None when that
        cannot be told."""
        try:
            if not self.root.is_dir():
                return None
            if c.kind == "path":
                return self._path(c.value)
            if c.kind == "make-target":
                return self._make_target(c.value)
            if c.kind == "npm-script":
                return self._npm_script(c)
            if c.kind == "mise-task":
                return self._mise_task(c.value)
            if c.kind == "just-recipe":
                return self._just_recipe(c.value)
            if c.kind == "workflow":
                return self._workflow(c.value)
        except Exception:  # can't check is never stale
            return None
        return None

    def check(self, text: str) -> CheckResult:
        """Check every citation of a memory's text (the whole-memory rules of the module docstring apply)."""
        try:
            return self._check(text)
        except Exception:  # the checker never breaks packet building
            return CheckResult((), 0)

    def _check(self, text: str) -> CheckResult:
        found = citations(text)
        if not found or not self.root.is_dir():
            return CheckResult((), 0)
        rest = _without(text, found)
        absent, branchy = bool(ABSENCE.search(rest)), bool(BRANCHY.search(rest))
        unresolved, checked = [], 0
        for c in found:
            result = self.resolves(c)
            extensionless = c.kind == "path" and not _file_like(c.value.rsplit("/", 1)[-1])
            if result is False and (absent or (branchy and extensionless)):
                result = None
            checked += result is not None
            if result is False:
                unresolved.append(c)
        return CheckResult(tuple(unresolved), checked)


def _without(text: str, found: list[Citation]) -> str:
    """The memory's words around its citations (``scripts/remove_user.sh`` is not about removing)."""
    for c in sorted(found, key=lambda c: -len(c.text)):
        text = text.replace(c.text, " ")
    return text


def check(text: str, root: Path) -> CheckResult:
    """Check a memory's citations against the checkout at ``root`` (one-off: reuse a :class:`Checkout` for
    many memories)."""
    try:
        return Checkout(root).check(text)
    except Exception:  # the checker never breaks packet building
        return CheckResult((), 0)

"""What transcripts say about where sessions ran: cwds, branches, and the directories commands name.

Every turn carries the session's ``cwd`` and, inside a repository, its ``gitBranch``. Bash commands add
directories the session names (``cd DIR``, ``git -C DIR``) and worktrees it creates
(``git worktree add PATH``, relative to the directory the command ran in). Only commands the assistant
*ran* count, never text that quotes one (documentation, a pasted README): a ``git worktree add`` example
in a tool result says nothing about this machine.

The output of a ``git worktree list`` (or ``--porcelain``) the session ran is git's own word on which
checkouts share a repository: the main worktree comes first, its linked worktrees follow. It is often the
only link between worktrees whose directories are gone (another machine's transcripts), so each listed
linked worktree is recorded as a worktree of the main one, the same fact ``git worktree add`` gives
(:attr:`Evidence.worktree_adds`). Conservative by construction: the command must have run exactly one
listing and succeeded, its output must hold exactly one block of listing lines in git's format, every path
must be absolute (``~`` is the home the command ran under, as abbreviating wrappers print it), and the
directory the listing ran in must lie in one of the listed worktrees (otherwise the block is some other
repository's, or not a listing). A result is matched to its command by the tool-use id within the turns
observed together.

:class:`Evidence` is a mergeable summary: merging the evidence of several days in any order gives the
same result (earliest start per session, earliest first sighting, unions of facts).
"""

from __future__ import annotations

import json
import posixpath
import re
import shlex
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from resolver.project import is_home_like

SHELL_TOOLS = frozenset({"Bash", "bash", "BashTool"})
NO_TIME = "9999-12-31T23:59:59.999999Z"  # sorts after every real timestamp
_SEPARATORS = re.compile(r"&&|\|\||;|\n|\|")
_GIT_VALUE_OPTIONS = frozenset({"-c", "--git-dir", "--work-tree", "--namespace", "--exec-path"})
_ADD_VALUE_OPTIONS = frozenset({"-b", "-B", "--reason", "--orphan"})
MAX_COMMAND_CHARS = 20_000
MAX_LISTING_CHARS = 200_000
# `git worktree list`: "<path> <sha> [branch]" or "(detached HEAD)", "<path> (bare)", then optional flags;
# `-v` puts "locked: …" / "prunable: …" on indented lines of their own.
_LIST_LINE = re.compile(
    r"^(?P<path>\S.*?)\s+(?:[0-9a-f]{7,64}\s+(?:\[[^\]]*\]|\(detached HEAD\))|(?P<bare>\(bare\)))"
    r"(?:\s+(?:locked|prunable)\b.*)?$"
)
_LIST_NOTE = re.compile(r"^\s+(?:locked|prunable)\b")
_PORCELAIN_ATTR = re.compile(r"^(?:HEAD [0-9a-f]{7,64}|branch \S.*|bare|detached|locked(?: .*)?|prunable(?: .*)?)$")


@dataclass
class SessionStart:
    folder: str
    start_cwd: str | None
    started_at: str


@dataclass
class PathFacts:
    as_cwd: bool
    has_branch: bool
    first_seen: str
    last_seen: str


@dataclass
class Evidence:
    """What a set of turns says about places; see the module doc."""

    sessions: dict[str, SessionStart] = field(default_factory=dict)
    paths: dict[str, PathFacts] = field(default_factory=dict)
    session_paths: set[tuple[str, str]] = field(default_factory=set)
    worktree_adds: dict[tuple[str, str], str] = field(default_factory=dict)  # (base cwd, path) -> first seen

    def see_path(self, path: str, when: str, *, as_cwd: bool, has_branch: bool, session: str | None) -> None:
        facts = self.paths.get(path)
        if facts is None:
            self.paths[path] = PathFacts(as_cwd, has_branch, when, when)
        else:
            facts.as_cwd |= as_cwd
            facts.has_branch |= has_branch
            facts.first_seen = min(facts.first_seen, when)
            facts.last_seen = max(facts.last_seen, when) if when != NO_TIME else facts.last_seen
        if session:
            self.session_paths.add((session, path))

    def see_start(self, session: str, folder: str, cwd: str | None, when: str) -> None:
        known = self.sessions.get(session)
        if known is None or (when, cwd is None, cwd or "") < (
            known.started_at,
            known.start_cwd is None,
            known.start_cwd or "",
        ):
            self.sessions[session] = SessionStart(folder, cwd, when)

    def see_worktree_add(self, base: str, path: str, when: str) -> None:
        key = (base, path)
        self.worktree_adds[key] = min(self.worktree_adds.get(key, when), when)

    def merge(self, other: Evidence) -> None:
        for session, start in other.sessions.items():
            self.see_start(session, start.folder, start.start_cwd, start.started_at)
        for path, facts in other.paths.items():
            self.see_path(path, facts.first_seen, as_cwd=facts.as_cwd, has_branch=facts.has_branch, session=None)
            self.paths[path].last_seen = max(self.paths[path].last_seen, facts.last_seen)
        self.session_paths |= other.session_paths
        for (base, path), when in other.worktree_adds.items():
            self.see_worktree_add(base, path, when)

    def __bool__(self) -> bool:
        return bool(self.sessions or self.paths)


def clean_dir(path: str | None) -> str | None:
    """An absolute, normalised directory path (POSIX, no trailing slash), or None for anything else."""
    if not isinstance(path, str) or not path.startswith("/") or "\0" in path:
        return None
    return posixpath.normpath(path)


def from_turns(turns: Iterable[Any]) -> Evidence:
    """Evidence from parsed turns (``session_id``, ``project_id``, ``cwd``, ``git_branch``, ``timestamp``,
    ``is_sidechain``, ``tool_uses``). A session starts at its earliest main-thread turn; a session seen only
    through a subagent file starts at that file's earliest turn."""
    ev = Evidence()
    side_starts = Evidence()
    listings: dict[str, tuple[str, str]] = {}  # tool-use id -> (directory a `git worktree list` ran in, when)
    results: dict[str, Any] = {}
    for turn in turns:
        cwd = clean_dir(turn.cwd)
        when = turn.timestamp or NO_TIME
        session = turn.session_id or None
        if cwd is not None:
            ev.see_path(cwd, when, as_cwd=True, has_branch=bool(turn.git_branch), session=session)
        if session:
            (side_starts if turn.is_sidechain else ev).see_start(session, turn.project_id, cwd, when)
        if cwd is not None:
            for tool in turn.tool_uses:
                if tool.name in SHELL_TOOLS:
                    listed = _from_command(ev, _command_of(tool.input_json), cwd, when, session)
                    tool_id = getattr(tool, "id", "")
                    if listed is not None and tool_id:
                        listings[tool_id] = (listed, when)
        for result in getattr(turn, "tool_results", ()):
            results.setdefault(result.tool_use_id, result)
    for tool_id, (here, when) in sorted(listings.items()):
        result = results.get(tool_id)
        if result is None or result.is_error or result.interrupted:
            continue
        listed = worktree_listing(result.text[:MAX_LISTING_CHARS], here)
        if listed is not None:
            main, linked = listed
            for path in linked:
                ev.see_worktree_add(main, path, when)
    for session, start in side_starts.sessions.items():
        if session not in ev.sessions:
            ev.sessions[session] = start
    return ev


def _command_of(input_json: str) -> str:
    try:
        args = json.loads(input_json or "{}")
    except ValueError:
        return ""
    command = args.get("command") if isinstance(args, dict) else None
    return command[:MAX_COMMAND_CHARS] if isinstance(command, str) else ""


def _from_command(ev: Evidence, command: str, cwd: str, when: str, session: str | None) -> str | None:
    """Directories a shell command names and worktrees it adds, tracking ``cd`` from segment to segment.
    Returns the directory its ``git worktree list`` ran in when it ran exactly one (two listings in one
    output could not be told apart)."""
    here = cwd
    listed: list[str] = []
    for segment in _SEPARATORS.split(command):
        try:
            words = shlex.split(segment, comments=True)
        except ValueError:
            continue
        if not words:
            continue
        if words[0] == "cd" and len(words) >= 2:
            target = _resolve(here, words[1])
            if target is not None:
                here = target
                ev.see_path(target, when, as_cwd=False, has_branch=False, session=session)
            continue
        if words[0] == "git":
            where = _from_git(ev, words[1:], here, when, session)
            if where is not None:
                listed.append(where)
    return listed[0] if len(listed) == 1 else None


def _from_git(ev: Evidence, args: list[str], here: str, when: str, session: str | None) -> str | None:
    """Record what a ``git`` command names; the directory it ran in when it is ``git worktree list``."""
    i = 0
    while i < len(args) and args[i].startswith("-"):
        if args[i] == "-C" and i + 1 < len(args):
            target = _resolve(here, args[i + 1])
            if target is None:
                return None
            here = target
            ev.see_path(target, when, as_cwd=False, has_branch=False, session=session)
            i += 2
            continue
        i += 2 if args[i] in _GIT_VALUE_OPTIONS else 1
    if args[i : i + 2] == ["worktree", "list"]:
        return here
    if args[i : i + 2] != ["worktree", "add"]:
        return None
    rest = args[i + 2 :]
    j = 0
    while j < len(rest):
        word = rest[j]
        if word == "--":
            j += 1
            break
        if not word.startswith("-"):
            break
        j += 2 if word in _ADD_VALUE_OPTIONS else 1
    if j < len(rest):
        target = _resolve(here, rest[j])
        if target is not None and target != here:
            ev.see_worktree_add(here, target, when)
    return None


def _resolve(here: str, word: str) -> str | None:
    """``word`` as a directory relative to ``here``; None for what a transcript cannot resolve (``~``, ``$VAR``,
    globs, placeholders)."""
    if not word or word[0] in "~-" or any(c in word for c in "$`*?<>{}"):
        return None
    return clean_dir(word if word.startswith("/") else posixpath.join(here, word))


def worktree_listing(text: str, here: str) -> tuple[str, list[str]] | None:
    """(main checkout, linked worktrees) from the output of a ``git worktree list`` run in ``here``, or None
    when the output is not exactly one such listing naming ``here`` (module doc). A bare main repository
    names the project like :func:`resolver.project.read_repository` does (``/srv/shop.git`` → ``/srv/shop``)."""
    blocks = _listing_blocks(text)
    if len(blocks) != 1 or len(blocks[0]) < 2:
        return None
    home = _home_of(here)
    paths: list[str] = []
    for raw, _bare in blocks[0]:
        if raw == "~" or raw.startswith("~/"):
            if home is None:
                return None
            raw = home + raw[1:]
        path = clean_dir(raw)
        if path is None or is_home_like(path):
            return None
        paths.append(path)
    if not any(here == p or here.startswith(p.rstrip("/") + "/") for p in paths):
        return None
    main = paths[0]
    if blocks[0][0][1]:
        main = posixpath.dirname(main) if posixpath.basename(main) == ".git" else main.removesuffix(".git")
    linked = sorted({p for p in paths[1:] if p != main and p != paths[0]})
    return (main, linked) if linked and not is_home_like(main) else None


def _listing_blocks(text: str) -> list[list[tuple[str, bool]]]:
    """Runs of consecutive listing lines (human or porcelain format, ``-z`` too) as [(path, bare)]."""
    blocks: list[list[tuple[str, bool]]] = []
    kind = None  # the format of the run being read, None between runs
    for raw in text.replace("\0", "\n").splitlines():
        line = raw.rstrip()
        if line.startswith("worktree ") and line[9:].strip():
            if kind != "porcelain":
                blocks.append([])
                kind = "porcelain"
            blocks[-1].append((line[9:], False))
            continue
        if kind == "porcelain" and (not line or _PORCELAIN_ATTR.match(line)):
            if line == "bare":
                blocks[-1][-1] = (blocks[-1][-1][0], True)
            continue
        match = _LIST_LINE.match(line)
        if match is not None:
            if kind != "human":
                blocks.append([])
                kind = "human"
            blocks[-1].append((match.group("path").rstrip(), match.group("bare") is not None))
            continue
        if kind == "human" and _LIST_NOTE.match(raw):
            continue
        kind = None
    return blocks


def _home_of(path: str) -> str | None:
    """The home directory ``path`` lies in (``/home/<user>``, ``/Users/<user>``, ``/root``), else None."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] in ("home", "Users") and parts[2]:
        return "/".join(parts[:3])
    return "/root" if len(parts) >= 2 and parts[1] == "root" else None

"""Decide each place's canonical project from the evidence (pure: files are read, no process is run).

For every directory a session ran in, the *key* is the main checkout of its repository, from the first
rule that applies:

1. ``git`` — the directory exists (or existed when last probed): its ``.git`` files name the main checkout
   (:func:`resolver.project.read_repository`; a linked worktree's ``gitdir`` → ``commondir``);
2. ``worktree-path`` — a conventional worktree layout names it (``<repo>-worktrees/<name>``,
   ``<repo>.worktrees/<name>``, ``<repo>/.worktrees/<name>``, ``<repo>/.claude/worktrees/<name>``);
3. ``worktree-add`` — a session ran ``git worktree add`` creating this directory (or one above it), or a
   ``git worktree list`` a session ran listed it as a linked worktree of the main one (git's own word);
4. ``worktree-layout`` — it fits the layout the linked worktrees of one repository showed (see below);
5. ``worktree-path`` — the worktree managers' layout ``<dir>/worktrees/<repo>/<name>/<repo>`` (the
   repository's name repeated around the worktree's): the main checkout is ``<dir>/<repo>``;
6. ``named-checkout`` — it sits in ``<dir>/worktrees/<name>`` and ``<dir>`` is a directory sessions ran in
   or named (``cd``, ``git -C``);
7. ``subdirectory`` — it lies below the directory its session started in, or below a directory sessions
   ran in, both inside a repository (a ``gitBranch`` recorded) or both outside one;
8. otherwise the directory is its own key (``branch`` when inside some repository, else ``folder``).

A layout (rule 4) is learned from two linked worktrees of one main checkout (listed or added) whose paths
differ in exactly one segment: ``<prefix>/<name>/<suffix>``. Tools that create worktrees put every new one
there, and a listing only shows those still present when it ran, so a gone directory of another session
that fits it (same prefix, any one segment, same suffix, or below such a directory) is one more worktree
of that repository. To never join two repositories, a layout counts only when its prefix or suffix names
the repository (a segment equal to the main checkout's name, or that name followed by ``-``, ``.`` or
``_``: ``~/wt/app/<name>/app``, ``app-worktrees/<name>``), never a shared folder such as ``~/wt/<name>``;
its prefix is never a home directory; and a directory that fits the layouts of two repositories joins
neither.

Home directories, ``/`` and temp roots are never keys for other directories. Keys that share a normalised
remote URL are one repository; the one seen first names it. The project id is the key's Claude Code
encoding (:func:`resolver.project.project_id_from_cwd`), so a repository's project is named after its
main checkout, whichever worktree its sessions ran in.

Sessions map to the project of the directory they started in; a Claude Code folder to the project of the
directory it encodes (else of most of its sessions).
"""

from __future__ import annotations

import os
import re
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from itertools import combinations

from nous_assets.capture.metadata import redact_meta
from nous_assets.identity.evidence import NO_TIME, Evidence
from resolver.project import (
    is_home_like,
    managed_worktree_main,
    project_id_from_cwd,
    read_repository,
    worktree_main,
)


@dataclass(frozen=True)
class GitFacts:
    """What a directory's ``.git`` files said: its main checkout and normalised remote."""

    main: str
    remote: str | None


Probe = Callable[[str], tuple[bool, GitFacts | None]]
"""(directory exists, its git facts or None)."""

MAIN_CHECKOUT = "main-checkout"
_GENERIC_WORKTREES = re.compile(r"^(?P<main>/.+?)/worktrees/[^/]+(?:/.*)?$")

Layout = tuple[tuple[str, ...], tuple[str, ...]]  # (prefix segments, suffix segments) around the varying one


def probe_disk(path: str) -> tuple[bool, GitFacts | None]:
    """Read ``path``'s repository from the file system (no subprocess). The main checkout and remote are
    given as every path is stored (:func:`~nous_assets.capture.metadata.redact_meta`): they become aliases.
    A stored path whose token was redacted names no directory here, so it is resolved by the other rules."""
    if not os.path.isdir(path):
        return False, None
    repo = read_repository(path)
    if repo is None:
        return True, None
    remote = redact_meta(repo.remote, path=True) if repo.remote else None
    return True, GitFacts(redact_meta(repo.main, path=True), remote)


@dataclass
class Resolution:
    """``aliases[(kind, alias)] = (project_id, evidence)`` for kinds cwd, remote, session and folder; ``git``
    holds the facts of every directory probed on disk this time (None: it exists and is no repository)."""

    aliases: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    git: dict[str, GitFacts | None] = field(default_factory=dict)

    def project(self, kind: str, alias: str) -> str | None:
        hit = self.aliases.get((kind, alias))
        return hit[0] if hit else None


class _Resolver:
    def __init__(self, ev: Evidence, stored: dict[str, GitFacts], probe: Probe) -> None:
        self.ev, self.stored, self.probe = ev, stored, probe
        self.fresh: dict[str, GitFacts | None] = {}
        self.keys: dict[str, tuple[str, str]] = {}
        self.adds = sorted(((path, base) for base, path in ev.worktree_adds), key=lambda a: (-len(a[0]), a))
        self.layouts = learn_layouts(ev.worktree_adds)
        self.sessions_of: dict[str, set[str]] = defaultdict(set)
        for session, path in ev.session_paths:
            self.sessions_of[path].add(session)

    def git(self, path: str) -> GitFacts | None:
        if path not in self.fresh:
            exists, facts = self.probe(path)
            if not exists:
                return self.stored.get(path)
            self.fresh[path] = facts
        return self.fresh[path]

    def has_branch(self, path: str) -> bool:
        facts = self.ev.paths.get(path)
        return bool(facts and facts.has_branch) or self.git(path) is not None

    def key(self, path: str, visiting: frozenset[str] = frozenset()) -> tuple[str, str]:
        """(main checkout path, rule) of ``path``; see the module doc."""
        if path in self.keys:
            return self.keys[path]
        if path in visiting:
            return path, "folder"
        visiting = visiting | {path}
        decided = self._decide(path, visiting)
        self.keys[path] = decided
        return decided

    def _decide(self, path: str, visiting: frozenset[str]) -> tuple[str, str]:
        facts = self.git(path)
        if facts is not None:
            return facts.main, "git"
        rules: tuple[tuple[str, Callable[[], str | None]], ...] = (
            ("worktree-path", lambda: worktree_main(path)),
            ("worktree-add", lambda: self._added_from(path)),
            ("worktree-layout", lambda: self._fits_layout(path, visiting)),
            ("worktree-path", lambda: managed_worktree_main(path)),
            ("named-checkout", lambda: self._named_checkout(path)),
            ("subdirectory", lambda: self._enclosing(path)),
        )
        for rule, find in rules:
            other = find()
            if other is not None and other != path:
                return self.key(other, visiting)[0], rule
        return path, "branch" if self.has_branch(path) else "folder"

    def _fits_layout(self, path: str, visiting: frozenset[str]) -> str | None:
        """The main checkout whose learned layout ``path`` fits, when every fitting layout is one repository's."""
        parts = tuple(path.split("/"))
        mains = sorted({main for layout, main in self.layouts if fits(parts, layout)})
        if not mains or path in mains:
            return None
        keys = {self.key(main, visiting)[0] for main in mains}
        return mains[0] if len(keys) == 1 else None

    def _added_from(self, path: str) -> str | None:
        for target, base in self.adds:
            if path == target or path.startswith(target + "/"):
                return base
        return None

    def _named_checkout(self, path: str) -> str | None:
        match = _GENERIC_WORKTREES.match(path)
        main = match.group("main") if match else None
        if main is None or is_home_like(main) or main not in self.ev.paths:
            return None
        return main

    def _enclosing(self, path: str) -> str | None:
        """The deepest directory above ``path`` that its session started in, else that sessions ran in, on the
        same side of a repository boundary (see the module doc)."""
        inside = self.has_branch(path)
        starts = {self.ev.sessions[s].start_cwd for s in self.sessions_of.get(path, ()) if s in self.ev.sessions}
        below, above = path, os.path.dirname(path)
        while above != below and not is_home_like(above):
            facts = self.ev.paths.get(above)
            if above in starts and self.has_branch(above) == inside:
                return above
            if facts is not None and facts.as_cwd and inside and self.has_branch(above):
                return above
            below, above = above, os.path.dirname(above)
        return None


def learn_layouts(worktree_adds: dict[tuple[str, str], str]) -> list[tuple[Layout, str]]:
    """(layout, main checkout) for every pair of linked worktrees of one main checkout whose paths differ in
    exactly one segment, when the layout names the repository and its prefix is no home (module doc)."""
    linked: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    for base, path in worktree_adds:
        linked[base].add(tuple(path.split("/")))
    out: set[tuple[Layout, str]] = set()
    for main, paths in linked.items():
        for a, b in combinations(sorted(paths), 2):
            if len(a) != len(b):
                continue
            differ = [i for i, (x, y) in enumerate(zip(a, b, strict=True)) if x != y]
            if len(differ) != 1:
                continue
            prefix, suffix = a[: differ[0]], a[differ[0] + 1 :]
            if len(prefix) > 1 and not is_home_like("/".join(prefix)) and _names_repository(main, prefix, suffix):
                out.add(((prefix, suffix), main))
    return sorted(out)


def _names_repository(main: str, prefix: tuple[str, ...], suffix: tuple[str, ...]) -> bool:
    """Whether a segment of the layout below the main checkout's parent directory is the main checkout's name,
    or that name followed by ``-``, ``.`` or ``_`` (``app-worktrees``): folders above it (``/home/u/code``)
    say nothing about the repository."""
    name = os.path.basename(main)
    if not name:
        return False
    above = tuple(os.path.dirname(main).split("/"))
    shared = 0
    while shared < min(len(above), len(prefix)) and above[shared] == prefix[shared]:
        shared += 1
    return any(
        seg == name or (seg.startswith(name) and seg[len(name) : len(name) + 1] in ("-", ".", "_"))
        for seg in prefix[shared:] + suffix
    )


def fits(parts: tuple[str, ...], layout: Layout) -> bool:
    """Whether a path (split on ``/``) is ``<prefix>/<any one segment>/<suffix>`` or lies below one."""
    prefix, suffix = layout
    n = len(prefix)
    return len(parts) > n + len(suffix) and parts[:n] == prefix and parts[n + 1 : n + 1 + len(suffix)] == suffix


def resolve(ev: Evidence, stored: dict[str, GitFacts] | None = None, probe: Probe = probe_disk) -> Resolution:
    """Every cwd, main checkout, remote, session and folder of ``ev`` mapped to its project (module doc).

    ``stored`` holds the git facts of directories probed earlier (used when a directory is gone).
    """
    r = _Resolver(ev, stored or {}, probe)
    cwds = sorted(p for p, f in ev.paths.items() if f.as_cwd)
    keyed = {p: r.key(p) for p in cwds}
    canonical = _canonical_keys(ev, r, keyed)
    out = Resolution(git=dict(r.fresh))

    def project_of(key: str) -> str:
        return project_id_from_cwd(canonical.get(key, key))

    for path, (key, rule) in keyed.items():
        out.aliases[("cwd", path)] = (project_of(key), rule)
    for key in sorted({k for k, _ in keyed.values()} - set(keyed)):
        if not is_home_like(key):
            out.aliases[("cwd", key)] = (project_of(key), MAIN_CHECKOUT)
    for path in cwds:
        facts = r.git(path)
        if facts is not None and facts.remote:
            out.aliases.setdefault(("remote", facts.remote), (project_of(keyed[path][0]), "remote"))
    by_folder: dict[str, Counter] = defaultdict(Counter)
    for session, start in sorted(ev.sessions.items()):
        if start.start_cwd is not None and start.start_cwd in keyed:
            project = project_of(keyed[start.start_cwd][0])
            out.aliases[("session", session)] = (project, "start-cwd")
            by_folder[start.folder][project] += 1
    for folder, counts in sorted(by_folder.items()):
        named = [p for p in cwds if project_id_from_cwd(p) == folder]
        if named:
            path = max(named, key=lambda p: (len(r.sessions_of.get(p, ())), p))
            out.aliases[("folder", folder)] = (project_of(keyed[path][0]), "folder-cwd")
        else:
            project = min(counts, key=lambda p: (-counts[p], p))
            out.aliases[("folder", folder)] = (project, "folder-sessions")
    return out


def _canonical_keys(ev: Evidence, r: _Resolver, keyed: dict[str, tuple[str, str]]) -> dict[str, str]:
    """Keys sharing a remote URL -> the one seen first (then the shortest path, then by name)."""
    first_seen: dict[str, str] = {}
    remote_of: dict[str, str] = {}
    for path, (key, _rule) in keyed.items():
        first_seen[key] = min(first_seen.get(key, NO_TIME), ev.paths[path].first_seen)
        facts = r.git(path)
        if facts is not None and facts.remote and facts.main == key:
            remote_of.setdefault(key, facts.remote)
    groups: dict[str, list[str]] = defaultdict(list)
    for key, remote in remote_of.items():
        groups[remote].append(key)
    canonical: dict[str, str] = {}
    for keys in groups.values():
        chosen = min(keys, key=lambda k: (first_seen.get(k, NO_TIME), len(k), k))
        canonical.update({k: chosen for k in keys})
    return canonical

"""Decide each place's canonical project from the evidence (pure: files are read, no process is run).

For every directory a session ran in, the *key* is the main checkout of its repository, from the first
rule that applies:

1. ``git`` — the directory exists (or existed when last probed): its ``.git`` files name the main checkout
   (:func:`resolver.project.read_repository`; a linked worktree's ``gitdir`` → ``commondir``);
2. ``worktree-path`` — a conventional worktree layout names it (``<repo>-worktrees/<name>``,
   ``<repo>.worktrees/<name>``, ``<repo>/.worktrees/<name>``, ``<repo>/.claude/worktrees/<name>``);
3. ``worktree-add`` — a session ran ``git worktree add`` creating this directory (or one above it);
4. ``named-checkout`` — it sits in ``<dir>/worktrees/<name>`` and ``<dir>`` is a directory sessions ran in
   or named (``cd``, ``git -C``);
5. ``subdirectory`` — it lies below the directory its session started in, or below a directory sessions
   ran in, both inside a repository (a ``gitBranch`` recorded) or both outside one;
6. otherwise the directory is its own key (``branch`` when inside some repository, else ``folder``).

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

from nous_assets.identity.evidence import NO_TIME, Evidence
from resolver.project import is_home_like, project_id_from_cwd, read_repository, worktree_main


@dataclass(frozen=True)
class GitFacts:
    """What a directory's ``.git`` files said: its main checkout and normalised remote."""

    main: str
    remote: str | None


Probe = Callable[[str], tuple[bool, GitFacts | None]]
"""(directory exists, its git facts or None)."""

MAIN_CHECKOUT = "main-checkout"
_GENERIC_WORKTREES = re.compile(r"^(?P<main>/.+?)/worktrees/[^/]+(?:/.*)?$")


def probe_disk(path: str) -> tuple[bool, GitFacts | None]:
    """Read ``path``'s repository from the file system (no subprocess)."""
    if not os.path.isdir(path):
        return False, None
    repo = read_repository(path)
    return True, (GitFacts(repo.main, repo.remote) if repo is not None else None)


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
        for rule, other in (
            ("worktree-path", worktree_main(path)),
            ("worktree-add", self._added_from(path)),
            ("named-checkout", self._named_checkout(path)),
            ("subdirectory", self._enclosing(path)),
        ):
            if other is not None and other != path:
                return self.key(other, visiting)[0], rule
        return path, "branch" if self.has_branch(path) else "folder"

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

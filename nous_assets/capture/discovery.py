"""Find Claude Code transcript files on disk and say what each one is.

Claude Code writes one JSONL file per session under ``projects/<encoded cwd>/``. Subagents get their own
files, in two layouts:

* current:  ``<project>/<session>/subagents/agent-<agentId>.jsonl`` (the parent session is the folder name);
* legacy (<= 2.0.x): ``<project>/agent-<agentId>.jsonl`` beside the session file (the parent session id is
  only known from the records' ``sessionId``).

A glob over ``projects/**/*.jsonl`` also matches files that are not transcripts (hook logs, tool exports),
so every candidate is sniffed before it is offered to the parser; rejects are reported, never silently
dropped, so a user can tell why a file was not ingested.

The pattern is expanded by walking the tree ourselves rather than with ``glob``, which follows
symlinked folders without remembering where it has been: a link such as ``projects/a -> .`` made it
run forever. The walk follows links but enters each real directory (``st_dev``, ``st_ino``) once,
by the path with the fewest symlinks, and a file reachable under several names is offered once;
links that lead back into their own ancestry and paths that repeat are counted and reported.
Matching keeps glob's rules: ``**`` spans any number of folders, ``*``/``?``/``[…]`` stay within one
name, and wildcards do not match names starting with ``.``.
"""

from __future__ import annotations

import glob
import heapq
import json
import logging
import os
import stat
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Literal

from resolver.project import project_id_from_folder

__all__ = [
    "KNOWN_RECORD_TYPES",
    "DiscoveryResult",
    "SkippedFile",
    "TranscriptFile",
    "discover",
    "glob_root",
    "sniff",
]

TranscriptKind = Literal["session", "subagent", "legacy_subagent"]

#: Record ``type`` values Claude Code is known to write; used only to recognise transcripts.
KNOWN_RECORD_TYPES: frozenset[str] = frozenset(
    {
        "user",
        "assistant",
        "system",
        "summary",
        "file-history-snapshot",
        "queue-operation",
        "progress",
        "attachment",
        "agent-setting",
        "pr-link",
        "ai-title",
        "custom-title",
        "tag",
        "last-prompt",
    }
)

log = logging.getLogger(__name__)

UNKNOWN_PROJECT = "unknown-project"
_GLOB_CHARS = frozenset("*?[")
_SNIFF_LINES = 5
_AGENT_PREFIX = "agent-"


@dataclass(frozen=True, slots=True)
class TranscriptFile:
    """One transcript file and the identity derived from its place on disk."""

    path: Path
    project_id: str
    session_id: str
    agent_id: str | None
    kind: TranscriptKind
    parent_session_id: str | None


@dataclass(frozen=True, slots=True)
class SkippedFile:
    """A file the pattern matched but that will not be parsed, with the reason why."""

    path: Path
    reason: str


@dataclass(frozen=True, slots=True)
class DiscoveryResult:
    files: list[TranscriptFile] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    root: Path | None = None
    loops: list[Path] = field(default_factory=list)  # symlinked folders leading back to one of their parents
    duplicates: list[Path] = field(default_factory=list)  # folders and files already reached by another path

    def summary(self) -> str | None:
        """One line about loops and repeated paths, or None when the walk met none."""
        if not self.loops and not self.duplicates:
            return None
        parts = []
        if self.loops:
            parts.append(f"{len(self.loops)} symlink loop(s) not followed (e.g. {self.loops[0]})")
        if self.duplicates:
            parts.append(f"{len(self.duplicates)} path(s) reached twice read once (e.g. {self.duplicates[0]})")
        return f"transcript discovery under {self.root}: " + "; ".join(parts)


@dataclass(frozen=True, slots=True)
class _Sniff:
    is_transcript: bool
    session_id: str | None
    reason: str | None


def glob_root(pattern: str) -> Path:
    """The non-glob prefix of ``pattern``: the folder whose children are project folders."""
    expanded = os.path.expanduser(os.path.expandvars(pattern))
    parts = Path(expanded).parts
    root_parts: list[str] = []
    for part in parts:
        if any(ch in _GLOB_CHARS for ch in part):
            break
        root_parts.append(part)
    if len(root_parts) == len(parts):  # no glob at all: the pattern names one file
        root_parts = root_parts[:-1]
    return Path(*root_parts) if root_parts else Path(".")


def _is_record(obj: object) -> bool:
    if not isinstance(obj, dict):
        return False
    rtype = obj.get("type")
    if isinstance(rtype, str) and rtype in KNOWN_RECORD_TYPES:
        return True
    return "sessionId" in obj or "uuid" in obj


def sniff(path: Path, max_lines: int = _SNIFF_LINES, *, want_session_id: bool = False) -> _Sniff:
    """Look at the first non-empty lines to decide whether ``path`` is a Claude Code transcript.

    With ``want_session_id`` (legacy subagent files, whose parent is known only from the records) it keeps
    reading, up to ``20 * max_lines`` lines, until a ``sessionId`` turns up. Raises ``OSError`` if unreadable.
    """
    seen_any = False
    is_transcript = False
    session_id: str | None = None
    checked = 0
    limit = max_lines * 20 if want_session_id else max_lines
    with open(path, "rb") as fh:
        for raw in fh:
            if not raw.strip():
                continue
            seen_any = True
            checked += 1
            try:
                obj = json.loads(raw)
            except ValueError:
                obj = None
            if _is_record(obj):
                is_transcript = True
                sid = obj.get("sessionId")  # type: ignore[union-attr]
                if session_id is None and isinstance(sid, str) and sid:
                    session_id = sid
            if checked >= limit:
                break
            if checked >= max_lines and (not want_session_id or session_id is not None or not is_transcript):
                break
    if not seen_any:
        return _Sniff(False, None, "empty")
    if not is_transcript:
        return _Sniff(False, None, "not a Claude Code transcript")
    return _Sniff(True, session_id, None)


def _classify(path: Path, root: Path, sniffed: _Sniff) -> TranscriptFile:
    try:
        rel_parts = path.relative_to(root).parts
    except ValueError:
        rel_parts = (path.name,)
    project_id = project_id_from_folder(rel_parts[0]) if len(rel_parts) >= 2 else UNKNOWN_PROJECT
    stem = path.stem
    parent = path.parent
    if stem.startswith(_AGENT_PREFIX) and parent.name == "subagents" and len(rel_parts) >= 3:
        session_id = parent.parent.name
        return TranscriptFile(
            path, project_id, session_id, stem[len(_AGENT_PREFIX) :], "subagent", session_id
        )
    if stem.startswith(_AGENT_PREFIX):
        parent_sid = sniffed.session_id
        return TranscriptFile(
            path, project_id, parent_sid or stem, stem[len(_AGENT_PREFIX) :], "legacy_subagent", parent_sid
        )
    return TranscriptFile(path, project_id, stem, None, "session", None)


def _pattern_segments(expanded: str, root: Path) -> list[str]:
    parts = Path(expanded).parts
    return list(parts[len(root.parts) :]) if root != Path(".") else list(parts)


class _Matcher:
    """The pattern below its root as a small NFA over path names: a state is an index into the segments."""

    def __init__(self, segments: list[str]) -> None:
        self.segments = segments
        self.end = len(segments)
        self.start = self._closure({0})

    def _closure(self, states: set[int]) -> frozenset[int]:
        todo = list(states)
        while todo:  # "**" may match no folder at all
            p = todo.pop()
            if p < self.end and self.segments[p] == "**" and p + 1 not in states:
                states.add(p + 1)
                todo.append(p + 1)
        return frozenset(states)

    def step(self, states: frozenset[int], name: str) -> frozenset[int]:
        out: set[int] = set()
        hidden = name.startswith(".")
        for p in states:
            if p == self.end:
                continue
            seg = self.segments[p]
            if seg == "**":
                if not hidden:
                    out.add(p)
            elif not glob.has_magic(seg):
                if name == seg:
                    out.add(p + 1)
            elif (not hidden or seg.startswith(".")) and fnmatchcase(name, seg):
                out.add(p + 1)
        return self._closure(out)

    def accepts(self, states: frozenset[int]) -> bool:
        return self.end in states

    def can_descend(self, states: frozenset[int]) -> bool:
        return any(p < self.end for p in states)


@dataclass(order=True)
class _Dir:
    links: int  # symlinks followed to get here: the real path is preferred
    key: str
    path: Path = field(compare=False)
    ident: tuple[int, int] = field(compare=False)
    states: frozenset[int] = field(compare=False)
    ancestors: frozenset[tuple[int, int]] = field(compare=False)


def walk(pattern: str) -> tuple[list[Path], list[Path], list[Path]]:
    """Paths of the regular files ``pattern`` matches, each real file once: (files, loops, duplicates)."""
    expanded = os.path.expanduser(os.path.expandvars(pattern))
    root = glob_root(pattern)
    matcher = _Matcher(_pattern_segments(expanded, root))
    try:
        st = os.stat(root)
    except OSError:
        return [], [], []
    if not stat.S_ISDIR(st.st_mode):
        return [], [], []
    ident = (st.st_dev, st.st_ino)
    heap = [_Dir(0, str(root), root, ident, matcher.start, frozenset({ident}))]
    visited: set[tuple[tuple[int, int], frozenset[int]]] = set()
    found: dict[tuple[int, int], tuple[int, str, Path]] = {}
    loops: list[Path] = []
    duplicates: list[Path] = []
    while heap:
        d = heapq.heappop(heap)
        if (d.ident, d.states) in visited:
            duplicates.append(d.path)
            continue
        visited.add((d.ident, d.states))
        try:
            with os.scandir(d.path) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError:
            continue  # unreadable folder: nothing in it can be ingested (as with glob)
        for e in entries:
            states = matcher.step(d.states, e.name)
            if not states:
                continue
            path = d.path / e.name
            try:
                link = e.is_symlink()
                est = os.stat(path) if link else e.stat()
            except OSError:
                continue  # broken link or vanished entry
            links = d.links + link
            if stat.S_ISDIR(est.st_mode):
                if not matcher.can_descend(states):
                    continue
                sub = (est.st_dev, est.st_ino)
                if sub in d.ancestors:
                    loops.append(path)
                    continue
                heapq.heappush(heap, _Dir(links, str(path), path, sub, states, d.ancestors | {sub}))
            elif stat.S_ISREG(est.st_mode) and matcher.accepts(states):
                candidate = (links, str(path), path)
                fid = (est.st_dev, est.st_ino)
                have = found.get(fid)
                if have is None:
                    found[fid] = candidate
                else:
                    duplicates.append(max(have, candidate)[2])
                    found[fid] = min(have, candidate)
    return sorted(p for _, _, p in found.values()), loops, duplicates


def discover(pattern: str) -> DiscoveryResult:
    """Expand ``pattern`` (recursive ``**``, ``~`` and ``$VARS`` allowed) into classified transcript files.

    ``project_id`` is the first folder below the pattern's non-glob root (Claude Code's encoded cwd), with any
    token in it redacted (:func:`resolver.project.project_id_from_folder`: the id is what gets stored, the
    path keeps the real name for reading); files directly in the root get ``"unknown-project"``. Results are
    sorted by path so runs are stable.
    """
    root = glob_root(pattern)
    files: list[TranscriptFile] = []
    skipped: list[SkippedFile] = []
    paths, loops, duplicates = walk(pattern)
    for path in paths:
        try:
            sniffed = sniff(path, want_session_id=path.stem.startswith(_AGENT_PREFIX))
        except OSError as exc:
            skipped.append(SkippedFile(path, f"{type(exc).__name__}: {exc.strerror or exc}"))
            continue
        if not sniffed.is_transcript:
            skipped.append(SkippedFile(path, sniffed.reason or "not a Claude Code transcript"))
            continue
        files.append(_classify(path, root, sniffed))
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    result = DiscoveryResult(files=files, skipped=skipped, root=root, loops=loops, duplicates=duplicates)
    _report(result)
    return result


_reported: set[str] = set()


def _report(result: DiscoveryResult) -> None:
    """Warn once per process about loops and repeated paths (discovery runs for every day scanned)."""
    line = result.summary()
    if line and line not in _reported:
        _reported.add(line)
        log.warning(line)

"""Find Claude Code transcript files on disk and say what each one is.

Claude Code writes one JSONL file per session under ``projects/<encoded cwd>/``. Subagents get their own
files, in two layouts:

* current:  ``<project>/<session>/subagents/agent-<agentId>.jsonl`` (the parent session is the folder name);
* legacy (<= 2.0.x): ``<project>/agent-<agentId>.jsonl`` beside the session file (the parent session id is
  only known from the records' ``sessionId``).

A glob over ``projects/**/*.jsonl`` also matches files that are not transcripts (hook logs, tool exports),
so every candidate is sniffed before it is offered to the parser; rejects are reported, never silently
dropped, so a user can tell why a file was not ingested.
"""

from __future__ import annotations

import glob
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

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
    project_id = rel_parts[0] if len(rel_parts) >= 2 else UNKNOWN_PROJECT
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


def discover(pattern: str) -> DiscoveryResult:
    """Expand ``pattern`` (recursive ``**``, ``~`` and ``$VARS`` allowed) into classified transcript files.

    ``project_id`` is the first folder below the pattern's non-glob root (Claude Code's encoded cwd);
    files directly in the root get ``"unknown-project"``. Results are sorted by path so runs are stable.
    """
    expanded = os.path.expanduser(os.path.expandvars(pattern))
    root = glob_root(pattern)
    files: list[TranscriptFile] = []
    skipped: list[SkippedFile] = []
    for name in sorted(set(glob.glob(expanded, recursive=True))):
        path = Path(name)
        if not path.is_file():
            continue
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
    return DiscoveryResult(files=files, skipped=skipped, root=root)

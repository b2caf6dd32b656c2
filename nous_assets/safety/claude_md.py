"""A suggested ``CLAUDE.md`` addition (spec gap G6): what a project keeps re-learning belongs in its instructions.

The same editor extends Claude Code's auto-memory ``MEMORY.md`` (``nous review claude-md --target memory``), with
only as many bullets as keep the file within what Claude Code loads of it (:func:`within_memory_cap`).

Memories of one project that recur in ``claude_md_min_sessions`` or more sessions are proposed as bullets
under one heading (:data:`HEADING`), shown as a unified diff against the project's ``CLAUDE.md``; the file
is written only when the user asks (``nous review claude-md --apply``), as an editor people trust would: through
a symlink to its target (the link stays a link), keeping the file's line endings and byte-order mark, refusing a
read-only file, with a backup of the old text next to it, atomically (a temporary file in the same directory,
then a rename). CLAUDE.md is read as instructions, so a memory the packet guard has anything to say about — held,
or only a warning ("never … `curl | sh`"), since a negation does not make the command in it safe — is never
proposed; text passes the redactor; and a bullet whose words the file already holds is left out, so a second
run proposes nothing new.
"""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from nous_assets.capture.redact import redact
from nous_assets.safety.guard import classify, normalize
from nous_assets.store.db import Connection
from nous_assets.store.reads import observations

HEADING = "## Learned across sessions (suggested by Nous)"
MAX_BULLET = 300
ALREADY_SAID = 0.75  # share of a bullet's words a line of the file already holds: it says the same thing
_WORD = re.compile(r"[a-z0-9]+")


@dataclass(frozen=True)
class Suggestion:
    memory_id: int
    kind: str | None
    sessions: int
    bullet: str


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _bullet(content: str, sessions: list[tuple[str, str]]) -> str:
    text = " ".join(redact(normalize(content)).split())
    text = text if len(text) <= MAX_BULLET else text[: MAX_BULLET - 1].rstrip() + "…"
    days = sorted(d for _, d in sessions if d)
    span = f", {days[0]} to {days[-1]}" if days else ""
    return f"- {text} (learned in {len(sessions)} sessions{span})"


def _already_said(bullet: str, lines: list[frozenset[str]]) -> bool:
    words = _words(bullet.split(" (learned in ")[0])
    return bool(words) and any(len(words & line) >= ALREADY_SAID * len(words) for line in lines)


def suggestions(conn: Connection, project_id: str, existing: str, *, min_sessions: int) -> list[Suggestion]:
    """The bullets to propose for ``project_id``: recurring, not held by the guard, not in ``existing``."""
    lines = [_words(line) for line in existing.splitlines() if line.strip()]
    out = []
    for m in observations.learned_memories(conn):
        if m.project_id != project_id or m.scope != "project" or len(m.sessions) < max(1, min_sessions):
            continue
        if classify(m.content).findings:  # held or a warning: not an instruction to write down
            continue
        bullet = _bullet(m.content, m.sessions)
        if _already_said(bullet, lines):
            continue
        out.append(Suggestion(m.memory_id, m.kind, len(m.sessions), bullet))
        lines.append(_words(bullet))
    return sorted(out, key=lambda s: (-s.sessions, s.memory_id))


def patched(existing: str, bullets: list[str]) -> str:
    """``existing`` with ``bullets`` added under :data:`HEADING` (appended when the heading is not there yet)."""
    if not bullets:
        return existing
    lines = existing.splitlines()
    if HEADING in lines:
        start = lines.index(HEADING)
        end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("#")), len(lines))
        while end > start + 1 and not lines[end - 1].strip():
            end -= 1
        new_lines = lines[:end] + bullets + lines[end:]
    else:
        new_lines = lines + ([""] if lines and lines[-1].strip() else []) + [HEADING, ""] + bullets
    return "\n".join(new_lines) + "\n"


def within_memory_cap(existing: str, found: list[Suggestion]) -> tuple[list[Suggestion], int]:
    """The suggestions that fit in what Claude Code loads of an auto-memory ``MEMORY.md`` (its first 200 lines or
    25,000 bytes: :mod:`nous_assets.capture.native_memory`), best first; and how many did not fit."""
    from nous_assets.capture.native_memory import MEMORY_MAX_BYTES, MEMORY_MAX_LINES

    kept: list[Suggestion] = []
    for suggestion in found:
        text = patched(existing, [s.bullet for s in [*kept, suggestion]])
        if len(text.splitlines()) <= MEMORY_MAX_LINES and len(text.encode("utf-8")) <= MEMORY_MAX_BYTES:
            kept.append(suggestion)
    return kept, len(found) - len(kept)


def unified_diff(path: Path, old: str, new: str) -> str:
    """The change as a patch ``git apply`` / ``patch -p1`` understands (paths relative to the checkout)."""
    name = path.name
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))  # fmt: skip


@dataclass(frozen=True)
class Existing:
    """A CLAUDE.md as found: where its bytes live (a symlink's target), its text, and how it was written."""

    target: Path
    text: str = ""
    newline: str = "\n"
    bom: bool = False
    mode: int = 0o644
    exists: bool = False


class ReadOnlyError(OSError):
    """The file is not writable by its owner (0444): the user made it so, and it is not ours to change."""


def read_existing(path: Path) -> Existing:
    """The file behind ``path`` (following symlinks), with its line ending and BOM (missing: an empty new file)."""
    target = path.resolve() if path.is_symlink() else path
    if not target.exists():
        return Existing(target)
    raw = target.read_bytes()
    bom = raw.startswith(b"\xef\xbb\xbf")
    text = raw[3 if bom else 0 :].decode("utf-8")
    newline = "\r\n" if "\r\n" in text else "\n"
    return Existing(target, text.replace("\r\n", "\n"), newline, bom, target.stat().st_mode & 0o777, True)


def write_preserving(found: Existing, text: str) -> Path | None:
    """Write ``text`` (``\n`` line ends) over ``found.target`` as it was written (its line ending, BOM and mode),
    keeping the old bytes in a ``.nous-backup`` file first; returns the backup's path (None for a new file).
    A file its owner cannot write is refused (:class:`ReadOnlyError`), whoever runs this (root included)."""
    target = found.target
    if found.exists and not found.mode & 0o200:
        raise ReadOnlyError(f"{target} is read-only (mode {found.mode:04o}); nothing written")
    data = ((b"\xef\xbb\xbf" if found.bom else b"") + text.replace("\n", found.newline).encode("utf-8"))
    backup = None
    if found.exists:
        backup = target.with_name(target.name + ".nous-backup")
        _replace(backup, target.read_bytes(), found.mode)
    _replace(target, data, found.mode)
    return backup


def _replace(path: Path, data: bytes, mode: int) -> None:
    """Replace ``path`` with ``data`` in one rename (a crash leaves the old file or the new, never half)."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

"""A suggested ``CLAUDE.md`` addition (spec gap G6): what a project keeps re-learning belongs in its instructions.

Memories of one project that recur in ``claude_md_min_sessions`` or more sessions are proposed as bullets
under one heading (:data:`HEADING`), shown as a unified diff against the project's ``CLAUDE.md``; the file
is written only when the user asks (``nous review claude-md --apply``), atomically (a temporary file in the
same directory, then a rename). Memories the packet guard would hold are never proposed, text passes the
redactor, and a bullet whose words the file already holds is left out, so a second run proposes nothing new.
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
from nous_assets.store import observations
from nous_assets.store.db import Connection

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
        if classify(m.content).held:
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


def unified_diff(path: Path, old: str, new: str) -> str:
    """The change as a patch ``git apply`` / ``patch -p1`` understands (paths relative to the checkout)."""
    name = path.name
    return "".join(difflib.unified_diff(old.splitlines(keepends=True), new.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))  # fmt: skip


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one rename (a crash leaves the old file or the new, never half)."""
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise

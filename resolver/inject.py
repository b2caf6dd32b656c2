"""What a SessionStart injects, by Claude Code's ``source`` (standard library only; reads, never writes).

One function decides the text for the hook and for ``nous packet`` alike: :func:`select` (and its text,
:func:`context_for`) takes the hook's input dict and the database path and returns what the hook prints as
``additionalContext``; the hook then records the memories it carried in the access log.

What each source gets (Claude Code's SessionStart ``source``; anything else, a missing or non-string value
included, is read as ``startup``):

``startup`` and ``clear``
    The full packet: a new conversation, or one whose context was just wiped.
``resume``
    Only the packet's memory lines not yet injected into this session (the access log records what was, per
    session): the header, then the new lines under their section headings; nothing when every line is already
    there (the resumed transcript carries the earlier packet). A session with nothing in the access log (started
    before Nous, or its hook failed open) gets the full packet. Interventions come with new lines only.
``compact``
    The rules again: the project brief, how to work with this user, workflow and quality gates, gotchas, and the
    interventions and notes; compaction summarises the conversation and loses them. Decisions, configuration
    and the footer are left to recall.
``fork``
    Like ``resume`` of the parent when the input names it (a ``parent_session_id``-like field, or the
    ``forkedFrom.sessionId`` Claude Code writes into the forked transcript's first records), else the full
    packet. Claude Code 2.1.330 still drops ``additionalContext`` on fork (#93458); the hook says it anyway.

Bullets are matched to memories by order: ``format_packet`` writes one line per memory, the memory sections'
bullets in the order of the row's ``memory_ids``. When a row's text does not match its ids (an older or
hand-made row), ``resume``/``fork`` fall back to all or nothing (nothing when every id was injected) and
``compact`` keeps its sections but records no memory.

The input is read defensively: unknown fields are ignored, a field of the wrong type is treated as absent.
"""

from __future__ import annotations

import os
import stat

from resolver import cache_read as cache
from resolver import fingerprint, hook_io

SOURCES = ("startup", "resume", "clear", "compact", "fork")  # fork: Claude Code 2.1.214+
FULL_SOURCES = frozenset({"startup", "clear"})
SINCE_SOURCES = frozenset({"resume", "fork"})
COMPACT_SECTIONS = frozenset({"Project brief", "How to work with this user", "Workflow and quality gates", "Gotchas"})
NOTE_SECTIONS = frozenset({"Interventions", "Notes"})  # observer notes: no memory id behind their lines
PARENT_FIELDS = ("parent_session_id", "forked_from_session_id", "forkedFromSessionId", "fork_parent_session_id")
TRANSCRIPT_HEAD_BYTES = 64 * 1024  # enough for the first records of a forked transcript
RESUME_NOTE = "_Resumed session: only what is new since this session's last Nous packet._"
COMPACT_NOTE = "_After compaction: the project brief, working rules, quality gates and gotchas again._"


class Injection:
    """What the hook injects: ``text`` (capped; '' for nothing) and the memories it carries (to log)."""

    __slots__ = ("text", "memory_ids", "source", "mode", "session_id", "prior_sessions", "project_id", "cache_key",
                 "scope", "row_project_id", "fingerprint")  # fmt: skip

    def __init__(self, text: str, memory_ids: list[int], source: str, mode: str, session_id: str,
                 prior_sessions: tuple[str, ...], project_id: str, cache_key: str | None, scope: str,
                 row_project_id: str, fingerprint: dict) -> None:  # fmt: skip
        self.text = text
        self.memory_ids = memory_ids
        self.source = source
        self.mode = mode  # full | since (new lines only) | rules (compact) | none
        self.session_id = session_id
        self.prior_sessions = prior_sessions  # sessions whose injections count as already seen
        self.project_id = project_id  # the session's project (the access log's), whatever row was chosen
        self.cache_key = cache_key  # the injection_cache row (None: interventions alone)
        self.scope = scope  # the row's: project | global | interventions
        self.row_project_id = row_project_id  # the row's project ('*' for a global row)
        self.fingerprint = fingerprint

    def __repr__(self) -> str:
        return f"Injection(source={self.source!r}, mode={self.mode!r}, chars={len(self.text)}, ids={self.memory_ids})"


def read_source(payload) -> str:
    """The payload's ``source`` when it is one Claude Code documents, else ``startup``."""
    source = hook_io.payload_str(payload, "source", "startup")
    return source if source in SOURCES else "startup"


def context_for(payload: dict, db_path) -> str:
    """The ``additionalContext`` the SessionStart hook prints for ``payload`` now ('' for none); logs nothing."""
    found = select(payload, db_path)
    return found.text if found is not None else ""


def select(payload: dict, db_path) -> Injection | None:
    """The injection for a SessionStart ``payload`` (see the module doc), or None when there is no packet.

    Reads only; raises ``sqlite3.Error``/``OSError`` on a missing or locked database (the hook fails open).
    """
    payload = payload if isinstance(payload, dict) else {}
    source = read_source(payload)
    session_id = hook_io.payload_str(payload, "session_id")
    # the payload's cwd names the project even when it is not a directory here (moved, remote, deleted);
    # only a missing cwd falls back to ours
    cwd = hook_io.payload_str(payload, "cwd") or os.getcwd()
    fp = fingerprint.build_fingerprint(cwd)
    packet = cache.best_packet(db_path, fp, source, session_id=session_id or None)
    if packet is None:
        return None
    text, ids, mode = packet.text, list(packet.memory_ids), "full"
    prior: tuple[str, ...] = ()
    if source == "compact":
        text, ids, mode = _rules_only(text, ids), _compact_ids(text, ids), "rules"
    elif source in SINCE_SOURCES:
        prior = _prior_sessions(payload, source, session_id)
        seen = cache.injected_ids(db_path, prior) if prior else set()
        if seen:
            text, ids = _since(text, ids, seen)
            mode = "since" if text else "none"
    text = hook_io.cap_context(text) if text.strip() else ""
    if not text:
        ids, mode = [], "none"
    project_id = str(fp.get("project_id") or "")
    return Injection(text, ids, source, mode, session_id, prior, project_id, packet.cache_key, packet.scope,
                     packet.project_id, fp)  # fmt: skip


# ##### PARENTS


def _prior_sessions(payload: dict, source: str, session_id: str) -> tuple[str, ...]:
    """The sessions whose injections this one already holds: itself, and for a fork (or a resume that Claude Code
    gave a new id) the session it continues, from the input or the transcript's first records."""
    found = [session_id] if session_id else []
    for key in PARENT_FIELDS:
        value = hook_io.payload_str(payload, key)
        if value and value not in found:
            found.append(value)
    forked = payload.get("forkedFrom")
    if isinstance(forked, dict) and isinstance(forked.get("sessionId"), str) and forked["sessionId"] not in found:
        found.append(forked["sessionId"])
    if source == "fork" and len(found) <= 1:  # a resume keeps its id (2.1.330): its transcript adds nothing
        parent = _transcript_parent(hook_io.payload_str(payload, "transcript_path"), session_id)
        if parent and parent not in found:
            found.append(parent)
    return tuple(found)


def _transcript_parent(path: str, session_id: str) -> str:
    """The session a transcript continues: the first record's ``forkedFrom.sessionId``, else the first
    ``requestSessionId`` or ``sessionId`` other than this session's among its first records (a copied history);
    '' when unknown. Reads at most 64 KiB of a regular file."""
    if not path or not path.endswith(".jsonl"):
        return ""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO or device would block the read
            return ""
        with open(path, "rb") as handle:
            head = handle.read(TRANSCRIPT_HEAD_BYTES)
    except OSError:
        return ""
    other = ""
    for raw in head.split(b"\n")[:-1] if len(head) == TRANSCRIPT_HEAD_BYTES else head.split(b"\n"):
        if b"essionId" not in raw:
            continue
        try:
            record = hook_io.loads(raw.decode("utf-8", errors="replace"))
        except ValueError:
            continue
        if not isinstance(record, dict):
            continue
        forked = record.get("forkedFrom")
        if isinstance(forked, dict) and isinstance(forked.get("sessionId"), str) and forked["sessionId"]:
            return forked["sessionId"]
        for key in ("requestSessionId", "sessionId"):
            sid = record.get(key)
            if not other and isinstance(sid, str) and sid and sid != session_id:
                other = sid
    return other


# ##### LINES


def _parse(text: str, ids: list[int]) -> list[tuple[str, str | None, int | None]] | None:
    """Each line with its section title (None before the first heading) and its memory id (bullets of the memory
    sections, in order); None when the bullets do not match ``ids`` one to one."""
    out: list[tuple[str, str | None, int | None]] = []
    section: str | None = None
    queue = iter(ids)
    count = 0
    for line in text.split("\n"):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            out.append((line, section, None))
        elif line.startswith("**"):  # the packet's header (after a prepended Interventions section)
            section = None
            out.append((line, section, None))
        elif section is not None and section not in NOTE_SECTIONS and line.startswith("- "):
            count += 1
            out.append((line, section, next(queue, None)))
        else:
            out.append((line, section, None))
    return out if count == len(ids) else None


def _is_footer(line: str, section: str | None) -> bool:
    return section is not None and section not in NOTE_SECTIONS and line.startswith("_") and line.endswith("_")


def _assemble(parsed, keep_bullet, keep_section, note: str) -> str:
    """The packet's lines with only the kept bullets (a memory heading only over a kept bullet), notes kept."""
    out: list[str] = []
    pending: str | None = None  # a memory section's heading, written with its first kept bullet
    for line, section, memory_id in parsed:
        if line.startswith("#"):
            pending = None
            if section in NOTE_SECTIONS or section is None:
                out.append(line)
            elif keep_section(section):
                pending = line
            continue
        if section is None or section in NOTE_SECTIONS:
            out.append(line)
            if section is None and line.startswith("**") and note:  # the header: say what this packet is
                out.append(note)
            continue
        if _is_footer(line, section) or not line.startswith("- ") or not keep_section(section):
            continue
        if keep_bullet(memory_id):
            if pending is not None:
                out.append(pending)
                pending = None
            out.append(line)
    return "\n".join(out).strip()


def _memory_lines(text: str) -> bool:
    return any(line.startswith("- ") for line in text.split("\n"))


def _rules_only(text: str, ids: list[int]) -> str:
    """The compact packet: the rule sections and the notes (see the module doc)."""
    parsed = _parse(text, ids)
    if parsed is None:  # bullets unmatched to ids: still keep by section
        parsed = [(line, sec, None) for line, sec, _ in _parse(text, [0] * _bullets(text)) or []]
    kept = _assemble(parsed, lambda _id: True, lambda s: s in COMPACT_SECTIONS, COMPACT_NOTE)
    has_rules = any(sec in COMPACT_SECTIONS and line.startswith("- ") for line, sec, _ in parsed)
    has_notes = any(sec in NOTE_SECTIONS and line.startswith("- ") for line, sec, _ in parsed)
    return kept if has_rules or has_notes else ""


def _compact_ids(text: str, ids: list[int]) -> list[int]:
    parsed = _parse(text, ids)
    if parsed is None:
        return []
    return [i for _, sec, i in parsed if i is not None and sec in COMPACT_SECTIONS]


def _bullets(text: str) -> int:
    section: str | None = None
    count = 0
    for line in text.split("\n"):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
        elif line.startswith("**"):
            section = None
        elif section is not None and section not in NOTE_SECTIONS and line.startswith("- "):
            count += 1
    return count


def _since(text: str, ids: list[int], seen: set[int]) -> tuple[str, list[int]]:
    """The packet without the memory lines already injected (see the module doc); ('', []) when none is new."""
    new = [i for i in ids if i not in seen]
    if not new:
        return "", []
    parsed = _parse(text, ids)
    if parsed is None:  # cannot tell the lines apart: all of it, since something is new
        return text, ids
    kept = _assemble(parsed, lambda memory_id: memory_id not in seen, lambda _s: True, RESUME_NOTE)
    return (kept, new) if _memory_lines(kept) else ("", [])

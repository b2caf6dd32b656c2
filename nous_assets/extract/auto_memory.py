"""Claude Code's auto-memory notes as a source: each note of ``<config>/projects/<folder>/memory/*.md`` becomes a
learning of that folder's project, with its provenance (the file and line), so ``nous search`` and MCP ``recall``
find it, ``nous review`` lists it, and a packet can carry a topic file's note (``MEMORY.md``'s own lines load in
every session already, so the packet build leaves those out: :mod:`nous_assets.retrieve.native`).

Run by the ``learning_events`` asset, once per run, after the transcripts' extraction: the same step, the same
run source (``fs_watch``/``fs_reconcile``/``historical_backfill``), and the same rules as any other text — the
capture redactor before anything is stored, the packet guard wherever a memory leaves (packets, MCP, search).

Idempotent: a note's idempotency key is its project, file name and (redacted) words, so re-reading an unchanged
file writes nothing, and moving a line within the file neither. An edited file supersedes: a note the file no
longer holds is closed — ``LearningSuperseded`` by the new note that rewords it (the closest new note of the same
file sharing at least half its words) or ``LearningArchived`` (reason: removed from the file); a file deleted
closes all of its notes. A note the user rejected stays rejected even if the file still says it. Nothing is read
when auto-memory is off (``CLAUDE_CODE_DISABLE_AUTO_MEMORY``, ``autoMemoryEnabled: false`` in the user's
settings).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from nous_assets.capture.native_memory import MAX_FILE_BYTES, auto_memory, statements_of
from nous_assets.capture.redact import redact_text
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.ids import learning_id_for
from nous_assets.reconcile.relearn import jaccard, signature
from nous_assets.status import STATED
from nous_assets.store import meta
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import native_notes
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso
from resolver.project import project_id_from_folder, redact_name

EXTRACTOR_VERSION = "claude-auto-memory-1"
MAX_FILES_PER_FOLDER = 200
MAX_NOTE_CHARS = 2000
STATE_KEY = "auto_memory_files"  # the memory files' state the last ingestion read (the watch sensor compares it)
REWORDED = 0.5  # a new note sharing half the words of a removed one rewords it: it supersedes
# A topic file's front matter ``type`` (Claude Code's memory types) -> the packet section's kind.
KIND_OF_TYPE = {"user": "preference", "feedback": "preference", "project": "decision", "reference": "architecture"}
DEFAULT_KIND = "convention"


@dataclass
class IngestStats:
    files: int = 0
    notes: int = 0
    added: int = 0
    superseded: int = 0
    archived: int = 0
    skipped: str = ""  # why nothing was read (auto-memory off), else empty
    errors: list[str] = field(default_factory=list)


def _front_matter_type(text: str) -> str | None:
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---":
        return None
    for line in lines[1:40]:
        if line.strip() == "---":
            return None
        key, _, value = line.partition(":")
        if key.strip() == "type":
            return value.strip().strip("'\"").lower() or None
    return None


def notes_of(path: Path, text: str) -> list[tuple[int, str]]:
    """(line, text) of each note: one per prose line (headings, front matter and code left out)."""
    out: dict[int, str] = {}
    for statement in statements_of(path, text):
        out.setdefault(statement.line, statement.text)  # the whole line, not its sentences
    return [(line, note[:MAX_NOTE_CHARS]) for line, note in out.items() if len(note.split()) >= 2]


def memory_folders(config_dir: Path) -> list[tuple[str, Path]]:
    """(Claude Code project folder, its ``memory`` folder) for every project with one."""
    projects = config_dir / "projects"
    try:
        return sorted((p.parent.name, p) for p in projects.glob("*/memory") if p.is_dir())
    except OSError:
        return []


def _session_id(folder: str, name: str) -> str:
    return f"{native_notes.PREFIX}{redact_name(folder)}/{redact_name(name)}"


def _day(path: Path) -> str:
    try:
        stamp = path.stat().st_mtime
    except OSError:
        return now_iso()
    return datetime.fromtimestamp(stamp, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def _read(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        return path.read_bytes().decode("utf-8", "replace").removeprefix("\ufeff")
    except OSError:
        return None


def _close(store: SqliteEventStore, session: str, project: str, source: str, lid: str, why: str, by: str | None) -> str:
    """Close a note the file no longer holds: superseded by ``by`` (a rewording) or archived."""
    if by is not None:
        event = LearningEvent("LearningSuperseded", lid, {"superseded_by": by, "reason": why}, session, project,
                              source, f"claude-memory-superseded:{lid}:{by}", valid_from=now_iso())  # fmt: skip
    else:
        event = LearningEvent("LearningArchived", lid, {"reason": why}, session, project, source,
                              f"claude-memory-removed:{lid}", valid_from=now_iso())  # fmt: skip
    store.append(event)
    return "superseded" if by is not None else "archived"


def _ingest_file(conn: Connection, store: SqliteEventStore, folder: str, path: Path | None, name: str, source: str,
                 stats: IngestStats) -> None:  # fmt: skip
    """One file's notes in, the notes it no longer holds closed (``path`` None: the file is gone)."""
    project = project_id_from_folder(folder)
    session = _session_id(folder, name)
    text = _read(path) if path is not None else ""
    if text is None:
        return  # unreadable or oversize now: leave what was ingested as it was
    kind = KIND_OF_TYPE.get(_front_matter_type(text) or "", DEFAULT_KIND)
    valid_from = _day(path) if path is not None else now_iso()
    display = redact_name(str(path)) if path is not None else name
    live = dict(native_notes.live_notes(conn, session))
    seen: set[str] = set()
    new: list[tuple[str, frozenset[str]]] = []
    for line, note in notes_of(path or Path(name), text):
        content = redact_text(note).text
        key = "claude-memory:" + hashlib.sha256(f"{project}\0{name}\0{content}".encode()).hexdigest()
        lid = learning_id_for(key)
        seen.add(lid)
        stats.notes += 1
        concepts = extract_concepts(content)
        payload = {
            "content": content, "extractor_version": EXTRACTOR_VERSION, "concepts": concepts, "edges": [],
            "type": "learning", "kind": kind, "domain": infer_domain(content, concepts), "scope": "project",
            "temporal_confidence": "high", "status": STATED,
            "provenance": {"source": "claude auto-memory", "file": display, "line": line},
        }  # fmt: skip
        result = store.append(LearningEvent("LearningExtracted", lid, payload, session, project, source, key,
                                            valid_from=valid_from))  # fmt: skip
        if result.created:
            stats.added += 1
            new.append((lid, signature(content)))
    for lid, content in live.items():
        if lid in seen:
            continue
        words = signature(content)
        best = max(new, key=lambda n: jaccard(words, n[1]), default=None)
        by = best[0] if best is not None and jaccard(words, best[1]) >= REWORDED else None
        what = _close(store, session, project, source, lid, f"no longer in Claude Code's auto-memory file {name}", by)
        setattr(stats, what, getattr(stats, what) + 1)


def ingest_auto_memory(
    conn: Connection, config_dir: Path, *, source: str, env: Mapping[str, str]
) -> IngestStats:
    """Every project's auto-memory notes in (see the module doc); one transaction per file."""
    stats = IngestStats()
    status = auto_memory(None, config_dir=config_dir, env=env)
    if not status.enabled:
        stats.skipped = status.why
        return stats
    store = SqliteEventStore(conn)
    state = files_state(config_dir)  # before reading: a note written meanwhile shows as a change next time
    present: set[str] = set()
    for folder, memory in memory_folders(config_dir):
        try:
            files = sorted(p for p in memory.glob("*.md") if p.is_file())[:MAX_FILES_PER_FOLDER]
        except OSError as exc:
            stats.errors.append(f"{memory}: {exc}")
            continue
        for path in files:
            present.add(_session_id(folder, path.name))
            stats.files += 1
            with atomic(conn):
                _ingest_file(conn, store, folder, path, path.name, source, stats)
    for session in native_notes.note_files(conn):  # a file that is gone: its notes are closed
        if session in present:
            continue
        folder, _, name = session.removeprefix(native_notes.PREFIX).partition("/")
        if memory_folders_has(config_dir, folder):
            with atomic(conn):
                _ingest_file(conn, store, folder, None, name, source, stats)
    with atomic(conn):
        meta.put(conn, STATE_KEY, state)
    return stats


def files_state(config_dir: Path) -> str:
    """A digest of every auto-memory file's path, size and mtime: it changes when Claude Code writes a note."""
    states = []
    for folder, memory in memory_folders(config_dir):
        try:
            for path in sorted(memory.glob("*.md"))[:MAX_FILES_PER_FOLDER]:
                st = path.stat()
                states.append(f"{folder}/{path.name}|{st.st_size}|{st.st_mtime_ns}")
        except OSError:
            continue
    return hashlib.sha256("\n".join(states).encode()).hexdigest()[:16]


def changed_since_ingest(conn: Connection, config_dir: Path) -> str | None:
    """The files' state when it differs from what the last ingestion read (None: nothing new). Lets the watch
    sensor start a run for a note Claude Code wrote with no transcript line to go with it."""
    state = files_state(config_dir)
    before = meta.get(conn, STATE_KEY) or hashlib.sha256(b"").hexdigest()[:16]  # never ingested: as if no files
    return None if state == before else state


def memory_folders_has(config_dir: Path, folder: str) -> bool:
    """Whether the project's memory folder is still there: a file deleted from it closes its notes, but a whole
    project folder gone (Claude Code's cleanup, a moved config dir) says nothing about what the notes meant."""
    return (config_dir / "projects" / folder / "memory").is_dir()

"""The notes Nous ingested from Claude Code's auto-memory files (``extract/auto_memory.py``).

Each file's notes are ``LearningExtracted`` events whose ``session_id`` names the file
(``claude-memory:<folder>/<file>``); a note is live while no ``LearningSuperseded`` or ``LearningArchived``
event closed it. Read here so the ingestion can tell which notes an edited file no longer holds, and so
``nous review`` can list what came from auto-memory.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.db import Connection

PREFIX = "claude-memory:"


def live_notes(conn: Connection, session_id: str) -> list[tuple[str, str]]:
    """(learning id, content) of the file's notes no later event closed, oldest first."""
    rows = conn.execute(
        "SELECT e.learning_id, json_extract(e.payload_json, '$.content') FROM learning_events e "
        "WHERE e.session_id = ? AND e.event_type = 'LearningExtracted' AND NOT EXISTS ("
        "  SELECT 1 FROM learning_events x WHERE x.learning_id = e.learning_id "
        "  AND x.event_type IN ('LearningSuperseded', 'LearningArchived')) ORDER BY e.event_id",
        (session_id,),
    ).fetchall()
    return [(r[0], r[1] or "") for r in rows]


def note_files(conn: Connection) -> list[str]:
    """Every ``session_id`` auto-memory notes were ingested under (one per file)."""
    rows = conn.execute(
        "SELECT DISTINCT session_id FROM learning_events WHERE event_type = 'LearningExtracted' "
        "AND substr(session_id, 1, ?) = ?",
        (len(PREFIX), PREFIX),
    ).fetchall()
    return sorted(r[0] for r in rows)


@dataclass(frozen=True)
class Note:
    memory_id: int
    project_id: str
    kind: str | None
    content: str
    file: str
    line: int | None
    recorded_at: str
    held: bool


def listing(conn: Connection, project_id: str | None = None, *, limit: int = 200) -> list[Note]:
    """Current memories (not superseded, not archived) first extracted from an auto-memory file, newest first (of
    ``project_id`` when given)."""
    rows = conn.execute(
        "SELECT m.id, m.project_id, m.kind, m.content, json_extract(e.payload_json, '$.provenance.file'), "
        "json_extract(e.payload_json, '$.provenance.line'), e.transaction_time, "
        "EXISTS (SELECT 1 FROM memory_holds h WHERE h.memory_id = m.id AND h.status = 'held') "
        "FROM memories m JOIN learning_events e ON e.event_id = m.id "
        "WHERE e.event_type = 'LearningExtracted' AND substr(e.session_id, 1, :n) = :prefix "
        "AND m.valid_until IS NULL AND m.superseded_by IS NULL "
        "AND (:project IS NULL OR m.project_id = :project) ORDER BY e.event_id DESC LIMIT :limit",
        {"n": len(PREFIX), "prefix": PREFIX, "project": project_id, "limit": int(limit)},
    ).fetchall()
    return [Note(int(r[0]), r[1], r[2], r[3], r[4] or "", r[5], r[6], bool(r[7])) for r in rows]

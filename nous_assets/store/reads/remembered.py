"""The memories Claude recorded at the user's request (MCP ``remember``: events with source ``agent``).

``nous review`` lists them so the user sees everything kept in their name and can reject any of it; held ones
appear among the held memories as well (the guard treats them like any other).
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.db import Connection


@dataclass(frozen=True)
class Remembered:
    memory_id: int
    project_id: str
    scope: str
    kind: str | None
    content: str
    recorded_at: str
    held: bool


def listing(conn: Connection, project_id: str | None = None, *, limit: int = 200) -> list[Remembered]:
    """Current memories first extracted from an ``agent`` event, newest first (of ``project_id`` when given)."""
    rows = conn.execute(
        "SELECT m.id, m.project_id, m.scope, m.kind, m.content, e.transaction_time, "
        "EXISTS (SELECT 1 FROM memory_holds h WHERE h.memory_id = m.id AND h.status = 'held') "
        "FROM memories m JOIN learning_events e ON e.event_id = m.id "
        "WHERE e.source = 'agent' AND e.event_type = 'LearningExtracted' "
        "AND (:project IS NULL OR m.project_id = :project) "
        "ORDER BY e.event_id DESC LIMIT :limit",
        {"project": project_id, "limit": int(limit)},
    ).fetchall()
    return [Remembered(int(r[0]), r[1], r[2], r[3], r[4], r[5], bool(r[6])) for r in rows]

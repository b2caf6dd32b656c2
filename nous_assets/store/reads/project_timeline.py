"""What happened in a project over a stretch of time, for ``timeline``: its sessions and what was learned.

Sessions are read from ``transcript_chunks`` (every session with something said in it), whose rows keep the
Claude Code folder they were read from. A session belongs to the project ``project_aliases`` maps it to, and
only a session with no mapping of its own goes by its folder's (as the projection maps events): one folder
can hold sessions of several repositories. Learnings are the projected memories of the project whose
validity starts in the window (superseded ones included: they were learned then).
"""

from __future__ import annotations

import json
from typing import Any

from nous_assets.store.db import Connection

_SESSION_PROJECT = (
    "coalesce((SELECT a.project_id FROM project_aliases a WHERE a.kind = 'session' AND a.alias = c.session_id), "
    "(SELECT a.project_id FROM project_aliases a WHERE a.kind = 'folder' AND a.alias = c.project_id), c.project_id)"
)
_IN_PROJECT = f"{_SESSION_PROJECT} = :project"


def sessions_between(conn: Connection, project_id: str, start: str, end: str, *, limit: int) -> list[dict[str, Any]]:
    """Sessions of the project with turns in ``[start, end)``, oldest first: when, how many turns, where from,
    and the first thing the user said in the window (the session's subject, usually)."""
    rows = conn.execute(
        f"""
        SELECT c.session_id, min(c.timestamp) AS first_turn, max(c.timestamp) AS last_turn, count(*) AS turns,
               min(c.source_path) AS transcript,
               (SELECT u.text FROM transcript_chunks u WHERE u.session_id = c.session_id AND u.role = 'user'
                AND u.timestamp >= :start AND u.timestamp < :end ORDER BY u.timestamp, u.id LIMIT 1) AS opening
        FROM transcript_chunks c
        WHERE {_IN_PROJECT} AND c.timestamp >= :start AND c.timestamp < :end
        GROUP BY c.session_id ORDER BY first_turn, c.session_id LIMIT :limit
        """,
        {"project": project_id, "start": start, "end": end, "limit": int(limit)},
    ).fetchall()
    return [dict(r) for r in rows]


def learnings_between(conn: Connection, project_id: str, start: str, end: str, *, limit: int) -> list[dict[str, Any]]:
    """Memories of the project that became valid in ``[start, end)``, oldest first."""
    rows = conn.execute(
        "SELECT id, kind, type, content, valid_from, valid_until, source_session, superseded_by "
        "FROM memories WHERE project_id = ? AND valid_from >= ? AND valid_from < ? ORDER BY valid_from, id LIMIT ?",
        (project_id, start, end, int(limit)),
    ).fetchall()
    return [dict(r) for r in rows]


def known_projects(conn: Connection) -> list[str]:
    """Every project with memories or transcript turns (chunks' folders mapped to their project), sorted."""
    rows = conn.execute(
        f"SELECT project_id FROM memories UNION SELECT {_SESSION_PROJECT} "
        "FROM (SELECT DISTINCT session_id, project_id FROM transcript_chunks) c"
    ).fetchall()
    return sorted({r[0] for r in rows})


def session_projects(conn: Connection, chunk_ids: list[int]) -> dict[int, str]:
    """The project each chunk's session belongs to (see the module doc), by chunk id."""
    rows = conn.execute(
        f"SELECT c.id, {_SESSION_PROJECT} FROM transcript_chunks c WHERE c.id IN (SELECT value FROM json_each(?))",
        (json.dumps([int(i) for i in chunk_ids]),),
    ).fetchall()
    return {int(r[0]): r[1] for r in rows}


def activity_days(conn: Connection, project_id: str, *, limit: int) -> list[str]:
    """The most recent days (YYYY-MM-DD) with turns in the project, newest first."""
    rows = conn.execute(
        f"SELECT DISTINCT c.date FROM transcript_chunks c WHERE {_IN_PROJECT} ORDER BY c.date DESC LIMIT :limit",
        {"project": project_id, "limit": int(limit)},
    ).fetchall()
    return [r[0] for r in rows]


def active_days(conn: Connection, project_id: str, *, min_turns: int, limit: int) -> list[str]:
    """The most recent days (YYYY-MM-DD) on which the project learned something or one of its sessions had at
    least ``min_turns`` turns, newest first (a session just opened, with a prompt or two, is not yet activity)."""
    rows = conn.execute(
        f"""
        SELECT day FROM (
            SELECT c.date AS day FROM transcript_chunks c WHERE {_IN_PROJECT}
            GROUP BY c.session_id, c.date HAVING count(*) >= :min_turns
            UNION SELECT substr(valid_from, 1, 10) FROM memories WHERE project_id = :project AND valid_from IS NOT NULL
        ) ORDER BY day DESC LIMIT :limit
        """,
        {"project": project_id, "min_turns": int(min_turns), "limit": int(limit)},
    ).fetchall()
    return [r[0] for r in rows]

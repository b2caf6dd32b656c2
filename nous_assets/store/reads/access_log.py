"""``access_log``: which memories were injected into (or rated in) which session, and the verdict on each.

The SessionStart hook appends rows (or spools them when the database is busy); the ``session_outcomes``
asset judges them once (``was_useful``), and ``nous feedback`` records explicit ratings. This module
holds that SQL so the reinforcement loop (:mod:`nous_assets.reinforce.outcomes`) reads as policy only.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

from nous_assets.store.db import Connection


class PendingAccess(NamedTuple):
    """An injection not judged yet, with what its verdict event needs from the memory."""

    access_id: int
    memory_id: int
    session_id: str
    learning_id: str
    project_id: str


def insert_accesses(conn: Connection, rows: Iterable[tuple[int, str, str | None, str, str]]) -> None:
    """Append (memory_id, session_id, project_id, source, accessed_at) rows, not judged yet."""
    conn.executemany(
        "INSERT INTO access_log(memory_id, session_id, project_id, source, accessed_at) VALUES (?, ?, ?, ?, ?)",
        list(rows),
    )


def unjudged_sessions(conn: Connection) -> set[str]:
    """Sessions with at least one injection whose outcome is not judged yet."""
    return {r[0] for r in conn.execute("SELECT DISTINCT session_id FROM access_log WHERE was_useful IS NULL")}


def pending_accesses(conn: Connection, sessions: Sequence[str]) -> list[PendingAccess]:
    """Unjudged injections of ``sessions`` whose memory is in the current projection."""
    if not sessions:
        return []
    marks = ",".join("?" * len(sessions))
    rows = conn.execute(
        f"SELECT a.id, a.memory_id, a.session_id, m.learning_id, m.project_id FROM access_log a "
        f"JOIN memories m ON m.id = a.memory_id WHERE a.was_useful IS NULL AND a.session_id IN ({marks})",
        list(sessions),
    ).fetchall()
    return [PendingAccess(*r) for r in rows]


def record_verdicts(conn: Connection, verdicts: Iterable[tuple[int, int]]) -> None:
    """Set ``was_useful`` for (verdict 0/1, access id) pairs."""
    conn.executemany("UPDATE access_log SET was_useful = ? WHERE id = ?", list(verdicts))


def record_rating(
    conn: Connection, memory_id: int, session_id: str, project_id: str | None, useful: bool, accessed_at: str
) -> None:
    """An explicit rating (``nous feedback``), judged on arrival."""
    conn.execute(
        "INSERT INTO access_log(memory_id, session_id, project_id, was_useful, source, accessed_at) "
        "VALUES (?, ?, ?, ?, 'feedback', ?)",
        (memory_id, session_id, project_id, 1 if useful else 0, accessed_at),
    )


class Injection(NamedTuple):
    """One memory injected into a session by a hook (``source``: ``session-start:<source>`` or a prompt hook)."""

    memory_id: int
    project_id: str | None
    source: str
    accessed_at: str


def sessions_like(conn: Connection, prefix: str, limit: int = 5) -> list[str]:
    """Sessions with injections whose id starts with ``prefix`` (at most ``limit``)."""
    pattern = prefix.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"
    rows = conn.execute(
        "SELECT DISTINCT session_id FROM access_log WHERE session_id LIKE ? ESCAPE '\\' AND source != 'feedback' "
        "LIMIT ?",
        (pattern, limit),
    )
    return [r[0] for r in rows]


def last_injected_session(conn: Connection) -> str | None:
    """The session that received the latest injection (ratings from ``nous feedback`` are not injections)."""
    row = conn.execute(
        "SELECT session_id FROM access_log WHERE source != 'feedback' ORDER BY accessed_at DESC, id DESC LIMIT 1"
    ).fetchone()
    return None if row is None else row[0]


def injections(conn: Connection, session_id: str) -> list[Injection]:
    """What the hooks injected into ``session_id``, in the order they did."""
    rows = conn.execute(
        "SELECT memory_id, project_id, source, accessed_at FROM access_log "
        "WHERE session_id = ? AND source != 'feedback' ORDER BY accessed_at, id",
        (session_id,),
    )
    return [Injection(int(r[0]), r[1], str(r[2] or ""), str(r[3] or "")) for r in rows]

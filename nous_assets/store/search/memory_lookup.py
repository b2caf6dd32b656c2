"""The memories an incoming learning is compared with before it is appended (re-learning, slots).

Two bounded, indexed reads over the projection: the best FTS5 matches of the learning's words among the
project's (and global) current memories — a near-duplicate shares most of its words, so it ranks among
them — and every memory of the learning's (project, slot), current or closed, so a value can be placed
among the slot's history by validity time. Also the project's best matches a correction may refer to,
and the clocks of the memories a session was given (its learnings are causally after them).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from nous_assets.store.db import Connection, DatabaseError
from nous_assets.store.reads.consolidation import not_observation
from nous_assets.store.search import owners

MATCH_LIMIT = 20
MAX_MATCH_WORDS = 24
_WORD = re.compile(r"[a-z0-9]{2,}")


@dataclass(frozen=True)
class Held:
    """A memory the incoming learning is compared with (current or, for its slot, closed)."""

    learning_id: str
    content: str
    valid_from: str | None = None
    valid_until: str | None = None
    slot: str | None = None


def _match_expression(text: str) -> str | None:
    words = list(dict.fromkeys(_WORD.findall(text.lower())))[:MAX_MATCH_WORDS]
    return " OR ".join(f'"{w}"' for w in words) or None


def _held(row) -> Held:
    return Held(row["learning_id"], row["content"], row["valid_from"], row["valid_until"], row["slot"])


_NOT_OBSERVATION = not_observation("m.")


def similar_current(conn: Connection, project_id: str, text: str, *, limit: int = MATCH_LIMIT) -> list[Held]:
    """Current memories of ``project_id`` (and global ones) that share the most words with ``text``."""
    match = _match_expression(text)
    if match is None:
        return []
    owned = owners.match_filter([owners.token(project_id), owners.GLOBAL])
    try:
        rows = conn.execute(
            "SELECT m.learning_id, m.content, m.valid_from, m.valid_until, m.slot FROM memories_fts f "
            "JOIN memories m ON m.id = f.rowid WHERE memories_fts MATCH ? AND m.valid_until IS NULL "
            f"AND {_NOT_OBSERVATION} AND (m.project_id = ? OR m.scope = 'global') "
            "ORDER BY bm25(memories_fts, 1.0, 1.0, 0.0), m.id LIMIT ?",
            (f"{{content concepts}} : ({match}) AND {owned}", project_id, limit),
        ).fetchall()
    except DatabaseError:  # a damaged FTS index: no comparison rather than a failed extraction
        return []
    return [_held(r) for r in rows]


def slot_history(conn: Connection, project_id: str, slot: str) -> list[Held]:
    """Every memory of ``(project_id, slot)``, whatever its validity window, oldest first."""
    rows = conn.execute(
        "SELECT learning_id, content, valid_from, valid_until, slot FROM memories "
        "WHERE project_id = ? AND slot = ? ORDER BY valid_from, learning_id",
        (project_id, slot),
    ).fetchall()
    return [_held(r) for r in rows]


def project_matches(conn: Connection, project_id: str, match: str, *, limit: int) -> list[tuple[str, str]]:
    """``(learning_id, content)`` of the project's current memories best matching the FTS5 ``match``.

    Project-only (no global ones): a correction refers to something said in this project. A memory learned here
    and since made global still counts, so the owner filter lets global rows through and ``project_id`` decides.
    """
    owned = owners.match_filter([owners.token(project_id), owners.GLOBAL])
    rows = conn.execute(
        "SELECT m.learning_id, m.content FROM memories_fts f JOIN memories m ON m.id = f.rowid "
        f"WHERE memories_fts MATCH ? AND m.project_id = ? AND m.valid_until IS NULL AND {_NOT_OBSERVATION} "
        "ORDER BY bm25(memories_fts, 1.0, 1.0, 0.0) LIMIT ?",
        (f"{{content concepts}} : ({match}) AND {owned}", project_id, limit),
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def citing(
    conn: Connection, project_id: str, text: str, *, except_slots: str = ""
) -> list[tuple[str, str, str | None, str]]:
    """(learning_id, content and source, valid_from, source session) of the project's memories that still hold
    and mention ``text`` (a path a session removed) anywhere in their content or source; memories on slots
    starting with ``except_slots`` are left out."""
    rows = conn.execute(
        "SELECT learning_id, content || ' ' || coalesce(source_ref, ''), valid_from, source_session FROM memories "
        "WHERE project_id = ? AND status NOT IN ('refuted', 'superseded') "
        "AND instr(content || ' ' || coalesce(source_ref, ''), ?) > 0 "
        "AND (? = '' OR slot IS NULL OR substr(slot, 1, length(?)) != ?) ORDER BY id",
        (project_id, text, except_slots, except_slots, except_slots),
    ).fetchall()
    return [(r[0], r[1], r[2], r[3]) for r in rows]


def by_slot_prefix(conn: Connection, project_id: str, prefix: str) -> dict[str, tuple[str, str]]:
    """{slot: (learning_id, content)} of the project's memories on slots starting with ``prefix`` that still hold
    (the project brief's, ``brief:``): what a new brief is compared with."""
    rows = conn.execute(
        "SELECT slot, learning_id, content FROM memories WHERE project_id = ? AND substr(slot, 1, ?) = ? "
        "AND status NOT IN ('refuted', 'superseded') ORDER BY id",
        (project_id, len(prefix), prefix),
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def injected_clocks(conn: Connection, session_id: str, *, limit: int) -> list[str]:
    """Vector clock texts of the memories injected into ``session_id``, most recently injected first.

    The session read them, so whatever it learns is causally after them.
    """
    rows = conn.execute(
        "SELECT m.vector_clock_json FROM access_log a JOIN memories m ON m.id = a.memory_id "
        "WHERE a.session_id = ? AND m.vector_clock_json IS NOT NULL ORDER BY a.accessed_at DESC LIMIT ?",
        (session_id, limit),
    ).fetchall()
    return [r[0] for r in rows]


def has_extraction(conn: Connection, learning_id: str) -> bool:
    """Whether ``learning_id`` was ever extracted (a re-learned one only has its reinforcement), in the live
    log or in a cold archive segment."""
    row = conn.execute(
        "SELECT 1 FROM learning_events WHERE learning_id = ? AND event_type = 'LearningExtracted' UNION ALL "
        "SELECT 1 FROM archived_events WHERE learning_id = ? AND event_type = 'LearningExtracted' LIMIT 1",
        (learning_id, learning_id),
    ).fetchone()
    return row is not None


def memory_concepts(conn: Connection, memory_id: int) -> set[str]:
    """The concepts of one memory of the projection (what a session must mention to have touched it)."""
    return {r[0] for r in conn.execute("SELECT concept FROM concepts WHERE memory_id = ?", (memory_id,))}


def learning_of(conn: Connection, memory_id: int) -> tuple[str, str] | None:
    """(learning_id, project_id) of a memory of the current projection, or None."""
    row = conn.execute("SELECT learning_id, project_id FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return (row[0], row[1]) if row is not None else None


def corrections_by_session(conn: Connection, sessions: list[str]) -> dict[str, str]:
    """Per session, the text of the corrections extracted from it, read from the event log.

    From the log rather than the projection: session outcomes are judged before the ``memories`` asset
    projects the run's events, and a correction extracted in this very run must count.
    """
    if not sessions:
        return {}
    out: dict[str, str] = {}
    rows = conn.execute(
        "SELECT session_id, json_extract(payload_json, '$.content') FROM learning_events "
        "WHERE event_type = 'LearningExtracted' AND json_extract(payload_json, '$.kind') = 'correction' "
        "AND session_id IN (SELECT value FROM json_each(?)) ORDER BY event_id",
        (json.dumps(sorted(set(sessions))),),
    )
    for session, content in rows:
        out[session] = out.get(session, "") + "\n" + (content or "")
    return out

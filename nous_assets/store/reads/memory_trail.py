"""One memory's trail through the log, for ``explain``: its events, the memories it replaced or that replaced
it, and what contradicts it.

A memory's id is the event id of the ``LearningExtracted`` that created it, so its learning (and every event
of that learning) is found in the log even after the projection dropped an archived memory.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from nous_assets.store.db import Connection

MAX_EVENTS = 30  # a learning re-learned in hundreds of sessions: its extraction and the newest events tell the story


def learning_of(conn: Connection, memory_id: int) -> tuple[str, str] | None:
    """(learning_id, project_id as written) of the learning memory ``memory_id`` created; None if none did."""
    row = conn.execute(
        "SELECT learning_id, project_id FROM learning_events WHERE event_id = ? AND event_type = 'LearningExtracted'",
        (memory_id,),
    ).fetchone()
    return (row[0], row[1]) if row else None


def memory_row(conn: Connection, memory_id: int) -> Mapping[str, Any] | None:
    """The memory as currently projected (None when archived or unknown)."""
    return conn.execute(
        "SELECT id, learning_id, content, type, kind, scope, project_id, source_session, reinforcement_score, "
        "valid_from, valid_until, superseded_by, contradiction_count, provenance_json, status "
        "FROM memories WHERE id = ?",
        (memory_id,),
    ).fetchone()


def events(conn: Connection, learning_id: str, *, limit: int = MAX_EVENTS) -> list[dict[str, Any]]:
    """The learning's events, oldest first, payloads parsed: its extraction and the newest ``limit`` others."""
    rows = conn.execute(
        "SELECT event_id, event_type, transaction_time, valid_from, valid_until, session_id, project_id, source, "
        "payload_json FROM learning_events WHERE learning_id = :l AND (event_type = 'LearningExtracted' OR "
        "event_id IN (SELECT event_id FROM learning_events WHERE learning_id = :l ORDER BY event_id DESC LIMIT :n)) "
        "ORDER BY event_id",
        {"l": learning_id, "n": int(limit)},
    ).fetchall()
    return [{**dict(r), "payload": json.loads(r["payload_json"])} for r in rows]


def event_count(conn: Connection, learning_id: str) -> int:
    return int(conn.execute("SELECT count(*) FROM learning_events WHERE learning_id = ?", (learning_id,)).fetchone()[0])


def sessions(conn: Connection, learning_id: str) -> list[dict[str, Any]]:
    """The sessions the learning's events came from, in the order they first did, with that event's validity."""
    rows = conn.execute(
        "SELECT session_id, min(event_id) AS first_event, min(coalesce(valid_from, transaction_time)) AS first_seen, "
        "count(*) AS events FROM learning_events WHERE learning_id = ? GROUP BY session_id ORDER BY first_event",
        (learning_id,),
    ).fetchall()
    return [{"session": r["session_id"], "first_seen": r["first_seen"], "events": r["events"]} for r in rows]


def _memory_brief(conn: Connection, where: str, params: tuple) -> list[dict[str, Any]]:
    rows = conn.execute(
        f"SELECT id, learning_id, content, kind, valid_from, valid_until, source_session FROM memories WHERE {where}",
        params,
    ).fetchall()
    return [dict(r) for r in rows]


def by_learning(conn: Connection, learning_id: str) -> list[dict[str, Any]]:
    """The projected memory of ``learning_id`` (a list: empty when it is archived)."""
    return _memory_brief(conn, "learning_id = ?", (learning_id,))


def superseding(conn: Connection, memory_id: int) -> list[dict[str, Any]]:
    """Memories that replaced ``memory_id`` (``supersedes`` edges into it), oldest first."""
    return _memory_brief(
        conn,
        "id IN (SELECT source_id FROM edges WHERE rel_type = 'supersedes' AND target_id = ?) ORDER BY valid_from, id",
        (memory_id,),
    )


def superseded(conn: Connection, memory_id: int) -> list[dict[str, Any]]:
    """Memories ``memory_id`` replaced (``supersedes`` edges out of it), oldest first."""
    return _memory_brief(
        conn,
        "id IN (SELECT target_id FROM edges WHERE rel_type = 'supersedes' AND source_id = ?) ORDER BY valid_from, id",
        (memory_id,),
    )


def contradictions(conn: Connection, memory_id: int) -> list[dict[str, Any]]:
    """Memories that contradict ``memory_id``: ``contradicts`` edges either way and cached NLI verdicts.

    Each: the other memory's brief plus ``via`` (``edge`` or ``nli``) and, for NLI, its confidence.
    """
    found: dict[int, dict[str, Any]] = {}
    edge_rows = conn.execute(
        "SELECT CASE WHEN source_id = :m THEN target_id ELSE source_id END FROM edges "
        "WHERE rel_type = 'contradicts' AND (source_id = :m OR target_id = :m)",
        {"m": memory_id},
    ).fetchall()
    for (other,) in edge_rows:
        found[int(other)] = {"via": "edge"}
    nli_rows = conn.execute(
        "SELECT CASE WHEN memory_id_a = :m THEN memory_id_b ELSE memory_id_a END, confidence, model_version "
        "FROM nli_results WHERE nli_label = 'contradiction' AND (memory_id_a = :m OR memory_id_b = :m)",
        {"m": memory_id},
    ).fetchall()
    for other, confidence, model in nli_rows:
        found[int(other)] = {"via": "nli", "confidence": float(confidence), "model": model}
    if not found:
        return []
    briefs = {
        b["id"]: b
        for b in _memory_brief(conn, "id IN (SELECT value FROM json_each(?))", (json.dumps(sorted(found)),))
    }
    return [{**briefs.get(other, {"id": other}), **how} for other, how in sorted(found.items())]

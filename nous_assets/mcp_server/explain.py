"""``explain``: why a memory exists and how it changed, read from the event log.

Its events (extracted, re-learned in later sessions, superseded, contradicted, archived), the sessions they
came from, the memories it replaced or that replaced it, and what contradicts it (``contradicts`` edges and
cached NLI verdicts). An archived memory is explained too: the log keeps its events after the projection
dropped it.
"""

from __future__ import annotations

import json
from typing import Any

from nous_assets.consolidate.topics import topic_of
from nous_assets.mcp_server import inputs, render
from nous_assets.mcp_server.lines import TranscriptLines
from nous_assets.settings import Settings
from nous_assets.store.db import Connection
from nous_assets.store.reads import consolidation, memory_trail
from nous_assets.store.reads.consolidation import OBSERVATION

MAX_MEMORY_ID = 2**62
MEMORY_TEXT_CHARS = 1200
EVENT_TEXT_CHARS = 300
RELATED_CHARS = 300
MAX_RELATED = 8  # other memories of its topic, by id
_PAYLOAD_FIELDS = ("reason", "slot", "similarity", "reinforcement_delta", "confidence")


def _event(raw: dict[str, Any], guard: render.Guard, memory_id: int, lines: TranscriptLines) -> dict[str, Any]:
    payload = raw["payload"] if isinstance(raw["payload"], dict) else {}
    event: dict[str, Any] = {
        "event": raw["event_id"],
        "type": raw["event_type"],
        "recorded": raw["transaction_time"],
        "valid_from": raw["valid_from"],
        "valid_until": raw["valid_until"],
        "session": raw["session_id"],
        "by": raw["source"],
    }
    event.update({k: payload[k] for k in _PAYLOAD_FIELDS if isinstance(payload.get(k), str | int | float)})
    if isinstance(payload.get("content"), str) and raw["event_type"] != "LearningExtracted":
        event["said"] = guard.text(payload["content"], EVENT_TEXT_CHARS, memory_id=memory_id)[0]
    if isinstance(payload.get("provenance"), dict):
        event["source"] = render.memory_source(payload["provenance"], raw["session_id"], lines)
    return {k: v for k, v in event.items() if v is not None}


def _related(rows: list[dict[str, Any]], guard: render.Guard) -> list[dict[str, Any]]:
    out = []
    for row in rows:
        item = {"memory": row["id"], "kind": row.get("kind"), "date": render.day(row.get("valid_from")),
                "valid_until": render.day(row.get("valid_until"))}  # fmt: skip
        if "content" in row:
            item["text"] = guard.text(row["content"], RELATED_CHARS, memory_id=row["id"])[0]
        item.update({k: row[k] for k in ("via", "confidence") if k in row})
        out.append({k: v for k, v in item.items() if v is not None})
    return out


def explain(conn: Connection, settings: Settings, *, memory_id: int) -> dict[str, Any]:
    """The memory's story: current state (or ``archived``), events oldest first, sessions, supersessions and
    contradictions. Raises :class:`~nous_assets.mcp_server.inputs.InputError` for an unknown id."""
    memory_id = inputs.bounded(memory_id, "memory_id", 1, MAX_MEMORY_ID)
    learning = memory_trail.learning_of(conn, memory_id)
    if learning is None:
        raise inputs.InputError(
            f"no memory #{memory_id}: use an id that `recall` or `timeline` returned (the 'memory' field)"
        )
    guard, lines = render.Guard(conn), TranscriptLines.of(settings.project_glob)
    row = memory_trail.memory_row(conn, memory_id)
    events = memory_trail.events(conn, learning[0])
    first = events[0]["payload"] if events and isinstance(events[0]["payload"], dict) else {}
    content = row["content"] if row is not None else first.get("content", "")
    text, withheld = guard.text(content, MEMORY_TEXT_CHARS, memory_id=memory_id)
    memory: dict[str, Any] = {
        "memory": memory_id,
        "state": _state(row, events),
        "status": row["status"] if row is not None else None,  # the claim's: verified … refuted, superseded
        "kind": row["kind"] if row is not None else first.get("kind"),
        "project": row["project_id"] if row is not None else learning[1],
        "text": text,
    }
    if row is None and isinstance(first.get("provenance"), dict):
        memory["source"] = render.memory_source(first["provenance"], events[0]["session_id"], lines)
    if row is not None:
        memory.update(
            valid_from=row["valid_from"], valid_until=row["valid_until"],
            reinforcement=round(float(row["reinforcement_score"]), 3), contradiction_count=row["contradiction_count"],
            source=render.memory_source(row["provenance_json"], row["source_session"], lines),
        )  # fmt: skip
    if row is not None:
        memory.update(_consolidation(conn, row, guard))
    shaped = [_event(e, guard, memory_id, lines) for e in events]
    return {
        "memory": {k: v for k, v in memory.items() if v is not None},
        "events": shaped,
        "events_total": memory_trail.event_count(conn, learning[0]),
        "sessions": memory_trail.sessions(conn, learning[0]),
        "replaced": _related(memory_trail.superseded(conn, memory_id), guard),
        "replaced_by": _related(memory_trail.superseding(conn, memory_id), guard),
        "contradicted_by": _related(memory_trail.contradictions(conn, memory_id), guard),
        "withheld": withheld,
    }


def _consolidation(conn: Connection, row: Any, guard: render.Guard) -> dict[str, Any]:
    """How an observation was formed (its members, each with its status), and the topic of the project map the
    memory belongs to (:mod:`nous_assets.consolidate.topics`)."""
    out: dict[str, Any] = {}
    if row["kind"] == OBSERVATION:
        provenance = json.loads(row["provenance_json"] or "{}") or {}
        out["formed_from"] = [{"memory": m_id, "status": status, "current": until is None,
                               "anchor": lid == provenance.get("anchor"),
                               "text": guard.text(text, RELATED_CHARS, memory_id=m_id)[0]}
                              for m_id, lid, text, status, until in
                              consolidation.members_of(conn, provenance.get("members") or [])]  # fmt: skip
    topic = topic_of(conn, row["project_id"], int(row["id"])) if row["scope"] == "project" else None
    if topic is not None:
        out["topic"] = {"label": guard.text(topic.label, RELATED_CHARS)[0], "memories": len(topic.memory_ids),
                        "observations": list(topic.observation_ids),
                        "related": [i for i in topic.memory_ids if i != row["id"]][:MAX_RELATED]}  # fmt: skip
    return out


def _state(row: Any, events: list[dict[str, Any]]) -> str:
    """current, superseded (a newer value replaced it), expired (its validity ended), archived, or not yet
    projected (its events are newer than the projection)."""
    if row is None:
        return "archived" if any(e["event_type"] == "LearningArchived" for e in events) else "not projected yet"
    if row["superseded_by"]:
        return "superseded"
    return "expired" if row["valid_until"] else "current"

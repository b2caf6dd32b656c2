"""``timeline``: what happened in a project around a day — its sessions, what was learned, what was decided.

Sessions come from the transcript turns Nous keeps (first and last turn, how many, what the user opened
with), learnings from the project's memories that became valid in the window, decisions are the learnings
of kind ``decision``. Without a day, the project's most recent day of activity is the centre: a day on which
the project learned something or one of its sessions had :data:`MIN_ACTIVE_TURNS` turns. The session Claude is
in when it calls ``timeline`` is already in the store after a prompt or two; counting it would centre every
default timeline on today's nearly empty session (issue 21).
"""

from __future__ import annotations

from datetime import date
from typing import Any

from nous_assets.consolidate.topics import MapTopic, project_map
from nous_assets.mcp_server import inputs, render
from nous_assets.settings import RECALL_BUDGET_RANGE, Settings
from nous_assets.store.db import Connection
from nous_assets.store.reads import project_timeline

MAX_DAYS = 30
DEFAULT_DAYS = 3
MAX_ROWS = 200  # per list, before the budget decides
OPENING_CHARS = 240
LEARNING_CHARS = 300  # `explain` has the whole memory and its source
TOPIC_CHARS = 120
TOPIC_EXAMPLES = 5
MIN_ACTIVE_TURNS = 6
"""Turns (user and assistant messages kept as transcript chunks) a session needs on a day for that day to be
activity without a learning: more than an opening prompt, its answer and a tool call or two."""


def _session(row: dict[str, Any], guard: render.Guard) -> dict[str, Any]:
    item = {
        "session": row["session_id"],
        "started": row["first_turn"],
        "ended": row["last_turn"],
        "turns": row["turns"],
        "opening": guard.text(row["opening"], OPENING_CHARS)[0] if row.get("opening") else None,
        "transcript": row["transcript"],
    }
    return {k: v for k, v in item.items() if v is not None}


def _learning(row: dict[str, Any], guard: render.Guard) -> dict[str, Any]:
    item = {
        "memory": row["id"],
        "kind": row["kind"],
        "date": row["valid_from"],
        "valid_until": row["valid_until"],
        "text": guard.text(row["content"], LEARNING_CHARS, memory_id=row["id"])[0],
        "session": row["source_session"],
    }
    return {k: v for k, v in item.items() if v is not None}


def timeline(
    conn: Connection,
    settings: Settings,
    *,
    project: str,
    day: str | None = None,
    days: int = DEFAULT_DAYS,
    budget: int | None = None,
) -> dict[str, Any]:
    """Sessions, decisions and other learnings of ``project`` from ``day - days`` to ``day + days`` (UTC days),
    oldest first, and the project's topics (its map: :mod:`nous_assets.consolidate.topics`, largest first),
    within ``budget`` characters (decisions first, then sessions, the topics, the other learnings: a topic is a
    few ids and a name, and says more about the project than the hundredth learning of a busy day)."""
    project_id = inputs.project(conn, project, required=True)
    assert project_id is not None
    span = inputs.bounded(days, "days", 0, MAX_DAYS)
    limit = inputs.bounded(
        settings.thresholds.recall_budget_chars if budget is None else budget, "budget", *RECALL_BUDGET_RANGE
    )
    center = inputs.day(day, "day") if day is not None else _latest_day(conn, project_id)
    start, end = inputs.day_window(center, span)
    guard = render.Guard(conn)
    sessions = [_session(r, guard) for r in project_timeline.sessions_between(conn, project_id, start, end,
                                                                               limit=MAX_ROWS)]  # fmt: skip
    learned = [_learning(r, guard) for r in project_timeline.learnings_between(conn, project_id, start, end,
                                                                               limit=MAX_ROWS)]  # fmt: skip
    decisions = [item for item in learned if item["kind"] == "decision"]
    others = [item for item in learned if item["kind"] != "decision"]
    head = {"note": render.NOTE, "project": project_id, "from": start, "until": end}
    used = render.size(head) + 120  # the list keys and the counts
    kept_decisions, left_d = render.fit(decisions, limit, used)
    used += sum(render.size(i) + 1 for i in kept_decisions)
    kept_sessions, left_s = render.fit(sessions, limit, used)
    used += sum(render.size(i) + 1 for i in kept_sessions)
    kept_topics, left_t = render.fit([_topic(t, guard) for t in project_map(conn, project_id)], limit, used)
    used += sum(render.size(i) + 1 for i in kept_topics)
    kept_learnings, left_l = render.fit(others, limit, used)
    return {
        **head,
        "decisions": kept_decisions,
        "sessions": kept_sessions,
        "learnings": kept_learnings,
        "topics": kept_topics,
        "left_out": {"decisions": left_d, "sessions": left_s, "learnings": left_l, "topics": left_t},
    }


def _topic(topic: MapTopic, guard: render.Guard) -> dict[str, Any]:
    """One topic of the project map: its name, size, observations and best-evidenced memories, by id (``explain``
    or ``recall`` gives their text)."""
    return {"topic": guard.text(topic.label, TOPIC_CHARS)[0], "memories": len(topic.memory_ids),
            "observations": list(topic.observation_ids), "examples": list(topic.memory_ids[:TOPIC_EXAMPLES])}


def _latest_day(conn: Connection, project_id: str) -> date:
    """The project's latest active day; its latest day with any turn when no day is active yet."""
    days = project_timeline.active_days(conn, project_id, min_turns=MIN_ACTIVE_TURNS, limit=1)
    days = days or project_timeline.activity_days(conn, project_id, limit=1)
    if not days:
        raise inputs.InputError(f"project {project_id!r} has no recorded sessions; give a day")
    return date.fromisoformat(days[0])

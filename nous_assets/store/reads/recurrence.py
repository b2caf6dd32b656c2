"""Re-learning signals of memories, read from ``learning_events`` and ``access_log``.

How many sessions learned a learning (its extraction, or a later re-learning reinforcement) and how its
injections went: retrieval's re-learning modifier is computed from these two counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from nous_assets.store.db import Connection


def learning_sessions(conn: Connection, learning_ids: Iterable[str]) -> dict[str, int]:
    """{learning id: distinct sessions that extracted it or re-learned it} for the known ones."""
    rows = conn.execute(
        "SELECT learning_id, COUNT(DISTINCT session_id) FROM learning_events "
        "WHERE learning_id IN (SELECT value FROM json_each(?)) AND (event_type = 'LearningExtracted' OR "
        "(event_type = 'LearningReinforced' AND json_extract(payload_json, '$.reason') = 'relearned')) "
        "GROUP BY learning_id",
        (json.dumps(sorted(set(learning_ids))),),
    )
    return {lid: int(n) for lid, n in rows}


def injection_outcomes(conn: Connection, memory_ids: Iterable[int]) -> dict[int, tuple[int, int, int]]:
    """{memory id: (injections, rated helpful, rated unhelpful)} from access_log (NULL = not rated)."""
    rows = conn.execute(
        "SELECT memory_id, COUNT(*), COALESCE(SUM(was_useful = 1), 0), COALESCE(SUM(was_useful = 0), 0) "
        "FROM access_log WHERE memory_id IN (SELECT value FROM json_each(?)) GROUP BY memory_id",
        (json.dumps(sorted(set(memory_ids))),),
    )
    return {int(m): (int(t), int(h), int(u)) for m, t, h, u in rows}


def relearn_history(conn: Connection, learning_id: str) -> tuple[set[str], float | None, int, int, int]:
    """What the decision matrix needs of one memory: (sessions that learned it, projected score or None,
    injections, rated helpful, rated unhelpful)."""
    sessions = {
        r[0]
        for r in conn.execute(
            "SELECT DISTINCT session_id FROM learning_events WHERE learning_id = ? AND (event_type = "
            "'LearningExtracted' OR (event_type = 'LearningReinforced' AND "
            "json_extract(payload_json, '$.reason') = 'relearned'))",
            (learning_id,),
        )
    }
    row = conn.execute("SELECT id, reinforcement_score FROM memories WHERE learning_id = ?", (learning_id,)).fetchone()
    if row is None:
        return sessions, None, 0, 0, 0
    injections, helpful, unhelpful = injection_outcomes(conn, [int(row[0])]).get(int(row[0]), (0, 0, 0))
    return sessions, float(row[1]), injections, helpful, unhelpful


def relearn_flags(conn: Connection, *, project_id: str | None = None) -> list[dict]:
    """Every re-learning signal of the log, newest first, in one shape whatever version wrote it.

    ``{"event_id", "learning_id", "project_id", "session_id", "valid_from", "decision", "tier", "similarity",
    "matched"}``: a ``LearningReinforced`` re-learning (``matched`` = the memory it repeated, its
    ``learning_id``) or a ``LearningExtracted`` near-miss (``matched`` = the memory it came close to). The
    near-misses of earlier versions (``{"near", "similarity"}``) read as ``near_miss`` of tier 1; their
    re-learnings without a decision as ``merge_silent``.
    """
    rows = conn.execute(
        "SELECT event_id, learning_id, project_id, session_id, valid_from, event_type, "
        "json_extract(payload_json, '$.relearn'), json_extract(payload_json, '$.similarity') FROM learning_events "
        "WHERE (json_extract(payload_json, '$.relearn') IS NOT NULL OR (event_type = 'LearningReinforced' AND "
        "json_extract(payload_json, '$.reason') = 'relearned')) AND (? IS NULL OR project_id = ?) "
        "ORDER BY event_id DESC",
        (project_id, project_id),
    ).fetchall()
    flags = []
    for event_id, lid, project, session, valid_from, kind, raw, similarity in rows:
        flag = json.loads(raw) if raw else {}
        if "decision" not in flag:  # the first format: a near-miss, or a re-learning with no decision
            near = kind == "LearningExtracted"
            flag = {"decision": "near_miss" if near else "merge_silent", "tier": 1,
                    "similarity": flag.get("similarity", similarity), "matched": flag.get("near") if near else lid}
        flags.append({"event_id": event_id, "learning_id": lid, "project_id": project, "session_id": session,
                      "valid_from": valid_from, **flag})
    return flags

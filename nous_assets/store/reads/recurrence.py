"""Re-learning signals of memories, read from ``learning_events`` and ``access_log``.

How many sessions learned a learning (its extraction, or a later re-learning reinforcement) and how its
injections went: retrieval's re-learning modifier is computed from these two counts.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from nous_assets.store.db import Connection


def learning_sessions(conn: Connection, learning_ids: Iterable[str]) -> dict[str, int]:
    """{learning id: distinct sessions that extracted it or re-learned it, or a value it restated} for the known
    ones."""
    return {lid: len(sessions) for lid, sessions in _sessions(conn, learning_ids).items()}


_RESTATED_SQL = """
WITH RECURSIVE chain(root, learning_id) AS (
    SELECT value, value FROM json_each(?)
    UNION
    SELECT chain.root, e.learning_id FROM chain JOIN learning_events e
      ON json_extract(e.payload_json, '$.superseded_by') = chain.learning_id
     AND e.event_type = 'LearningSuperseded' AND json_extract(e.payload_json, '$.restates') = 1
)
SELECT DISTINCT chain.root, e.session_id FROM chain JOIN learning_events e ON e.learning_id = chain.learning_id
WHERE e.session_id IS NOT NULL AND (e.event_type = 'LearningExtracted'
   OR (e.event_type = 'LearningReinforced' AND json_extract(e.payload_json, '$.reason') = 'relearned'))
"""


def _sessions(conn: Connection, learning_ids: Iterable[str]) -> dict[str, set[str]]:
    """{learning id: the sessions that learned it}, counting the older values of a slot it restated (a hook seen
    in full after a session saw part of it: ``payload.restates`` on their supersession, migration 024)."""
    found: dict[str, set[str]] = {}
    for root, session in conn.execute(_RESTATED_SQL, (json.dumps(sorted(set(learning_ids))),)):
        found.setdefault(root, set()).add(session)
    return found


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
    sessions = _sessions(conn, [learning_id]).get(learning_id, set())
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

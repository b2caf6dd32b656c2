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

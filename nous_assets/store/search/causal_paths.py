"""Forward walks over ``causes`` edges, for ``predict``: what followed a memory before.

``causes`` edges (derived by :mod:`nous_assets.link.edges`) point from a learning to the one that came next in
the same session (or across a subagent's briefing and debriefing), weighted by how close the two were. Unlike
the relevance walk in :mod:`nous_assets.store.search.edges`, this one only goes forward in time: source -> target.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nous_assets.store.db import Connection

_WALK = """
WITH RECURSIVE followed(seed, memory_id, weight, depth) AS (
    SELECT e.source_id, e.target_id, e.weight, 1 FROM edges e
    WHERE e.rel_type = 'causes' AND e.source_id IN (SELECT value FROM json_each(:seeds))
    UNION ALL
    SELECT f.seed, e.target_id, f.weight * e.weight * :decay, f.depth + 1
    FROM followed f JOIN edges e ON e.source_id = f.memory_id AND e.rel_type = 'causes'
    WHERE f.depth < :max_depth
)
SELECT seed, memory_id, max(weight) AS weight, min(depth) AS depth FROM followed
WHERE memory_id NOT IN (SELECT value FROM json_each(:seeds))
GROUP BY seed, memory_id
"""


def followers(
    conn: Connection, seeds: Sequence[int], *, max_depth: int, decay: float
) -> list[tuple[int, int, float, int]]:
    """(seed, follower, best path weight, fewest hops) for memories reachable forward from ``seeds``.

    A path's weight is the product of its edges' weights times ``decay`` per hop after the first.
    """
    if not seeds:
        return []
    rows = conn.execute(
        _WALK, {"seeds": json.dumps([int(s) for s in seeds]), "max_depth": int(max_depth), "decay": float(decay)}
    ).fetchall()
    return [(int(s), int(m), float(w), int(d)) for s, m, w, d in rows]

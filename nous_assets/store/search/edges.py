"""The ``edges`` table: derived links written by link/edges.py, and the traversal retrieval's s_graph reads.

Event edges are written by the projector from the log; this module holds the derived writes (which
never overwrite an event edge) and the recursive walk. Traversal policy (hop decay, which relations
are symmetric) is the caller's: see :mod:`nous_assets.retrieve.graph`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from nous_assets.store.db import Connection

_UPSERT_DERIVED = (
    "INSERT INTO edges(source_id, target_id, rel_type, weight, origin, created_at) VALUES (?, ?, ?, ?, 'derived', ?) "
    "ON CONFLICT(source_id, target_id, rel_type) DO UPDATE SET weight = excluded.weight WHERE edges.origin = 'derived'"
)


def upsert_derived(conn: Connection, rel_type: str, edges: Iterable[tuple[int, int, float]], created_at: str) -> None:
    """Write (source, target, weight) edges of ``rel_type`` as ``origin='derived'``; event edges stay as they are."""
    conn.executemany(_UPSERT_DERIVED, [(s, t, rel_type, w, created_at) for s, t, w in edges])


def _walk_sql(hop_decay: float, symmetric: Sequence[str]) -> str:
    relations = "(" + ", ".join(f"'{r}'" for r in symmetric) + ")"
    return f"""
WITH RECURSIVE connected(memory_id, weight, depth) AS (
    SELECT e.target_id, e.weight, 1 FROM edges e
    WHERE e.source_id IN (SELECT value FROM json_each(:seeds))
    UNION ALL
    SELECT e.source_id, e.weight, 1 FROM edges e
    WHERE e.target_id IN (SELECT value FROM json_each(:seeds)) AND e.rel_type IN {relations}
    UNION ALL
    SELECT e.target_id, c.weight * e.weight * {float(hop_decay)}, c.depth + 1
    FROM connected c JOIN edges e ON e.source_id = c.memory_id
    WHERE c.depth < :max_depth
    UNION ALL
    SELECT e.source_id, c.weight * e.weight * {float(hop_decay)}, c.depth + 1
    FROM connected c JOIN edges e ON e.target_id = c.memory_id
    WHERE c.depth < :max_depth AND e.rel_type IN {relations}
)
SELECT memory_id, MAX(weight) AS proximity FROM connected
WHERE memory_id NOT IN (SELECT value FROM json_each(:seeds))
GROUP BY memory_id
"""


def proximity(
    conn: Connection, seeds: Sequence[int], max_depth: int, *, hop_decay: float, symmetric: Sequence[str]
) -> dict[int, float]:
    """{memory id: best path weight} within ``max_depth`` hops of ``seeds`` (seeds left out).

    A path's weight is the product of its edges' weights times ``hop_decay`` per hop after the first;
    edges of a ``symmetric`` relation are also followed target -> source.
    """
    rows = conn.execute(
        _walk_sql(hop_decay, symmetric), {"seeds": json.dumps(list(seeds)), "max_depth": int(max_depth)}
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}

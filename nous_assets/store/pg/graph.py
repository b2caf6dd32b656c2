"""The memory graph on PostgreSQL: derived edge writes and the same weighted bounded walk as SQLite's
:func:`nous_assets.store.search.edges.proximity`, confined to one tenant at every hop."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import psycopg

_UPSERT_DERIVED = (
    "INSERT INTO edges(tenant_id, source_id, target_id, rel_type, weight, origin, created_at) "
    "VALUES (%s, %s, %s, %s, %s, 'derived', %s) ON CONFLICT (tenant_id, source_id, target_id, rel_type) "
    "DO UPDATE SET weight = excluded.weight WHERE edges.origin = 'derived'"
)
# One recursive term (PostgreSQL allows one reference to the CTE): an edge is followed forward from
# its source, and backward from its target when its relation is symmetric.
_WALK = """
WITH RECURSIVE connected(memory_id, weight, depth) AS (
    SELECT e.target_id, e.weight, 1 FROM edges e WHERE e.tenant_id = %(t)s AND e.source_id = ANY(%(seeds)s)
    UNION ALL
    SELECT e.source_id, e.weight, 1 FROM edges e
    WHERE e.tenant_id = %(t)s AND e.target_id = ANY(%(seeds)s) AND e.rel_type = ANY(%(sym)s)
    UNION ALL
    SELECT CASE WHEN e.source_id = c.memory_id THEN e.target_id ELSE e.source_id END,
           c.weight * e.weight * %(decay)s, c.depth + 1
    FROM connected c JOIN edges e ON e.tenant_id = %(t)s
        AND (e.source_id = c.memory_id OR (e.target_id = c.memory_id AND e.rel_type = ANY(%(sym)s)))
    WHERE c.depth < %(max_depth)s
)
SELECT memory_id, max(weight) FROM connected WHERE NOT (memory_id = ANY(%(seeds)s)) GROUP BY memory_id
"""


class PgGraphStore:
    """``edges`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def add_edges(self, rel_type: str, edges: Iterable[tuple[int, int, float]], *, at: str) -> None:
        rows = [(self.tenant_id, s, t, rel_type, w, at) for s, t, w in edges]
        if rows:
            with self.conn.transaction():
                self.conn.cursor().executemany(_UPSERT_DERIVED, rows)

    def traverse(
        self, seeds: Sequence[int], max_depth: int, *, hop_decay: float, symmetric: Sequence[str]
    ) -> dict[int, float]:
        if not seeds or max_depth < 1:
            return {}
        rows = self.conn.execute(
            _WALK,
            {"t": self.tenant_id, "seeds": [int(s) for s in seeds], "sym": list(symmetric),
             "decay": float(hop_decay), "max_depth": int(max_depth)},
        ).fetchall()  # fmt: skip
        return {int(r[0]): float(r[1]) for r in rows}

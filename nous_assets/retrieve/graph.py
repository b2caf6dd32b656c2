"""s_graph: proximity of memories to the already-selected ("active") ones through the edge graph.

The spec's recursive CTE walks ``source -> target`` up to 2 hops and keeps the MAX weight per memory,
halving at each extra hop. Two deliberate refinements, identical in SQL and in memory:

* **Direction.** Every edge is followed source -> target as in the spec. ``relates_to`` and
  ``contradicts`` are symmetric relations (the extractor and the projector store them one way
  only), so those are also followed target -> source. ``supersedes`` (newer -> older) and
  ``depends_on`` (dependant -> prerequisite) stay one-way: an active memory pulls in what it
  replaced or needs, not the reverse.
* **Path weight.** A hop multiplies the path's weight by the edge's weight and by 0.5 per hop
  after the first: depth 1 = w1, depth 2 = w1 * w2 * 0.5. The spec's literal SQL uses ``e.weight *
  0.5`` for the second hop, dropping w1, which would let a 0.05-strength first hop lead to a 0.5
  proximity; the product keeps a weak link weak.

Active memories themselves are left out of the result (they are already selected).
"""

from __future__ import annotations

from collections.abc import Iterable

from nous_assets.store.db import Connection
from nous_assets.store.search import edges as edge_store

HOP_DECAY = 0.5
SYMMETRIC_RELATIONS = ("relates_to", "contradicts")

def graph_proximity(conn: Connection, active_ids: Iterable[int], max_depth: int = 2) -> dict[int, float]:
    """{memory_id: proximity in [0, 1]} for memories within ``max_depth`` hops of ``active_ids``."""
    seeds = sorted({int(i) for i in active_ids})
    if not seeds or max_depth < 1:
        return {}
    return edge_store.proximity(conn, seeds, max_depth, hop_decay=HOP_DECAY, symmetric=SYMMETRIC_RELATIONS)


def proximity_in_memory(
    edges: Iterable[tuple[int, int, str, float]], active_ids: Iterable[int], max_depth: int = 2
) -> dict[int, float]:
    """The same traversal over ``(source_id, target_id, rel_type, weight)`` tuples (tests, offline use)."""
    adjacency: dict[int, list[tuple[int, float]]] = {}
    for source, target, rel_type, weight in edges:
        adjacency.setdefault(source, []).append((target, float(weight)))
        if rel_type in SYMMETRIC_RELATIONS:
            adjacency.setdefault(target, []).append((source, float(weight)))
    seeds = {int(i) for i in active_ids}
    best: dict[int, float] = {}
    frontier = [(seed, 1.0) for seed in seeds]
    for depth in range(1, max_depth + 1):
        decay = 1.0 if depth == 1 else HOP_DECAY
        next_frontier: list[tuple[int, float]] = []
        for node, path_weight in frontier:
            for neighbour, weight in adjacency.get(node, ()):
                value = path_weight * weight * decay
                next_frontier.append((neighbour, value))
                if neighbour not in seeds and value > best.get(neighbour, -1.0):
                    best[neighbour] = value
        frontier = next_frontier
    return best

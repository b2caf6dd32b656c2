"""Derived graph edges: similarity (``relates_to``) and causality (``causes``).

Event edges (``supersedes``, ``depends_on``, extraction ``relates_to``, ``contradicts``) come from the
log through the projector. This module adds what the pipeline can infer, marked ``origin='derived'``
and never overwriting an event edge:

* ``relates_to`` — concept Jaccard (and vector cosine when vectors exist) above a threshold, the few
  strongest neighbours per memory, weight = the similarity.
* ``causes`` — the D-T-D model (seed 004): learnings from consecutive points of one session follow
  each other causally, and a subagent's learnings sit between the parent learnings around its Task
  call (briefing before, debriefing after). Weight decays with the distance between the anchors.

Work is incremental: only memories projected since the ``edges`` checkpoint are (re)linked.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

from nous_assets.store.db import Connection, atomic
from nous_assets.store.search import edges as edge_store
from nous_assets.store.search import memory_search
from nous_assets.store.sqlite.projection import get_checkpoint, set_checkpoint
from nous_assets.timeutil import now_iso

CHECKPOINT = "edges"
MIN_JACCARD = 0.25
NEIGHBOURS = 5


@dataclass
class EdgeStats:
    memories: int = 0
    relates_to: int = 0
    causes: int = 0


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _concepts(conn: Connection, ids: Iterable[int]) -> dict[int, set[str]]:
    return defaultdict(set, memory_search.concepts_of(conn, ids))


def similarity_edges(conn: Connection, changed: list[int], vectors: dict[int, object] | None = None) -> list[tuple]:
    """(source, target, weight) for each changed memory's strongest concept neighbours."""
    mine = _concepts(conn, changed)
    scope = memory_search.scope_of_all(conn) if changed else {}
    edges = []
    for mid, concepts in mine.items():
        if not concepts:
            continue
        others = _concepts(conn, memory_search.most_sharing(conn, concepts, mid, limit=50))
        project, _ = scope.get(mid, (None, None))
        scored = []
        for other, theirs in others.items():
            other_project, other_scope = scope.get(other, (None, None))
            if other_project != project and other_scope != "global":
                continue
            weight = _jaccard(concepts, theirs)
            if vectors and mid in vectors and other in vectors:
                import numpy as np

                weight = max(weight, float(np.dot(vectors[mid], vectors[other])) if weight else 0.0)
            if weight >= MIN_JACCARD:
                scored.append((weight, other))
        for weight, other in sorted(scored, reverse=True)[:NEIGHBOURS]:
            edges.append((mid, other, round(min(weight, 1.0), 4)))
    return edges


def _anchor(provenance_json: str | None) -> tuple[str, int] | None:
    if not provenance_json:
        return None
    prov = json.loads(provenance_json)
    offsets = prov.get("line_offsets") or []
    if not offsets or not prov.get("source_path"):
        return None
    return prov["source_path"], min(offsets)


def causal_edges(conn: Connection, sessions: set[str], task_offsets: dict[str, tuple[str, str, int]]) -> list[tuple]:
    """D-T-D edges for the given batch sessions.

    ``task_offsets`` maps a subagent batch session (``<session>#agent-<id>``) to the parent's
    (batch session, transcript path, byte offset of the spawning Task call).
    """
    involved = set(sessions)
    for sub, (parent, _, _) in task_offsets.items():
        if sub in sessions or parent in sessions:
            involved |= {sub, parent}
    if not involved:
        return []
    chains: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for mid, session, prov in memory_search.provenance_of_sessions(conn, involved):
        anchor = _anchor(prov)
        if anchor:
            chains[session].append((anchor[1], mid))
    edges = []
    for chain in chains.values():
        chain.sort()
        for (a_off, a), (b_off, b) in zip(chain, chain[1:], strict=False):
            # consecutive learnings: strong when close in the transcript, fading with distance
            weight = max(0.2, 0.8 / (1 + (b_off - a_off) / 200_000))
            edges.append((a, b, round(weight, 4)))
    for sub, (parent, _path, offset) in task_offsets.items():
        child, parent_chain = sorted(chains.get(sub, [])), sorted(chains.get(parent, []))
        if not child or not parent_chain:
            continue
        before = [m for off, m in parent_chain if off < offset]
        after = [m for off, m in parent_chain if off > offset]
        if before:
            edges.append((before[-1], child[0][1], 0.7))  # briefing
        if after:
            edges.append((child[-1][1], after[0], 0.7))  # debriefing
    return edges


def derive_edges(
    conn: Connection,
    task_offsets: dict[str, tuple[str, str, int]] | None = None,
    vectors: dict[int, object] | None = None,
) -> EdgeStats:
    """Link memories projected since the last run; idempotent (re-running rewrites the same edges)."""
    stats = EdgeStats()
    last = get_checkpoint(conn, CHECKPOINT)
    changed, sessions = memory_search.changed_since(conn, last)
    upto = memory_search.latest_event_id(conn)
    stats.memories = len(changed)
    related = similarity_edges(conn, changed, vectors)
    causes = causal_edges(conn, sessions, task_offsets or {})
    now = now_iso()
    with atomic(conn):
        edge_store.upsert_derived(conn, "relates_to", [(s, t, w) for s, t, w in related if s != t], now)
        edge_store.upsert_derived(conn, "causes", [(s, t, w) for s, t, w in causes if s != t], now)
        set_checkpoint(conn, max(upto, last), CHECKPOINT)
    stats.relates_to, stats.causes = len(related), len(causes)
    return stats

"""``predict``: from a decision or action, the outcomes that followed it before, over causal edges.

The action is matched like a ``recall`` query (or named by memory id); from each matching memory the
``causes`` edges are followed forward — the learnings that came next in the same session, or across a
subagent's briefing and debriefing — and every outcome reached is scored by how well its seed matched times
the path's weight. Outcomes reached from several seeds keep the best path and count the seeds, so "every
time we did this, that followed" ranks above a single coincidence.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from nous_assets.mcp_server import inputs, render
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import RECALL_BUDGET_RANGE, Settings
from nous_assets.store.db import Connection
from nous_assets.store.search import causal_paths, memory_search

Walk = list[tuple[int, int, float, int]]  # (seed, follower, path weight, hops)
SEEDS = 8  # memories that match the action
MAX_DEPTH, HOP_DECAY = 2, 0.7  # what followed, and what followed that
MAX_OUTCOMES = 30
SEED_CHARS, OUTCOME_CHARS = 300, 500
SEED_FLOOR = 0.5
"""A seed matched by text must score at least half the best match's score. Retrieval ranks every candidate
with some query evidence, so the 8th result may share one word with the action; its followers would then be
predictions about a different action. Relative, because ``weighted`` and ``rrf`` fusion score on different
scales."""
OUTCOME_FLOOR = 0.25
"""An outcome's score is its seed's relative match times the causal path's weight (edge closeness, 0.7 per
extra hop). Below a quarter — say, a half-matching seed followed at weight 0.4 two hops away — what "followed"
is too weak a link to offer as a prediction; a best-matching seed's direct follower at weight 0.25 or more
always passes."""


def _seeds(conn: Connection, settings: Settings, embedder: Any, action: str, project_id: str | None) -> list:
    found = retrieve(conn, Query.from_text(action, project_id=project_id), settings, embedder=embedder, k=SEEDS)
    return [r for r in found if not r.is_episode]


def _outcomes(walk: Walk, seeds: dict[int, float], projects: dict[int, str]) -> list[dict[str, Any]]:
    """Every memory the ``walk`` reached forward from ``seeds`` (id -> match score) in its seed's project
    (``projects``: the project of every memory involved, only those allowed) that clears :data:`OUTCOME_FLOOR`:
    its best score, path and seeds."""
    best: dict[int, dict[str, Any]] = {}
    via: dict[int, set[int]] = defaultdict(set)
    for seed, follower, weight, depth in walk:
        value = seeds[seed] * weight
        if value < OUTCOME_FLOOR or projects.get(follower) is None or projects.get(follower) != projects.get(seed):
            continue
        via[follower].add(seed)
        if follower not in best or value > best[follower]["score"]:
            best[follower] = {"score": value, "after": seed, "hops": depth, "path_weight": weight}
    for follower, entry in best.items():
        entry["seen_after"] = len(via[follower])
    return sorted(({"memory": m, **e} for m, e in best.items()),
                  key=lambda e: (-e["seen_after"], -e["score"], e["memory"]))[:MAX_OUTCOMES]  # fmt: skip


def predict(
    conn: Connection,
    settings: Settings,
    embedder: Any,
    *,
    action: str | None = None,
    memory_id: int | None = None,
    project: str | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """What followed ``action`` (free text) or memory ``memory_id`` before: the matched ``seeds`` and the
    ``outcomes`` reached over causal edges, most often seen first, within ``budget`` characters."""
    if action is None and memory_id is None:
        raise inputs.InputError("give action (the decision or action, in words) or memory_id")
    if action is not None and memory_id is not None:
        raise inputs.InputError("give action or memory_id, not both")
    project_id = inputs.project(conn, project)
    limit = inputs.bounded(
        settings.thresholds.recall_budget_chars if budget is None else budget, "budget", *RECALL_BUDGET_RANGE
    )
    guard = render.Guard(conn)
    if memory_id is not None:
        memory_id = inputs.bounded(memory_id, "memory_id", 1, 2**62)
        rows = memory_search.rows_by_id(conn, [memory_id])
        if memory_id not in rows:
            raise inputs.InputError(f"no current memory #{memory_id}: use an id `recall` returned")
        seeds = {memory_id: 1.0}
        seed_rows = [rows[memory_id]]
        scores = {memory_id: 1.0}
    else:
        text = inputs.text(action, "action", max_chars=inputs.MAX_QUERY_CHARS)
        found = _seeds(conn, settings, embedder, text, project_id)
        top = max((r.score for r in found), default=1.0) or 1.0
        seed_rows = [r for r in found if r.score / top >= SEED_FLOOR]
        scores = {r.id: r.score for r in seed_rows}
        seeds = {i: s / top for i, s in scores.items()}  # the best match counts fully
    walk = causal_paths.followers(conn, list(seeds), max_depth=MAX_DEPTH, decay=HOP_DECAY)
    rows = memory_search.rows_by_id(conn, [*seeds, *(f for _, f, _, _ in walk)])
    projects = {i: r.project_id for i, r in rows.items() if project_id is None or r.project_id == project_id}
    outcomes = _outcomes(walk, seeds, projects)
    shaped = []
    for outcome in outcomes:
        row = rows.get(outcome["memory"])
        if row is None:
            continue
        shaped.append({
            "memory": row.id, "kind": row.kind, "date": render.day(row.valid_from), "project": row.project_id,
            "text": guard.text(row.content, OUTCOME_CHARS, memory_id=row.id)[0],
            "after": outcome["after"], "seen_after": outcome["seen_after"], "hops": outcome["hops"],
            "score": round(outcome["score"], 4), "session": row.source_session,
        })  # fmt: skip
    seed_items = [
        {"memory": r.id, "kind": r.kind, "date": render.day(r.valid_from), "match": round(scores[r.id], 4),
         "text": guard.text(r.content, SEED_CHARS, memory_id=r.id)[0]}
        for r in seed_rows
    ]  # fmt: skip
    head = {"note": render.NOTE, "project": project_id}
    head = {k: v for k, v in head.items() if v is not None}
    kept_seeds, _ = render.fit(seed_items, limit // 3, render.size(head) + 60)
    used = render.size(head) + 60 + sum(render.size(i) + 1 for i in kept_seeds)
    kept, left_out = render.fit(shaped, limit, used)
    return {**head, "seeds": kept_seeds, "outcomes": kept, "left_out": left_out}

"""Which memories to compare: the spec's candidate pairs for the NLI tier.

Two current memories of one project (a global memory counts for every project) are compared when they
share concepts (Jaccard >= ``concept_overlap_for_nli``, 0.5 by default) or lie close in vector space
(cosine >= ``nli_vector_cosine``), and only when their vector clocks are concurrent: a learning whose
session had read the other (a comparable clock) was derived after it and is no conflict (spec "Temporal
Reconciliation"). Comparing every pair would be quadratic; an inverted concept index and a blocked matrix
product keep 10,000 memories in seconds.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from nous_assets import clocks

MAX_CONCEPT_POSTINGS = 500  # a concept most memories share tells nothing about any two of them
NEIGHBOURS = 20  # the closest few per memory and signal: enough for conflicts, bounded work
_BLOCK = 1024


@dataclass(frozen=True)
class Item:
    """A memory as the NLI tier sees it."""

    id: int
    learning_id: str
    content: str
    project_id: str
    scope: str = "project"
    session: str = ""
    valid_from: str | None = None
    clock: Mapping[str, int] = field(default_factory=dict)


def concurrent(a: Item, b: Item) -> bool:
    """Neither learning was derived from the other (incomparable clocks; two empty clocks say nothing)."""
    if not a.clock and not b.clock:
        return a.session != b.session
    return clocks.compare(a.clock, b.clock) is clocks.Order.CONCURRENT


def _groups(items: Sequence[Item]) -> dict[str, list[Item]]:
    """Items per project, each global memory added to every project."""
    groups: dict[str, list[Item]] = defaultdict(list)
    glob = [it for it in items if it.scope == "global"]
    for it in items:
        if it.scope != "global":
            groups[it.project_id].append(it)
    if not groups and glob:
        groups[""] = []
    for members in groups.values():
        members.extend(glob)
    return groups


def concept_pairs(members: Sequence[Item], concepts: Mapping[int, set[str]], overlap: float) -> set[tuple[int, int]]:
    """Pairs of ``members`` whose concept sets have Jaccard >= ``overlap``."""
    postings: dict[str, list[int]] = defaultdict(list)
    for it in members:
        for concept in concepts.get(it.id, ()):
            postings[concept].append(it.id)
    out: set[tuple[int, int]] = set()
    for it in members:
        mine = concepts.get(it.id)
        if not mine:
            continue
        found: set[int] = set()  # reached through a concept few memories share; scored on all concepts
        for concept in mine:
            ids = postings[concept]
            if len(ids) <= MAX_CONCEPT_POSTINGS:
                found.update(other for other in ids if other > it.id)
        scored = []
        for other in found:
            theirs = concepts[other]
            jac = len(mine & theirs) / len(mine | theirs)
            if jac >= overlap:
                scored.append((-jac, other))
        out.update((it.id, other) for _, other in sorted(scored)[:NEIGHBOURS])
    return out


def vector_pairs(members: Sequence[Item], vectors: Mapping[int, bytes], cosine: float) -> set[tuple[int, int]]:
    """Pairs of ``members`` whose vectors have cosine >= ``cosine`` (the few nearest per memory)."""
    ids = [it.id for it in members if it.id in vectors]
    if len(ids) < 2:
        return set()
    dims = {len(vectors[i]) for i in ids}
    width = max(dims, key=lambda d: sum(len(vectors[i]) == d for i in ids))  # one model's vectors only
    ids = [i for i in ids if len(vectors[i]) == width]
    matrix = np.frombuffer(b"".join(vectors[i] for i in ids), dtype=np.float32).reshape(len(ids), -1)
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    matrix = matrix / np.where(norms == 0, 1, norms)
    out: set[tuple[int, int]] = set()
    for start in range(0, len(ids), _BLOCK):
        sims = matrix[start : start + _BLOCK] @ matrix.T
        for row, sim in enumerate(sims):
            me = start + row
            sim[me] = -1.0
            close = np.flatnonzero(sim >= cosine)
            if len(close) > NEIGHBOURS:
                close = close[np.argsort(-sim[close])[:NEIGHBOURS]]
            out.update((min(ids[me], ids[j]), max(ids[me], ids[j])) for j in close)
    return out


def candidate_pairs(
    items: Sequence[Item],
    concepts: Mapping[int, set[str]],
    vectors: Mapping[int, bytes],
    *,
    overlap: float,
    cosine: float,
) -> list[tuple[int, int]]:
    """Canonical ``(min, max)`` id pairs to classify, concurrent ones only, sorted."""
    by_id = {it.id: it for it in items}
    found: set[tuple[int, int]] = set()
    for members in _groups(items).values():
        found |= concept_pairs(members, concepts, overlap)
        found |= vector_pairs(members, vectors, cosine)
    return sorted(
        (a, b) for a, b in {(min(p), max(p)) for p in found} if a != b and concurrent(by_id[a], by_id[b])
    )


def items_from_rows(rows: Iterable[tuple]) -> list[Item]:
    """:class:`Item` per row of :func:`nous_assets.store.reads.nli_results.comparable_memories`."""
    out = []
    for mid, lid, content, project, scope, session, valid_from, clock_json in rows:
        clock = clocks.parse(clock_json) if clock_json else {}
        out.append(Item(int(mid), lid, content, project, scope or "project", session or "", valid_from, clock))
    return out

"""Clusters of alike memories in one scope, by HDBSCAN over the composite distances (seed 003, CX14 step 1).

HDBSCAN needs no cluster count, leaves memories too unique to consolidate as noise and copes with topics of
different density; ``min_cluster_size=2`` because two memories saying one thing are already worth one
observation. A noise memory then joins the cluster it is most alike when it passes the gate below. On sparse
data HDBSCAN also groups loosely related memories, so each cluster must pass a cohesion gate: the mean
similarity of its pairs at least :data:`COHESION`. A cluster that fails loses its least cohesive member until it
passes or falls under two members.

Deterministic: items are sorted by key before clustering, so the same memories, whatever order their events
came in, give the same clusters.
"""

from __future__ import annotations

from collections import defaultdict

from nous_assets.consolidate.similarity import Item, distances
from nous_assets.settings import Thresholds

COHESION = Thresholds.consolidation_cohesion
"""The configured gate (``thresholds.consolidation_cohesion``): mean pairwise similarity a cluster needs. On the dev
sets' stores, 0.72 groups only near-verbatim repeats (5 groups in 228 memories); 0.6 groups one topic's statements
(12: one hook failure seen twice, three rules of one runbook, one library swap told three ways) and nothing looser.
Quality may tighten it (:mod:`~nous_assets.consolidate.tuning`)."""

MAX_MEMBERS = 12
"""A larger group is a topic, not one observation: communities hold those."""


def clusters(items: list[Item], edges: set[frozenset[str]], cohesion: float = COHESION) -> list[tuple[str, ...]]:
    """Groups of two or more keys of ``items`` that say one thing, each sorted, the list sorted; ``cohesion``: the
    gate (the configured one, or as quality tuned it: :mod:`~nous_assets.consolidate.tuning`)."""
    ordered = sorted(items, key=lambda i: i.key)
    if len(ordered) < 2:
        return []
    matrix, scored = distances(ordered, edges)
    if not scored:
        return []
    # a small scope may be one topic: three memories of which two agree form one cluster, not noise (the gate
    # trims it); a large one never comes back as a single cluster of everything
    single = len(ordered) <= MAX_MEMBERS
    from sklearn.cluster import HDBSCAN  # 2-3 s to import: paid by the consolidation step, not by every process

    model = HDBSCAN(metric="precomputed", min_cluster_size=2, min_samples=1, allow_single_cluster=single, copy=True)
    labels = model.fit_predict(matrix)
    near: dict[int, dict[int, float]] = defaultdict(dict)
    for (a, b), value in scored.items():
        near[a][b] = near[b][a] = value
    groups: dict[int, list[int]] = defaultdict(list)
    for index, label in enumerate(labels):
        if label >= 0:
            groups[int(label)].append(index)
    _assign_noise([i for i, label in enumerate(labels) if label < 0], groups, labels, near, cohesion)
    out = []
    for members in groups.values():
        if len(members) > 2 * MAX_MEMBERS:
            continue  # a topic: no trimming makes it one statement
        kept = _cohesive(members, near, cohesion)
        if 2 <= len(kept) <= MAX_MEMBERS:
            out.append(tuple(sorted(ordered[i].key for i in kept)))
    return sorted(out)


def _assign_noise(
    noise: list[int], groups: dict[int, list[int]], labels, near: dict[int, dict[int, float]], cohesion: float
) -> None:
    """A memory HDBSCAN left as noise joins the cluster it is most alike, when its mean similarity to the members
    passes the gate (exemplar-based assignment, seed 004): density picks the tightest core of a topic, and a third
    telling of the same failure belongs with the two that are closest to each other. Only clusters holding one of
    its scored neighbours can be alike it."""
    for index in noise:
        options = sorted({int(labels[j]) for j in near[index] if labels[j] >= 0})
        scored = [(_affinity(index, groups[g], near), -g) for g in options if len(groups[g]) < MAX_MEMBERS]
        if scored and max(scored)[0] >= cohesion:
            groups[-max(scored)[1]].append(index)


def _affinity(index: int, members: list[int], near: dict[int, dict[int, float]]) -> float:
    return sum(near[index].get(m, 0.0) for m in members) / len(members)


def _cohesive(members: list[int], near: dict[int, dict[int, float]], cohesion: float) -> list[int]:
    """``members`` without their least cohesive ones until the mean pairwise similarity reaches the gate."""
    kept = sorted(members)

    def ties(m: int) -> float:
        return sum(near[m].get(k, 0.0) for k in kept if k != m)

    while len(kept) >= 2 and sum(ties(m) for m in kept) / (len(kept) * (len(kept) - 1)) < cohesion:
        kept.remove(min(kept, key=lambda m: (ties(m), m)))
    return kept

"""Rank fusion (RRF) and diversity re-ranking (MMR), as in the Cortex v2 retrieval design.

RRF combines rankings without having to make their raw scores comparable: an item's fused score
is ``sum(w / (k + rank))``. MMR then picks results one at a time, trading relevance against the
similarity to what was already picked, so ten paraphrases of one fact do not fill the packet.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence

import numpy as np

RRF_K = 60


def rrf(rankings: Sequence[Sequence[int]], k: int = RRF_K, weights: Sequence[float] | None = None) -> dict[int, float]:
    """Reciprocal Rank Fusion: ``score(d) = sum_i w_i / (k + rank_i(d))`` with 1-based ranks.

    Items missing from a ranking get nothing from it. ``weights`` (default all 1) scales each ranking.
    """
    scores: dict[int, float] = {}
    for i, ranking in enumerate(rankings):
        w = 1.0 if weights is None else float(weights[i])
        for rank, item in enumerate(ranking, start=1):
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return scores


def competition_ranks(values: Mapping[int, float]) -> dict[int, int]:
    """1-based ranks, highest value first; ties share the best rank ("1224"), so ties never decide order."""
    ordered = sorted(values.items(), key=lambda kv: -kv[1])
    ranks: dict[int, int] = {}
    previous: float | None = None
    rank = 0
    for position, (item, value) in enumerate(ordered, start=1):
        if previous is None or value != previous:
            rank = position
            previous = value
        ranks[item] = rank
    return ranks


def rrf_from_ranks(
    rank_maps: Sequence[Mapping[int, int]], k: int = RRF_K, weights: Sequence[float] | None = None
) -> dict[int, float]:
    """RRF over precomputed (possibly tied) 1-based ranks: ``sum_i w_i / (k + rank_i(d))``."""
    scores: dict[int, float] = {}
    for i, ranks in enumerate(rank_maps):
        w = 1.0 if weights is None else float(weights[i])
        for item, rank in ranks.items():
            scores[item] = scores.get(item, 0.0) + w / (k + rank)
    return scores


def jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    sa = a if isinstance(a, (set, frozenset)) else set(a)  # scoring compares hundreds of sets a query: no copies
    sb = b if isinstance(b, (set, frozenset)) else set(b)
    if not sa or not sb:
        return 0.0
    shared = len(sa & sb)
    return shared / (len(sa) + len(sb) - shared)


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    na, nb = float(np.linalg.norm(a)), float(np.linalg.norm(b))
    if na == 0.0 or nb == 0.0:
        return 0.0
    value = float(np.dot(a, b)) / (na * nb)
    return value if math.isfinite(value) else 0.0


VECTOR_BASELINE = 0.2
"""The cosine two unrelated memories already share: MiniLM's median over every pair of a project's memories is
0.19, 0.18 and 0.23 on the three dev stores. MMR counts only what lies above it, so a memory is not held back for
being about the same project as one picked before (dev3's "use Java 17" preference fell out of the top 10 next to a
note on the Java floor), and the scale matches the concept Jaccard turns are compared by, which is 0 for unrelated
turns."""


def similarity_from(
    vectors: Mapping[int, np.ndarray] | None, concepts: Mapping[int, Iterable[str]]
) -> Callable[[int, int], float]:
    """Pairwise similarity for MMR: cosine of the two vectors above :data:`VECTOR_BASELINE`, rescaled to [0, 1],
    when both exist, else concept Jaccard. The cosines come from one matrix product over the unit vectors (MMR asks
    for hundreds of pairs a query), so pass the vectors of the pool only."""
    concept_sets = {i: frozenset(c) for i, c in concepts.items()}
    with_vectors = [i for i, v in (vectors or {}).items() if v is not None]
    place = {i: n for n, i in enumerate(with_vectors)}
    cosines = np.zeros((0, 0))
    if with_vectors:
        matrix = np.stack([np.asarray(vectors[i], dtype=np.float64) for i in with_vectors])
        norms = np.linalg.norm(matrix, axis=1, keepdims=True)
        units = np.divide(matrix, norms, out=np.zeros_like(matrix), where=norms > 0)
        cosines = np.nan_to_num(units @ units.T, nan=0.0, posinf=0.0, neginf=0.0)

    def similarity(a: int, b: int) -> float:
        if a in place and b in place:
            return max(0.0, (float(cosines[place[a], place[b]]) - VECTOR_BASELINE) / (1.0 - VECTOR_BASELINE))
        return jaccard(concept_sets.get(a, ()), concept_sets.get(b, ()))

    return similarity


def mmr(
    candidates: Sequence[tuple[int, float]],
    similarity: Callable[[int, int], float],
    lambda_: float = 0.7,
    top_k: int = 12,
) -> list[int]:
    """Maximal Marginal Relevance: repeatedly take ``argmax lambda*rel - (1-lambda)*max_sim(selected)``.

    Relevance is divided by the best relevance first, so it shares similarity's [0, 1] scale whatever
    produced it (a weighted sum near 0.5 or an RRF score near 0.05). Ties go to the earlier candidate.
    Cost is O(top_k * n) similarity calls: each round only compares with the item just picked.
    """
    if top_k <= 0 or not candidates:
        return []
    best = max((rel for _, rel in candidates), default=0.0)
    scale = best if best > 0 else 1.0
    pool = [(item, rel / scale) for item, rel in candidates]
    max_sim = {item: 0.0 for item, _ in pool}
    selected: list[int] = []
    while pool and len(selected) < top_k:
        pick_index = 0
        pick_value = -math.inf
        for index, (item, rel) in enumerate(pool):
            value = lambda_ * rel - (1.0 - lambda_) * max_sim[item]
            if value > pick_value:
                pick_index, pick_value = index, value
        item, _ = pool.pop(pick_index)
        selected.append(item)
        for other, _ in pool:
            sim = similarity(item, other)
            if sim > max_sim[other]:
                max_sim[other] = sim
    return selected

"""``retrieve()``: the one retrieval entry point (injection cache, ``nous search``, LoCoMo benchmark).

gather candidates -> (optional) vector similarity -> seven-dimension score with the contradiction
fast path and the relevance floor -> short chunks that only announce what comes next discounted
(:mod:`.excerpt_shape`) -> claims that still hold ahead of refuted and superseded ones (:mod:`.status_rank`)
-> for a how-to question the brief's procedures and commands first (:mod:`.procedures`) -> MMR picks a
diverse top k -> those k in score order. MMR decides *which* memories make the cut (a near-duplicate of a
better one waits); the results are then listed in that order, so a packet cut short by its budget loses its
weakest memories. Vectors are strictly optional: without an embedder, without a stored vector, or on any
error from the embedder or sqlite-vec, retrieval degrades to s_vector = 0 (FTS + concepts + graph +
priors), as 002 §6's fallback chain prescribes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field, fields, replace
from typing import Any

import numpy as np

from nous_assets.embed import memory_embedding
from nous_assets.retrieve.candidates import gather, load_contradictions
from nous_assets.retrieve.excerpt_shape import discounted
from nous_assets.retrieve.fusion import mmr, similarity_from
from nous_assets.retrieve.procedures import procedures_first
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.scoring import MEMORY, Candidate, score
from nous_assets.retrieve.status_rank import by_status, closed_at, mark_rejected_chunks
from nous_assets.settings import Settings
from nous_assets.store.db import Connection

log = logging.getLogger(__name__)
MMR_POOL_FACTOR = 4  # MMR chooses among the best 4*k (at least 40): diversity, not a lottery ticket for the tail


@dataclass(slots=True)
class Result(Candidate):
    """One retrieved row (a memory, or a transcript chunk when ``is_episode``) with its score.

    ``breakdown`` (with ``explain``) has every dimension's raw and weighted value.
    """

    score: float = 0.0
    breakdown: dict[str, float] = field(default_factory=dict)


def _query_vector(query: Query, embedder: Any) -> np.ndarray | None:
    if query.query_vector is not None:
        return np.asarray(query.query_vector, dtype=np.float32)
    if embedder is None or not query.text.strip():
        return None
    try:
        return np.asarray(embedder.embed([query.text])[0], dtype=np.float32)
    except Exception as exc:  # a missing model or a network error must not break retrieval
        log.info("embedding the query failed (%s); falling back to text-only retrieval", exc)
        return None


def _vector_hits(
    conn: Connection, vector: np.ndarray, k: int, model: str | None, project_id: str | None
) -> list[tuple[int, float]] | None:
    try:  # only vectors of the query's model (during a migration old ones are not comparable), in its scope
        hits = memory_embedding.search(conn, vector, k, model=model, project_id=project_id)
        return [(int(i), float(s)) for i, s in hits]
    except Exception as exc:  # sqlite-vec missing/mismatched dimensions: FTS-only
        log.info("vector search failed (%s); falling back to text-only retrieval", exc)
        return None


def _vectors_for(
    conn: Connection, ids: list[int], model: str | None
) -> dict[int, np.ndarray] | None:
    try:
        return dict(memory_embedding.vectors_for(conn, ids, model=model))
    except Exception as exc:
        log.info("loading vectors failed (%s); diversity falls back to concept overlap", exc)
        return None


def _result(c: Candidate, value: float, breakdown: dict[str, float]) -> Result:
    """The candidate's row and signals as they are, plus its score."""
    return Result(**{f.name: getattr(c, f.name) for f in fields(Candidate)}, score=value, breakdown=breakdown)


def retrieve(
    conn: Connection,
    query: Query,
    settings: Settings,
    *,
    embedder: Any = None,
    k: int | None = None,
    explain: bool = False,
    include_episodes: bool = False,
) -> list[Result]:
    """The top ``k`` (default ``settings.retrieve.top_k``) memories for ``query``, diverse, in score order.

    ``embedder`` is an :class:`~nous_assets.embed.base.EmbeddingProvider` (or ``query.query_vector``
    is used as is). With ``explain`` each result's breakdown also holds ``rank`` (its place among all
    scored candidates; a gap means MMR passed over a near-duplicate) and ``candidates`` (how many passed
    the relevance floor and were scored).
    """
    top_k = settings.retrieve.top_k if k is None else int(k)
    if top_k <= 0:
        return []
    vector = _query_vector(query, embedder)
    model = getattr(embedder, "model", None)
    hits = (
        _vector_hits(conn, vector, settings.retrieve.candidates, model, query.project_id)
        if vector is not None
        else None
    )
    if vector is not None:
        query = replace(query, query_vector=vector)

    candidates = gather(conn, query, settings, vector_hits=hits)
    if include_episodes:
        from nous_assets.retrieve.episodic import chunk_candidates

        chunks = chunk_candidates(conn, query, settings, query_vector=vector)
        candidates = mark_rejected_chunks(conn, candidates + chunks)
    if not candidates:
        return []
    ids = [c.id for c in candidates if not c.is_episode]
    vectors = _vectors_for(conn, ids, model) if vector is not None else None
    scored = score(candidates, query, settings, vectors=vectors, contradictions=load_contradictions(conn, ids))
    by_key = {c.key: c for c in candidates}
    closed = {c.key for c in candidates if closed_at(c, query.as_at)}
    scored = by_status(discounted(scored, by_key), closed)
    scored = procedures_first(scored, by_key, query.text)
    pool = scored[: max(MMR_POOL_FACTOR * top_k, 40)]
    vectors = vectors or {}
    pooled = {s.key: vectors[s.key.id] for s in pool if s.key.row_kind == MEMORY and s.key.id in vectors}
    similarity = similarity_from(pooled, {s.key: by_key[s.key].concepts for s in pool})
    order = mmr([(s.key, s.score) for s in pool], similarity, settings.retrieve.mmr_lambda, top_k)
    ranked = {s.key: (rank, s) for rank, s in enumerate(pool, start=1)}
    results = []
    for key in sorted(order, key=lambda i: ranked[i][0]):  # pool order is score order (ties: newer first)
        rank, s = ranked[key]
        breakdown = {**s.breakdown, "rank": float(rank), "candidates": float(len(scored))} if explain else {}
        results.append(_result(by_key[key], s.score, breakdown))
    return results

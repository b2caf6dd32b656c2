"""The vector store over sqlite-vec: keep ``vectors`` in step with ``memories``, and search it.

``vectors`` (a vec0 table, cosine distance) and ``vector_meta`` (model, dimensions and content hash per
memory) are *derived* data: they can always be rebuilt from ``memories`` + ``concepts``. That makes the
spec's versioned embedding migration (CX19) simple:

* :func:`ensure_vector_table` compares the vec0 table's declared dimension with the configured one and,
  when they differ, drops and recreates it in one transaction, refilled from the vectors ``vector_meta``
  keeps at that dimension (the others are dropped and embedded again). The active model is recorded in
  ``nous_meta`` under ``embedding_model``.
* :func:`embed_pending` is the resumable background loop: it embeds memories that have no vector, a
  vector from another model, or a stale one (their enriched text changed), in batches, each written in
  its own transaction; it reuses a stored vector whenever another memory already has the same text
  (content-hash cache), drops vectors of memories that no longer exist (archived) and refiles those whose
  memory changed scope or project (:func:`refile`).
* :func:`search` with a ``project_id`` scans two vec0 partitions, the project's memories and the global
  ones (exact KNN in each, merged), not every vector; :func:`vectors_for` reads ``vector_meta`` by id.
* During a migration, retrieval embeds queries with the new model and :func:`search` / :func:`vectors_for`
  only return vectors of the active model; :func:`unembedded_ids` lists memories that must fall back to
  FTS-only scoring until they are re-embedded.

The SQL over those tables lives in :mod:`nous_assets.store.search.vectors` (the owner of ``vectors``,
``vector_meta`` and the ``embedding_model`` key); this module decides what to embed, checks what
providers return and turns vectors into bytes and back. KNN (``embedding MATCH ? AND k = ?``) allows at
most k = 4096.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from nous_assets.embed.base import EmbeddingError, EmbeddingProvider
from nous_assets.embed.enrich import content_hash, enrich
from nous_assets.store.db import Connection, atomic
from nous_assets.store.search import vectors as table
from nous_assets.timeutil import now_iso

__all__ = [
    "KNN_MAX_K",
    "META_KEY",
    "EmbedStats",
    "PendingMemory",
    "active_model",
    "coverage",
    "delete_orphans",
    "embed_pending",
    "ensure_vector_table",
    "pending",
    "refile",
    "search",
    "unembedded_ids",
    "vector_table_spec",
    "vectors_for",
]

TABLE = table.TABLE
META_KEY = table.META_KEY
KNN_MAX_K = 4096  # sqlite-vec: "k value in knn query too large ... the limit is 4096"
_DIM_RE = re.compile(r"\bembedding\s+float\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_METRIC_RE = re.compile(r"\bdistance_metric\s*=\s*(\w+)", re.IGNORECASE)
_PARTITION_RE = re.compile(r"\bpartition\s+key\b", re.IGNORECASE)
_NORM_TOLERANCE = 1e-3


class PendingMemory(NamedTuple):
    memory_id: int
    text: str  # the enriched text (see nous_assets.embed.enrich)
    hash: str


@dataclass
class EmbedStats:
    """What one :func:`embed_pending` run did; ``remaining`` > 0 means run it again."""

    model: str = ""
    dimensions: int = 0
    embedded: int = 0  # vectors computed by the provider
    reused_from_cache: int = 0  # vectors copied from another memory with the same enriched text
    deleted: int = 0  # vectors of memories that no longer exist
    refiled: int = 0  # vectors moved to the partition of their memory's new scope or project
    remaining: int = 0  # memories still pending after the run
    batches: int = 0
    recreated: bool = False  # the vec0 table was rebuilt for a new dimension
    seconds: float = 0.0


class TableSpec(NamedTuple):
    dimensions: int
    metric: str
    partitioned: bool = True  # by scope (migration 013); a table without the partition key is rebuilt


# ---------------------------------------------------------------------------------------------- table


def vector_table_spec(conn: Connection) -> TableSpec | None:
    """Dimension and distance metric declared by the vec0 table's ``CREATE`` statement (None: no table)."""
    sql = table.table_sql(conn)
    if sql is None:
        return None
    match = _DIM_RE.search(sql)
    if match is None:
        raise EmbeddingError(f"cannot read the vector dimension of table {TABLE!r} from its schema: {sql!r}")
    metric = _METRIC_RE.search(sql)
    partitioned = _PARTITION_RE.search(sql) is not None
    return TableSpec(int(match.group(1)), metric.group(1).lower() if metric else "l2", partitioned)


def active_model(conn: Connection) -> tuple[str, int] | None:
    """(model, dimensions) recorded by the last :func:`ensure_vector_table` call, if any."""
    info = table.model_info(conn)
    if not info:
        return None
    return str(info["model"]), int(info["dimensions"])


def ensure_vector_table(conn: Connection, dimensions: int, *, model: str | None = None) -> bool:
    """Make ``vectors`` a cosine vec0 table of ``dimensions``; True when it had to be (re)created.

    A different declared dimension (or metric, or a table without the scope partitions) rebuilds the table in
    one transaction from the vectors ``vector_meta`` keeps at that dimension; the others are dropped:
    vectors are derived data and :func:`embed_pending` embeds them again. With ``model`` the
    active (model, dimensions) is recorded in ``nous_meta`` (key ``embedding_model``) when it changes;
    vectors of a previous model with the same dimension stay until re-embedded but are never searched.
    """
    dimensions = int(dimensions)
    if dimensions < 1:
        raise EmbeddingError(f"embedding dimensions must be positive, got {dimensions}")
    with atomic(conn):
        spec = vector_table_spec(conn)
        recreated = (
            spec is None or spec.dimensions != dimensions or spec.metric != "cosine" or not spec.partitioned
        )
        if recreated:
            table.recreate_table(conn, dimensions, exists=spec is not None)
        if model is not None:
            info = table.model_info(conn)
            if recreated or info is None or (info["model"], int(info["dimensions"])) != (model, dimensions):
                table.write_model_info(
                    conn,
                    {"model": model, "dimensions": dimensions, "activated_at": now_iso(), "status": "pending"},
                )
    return recreated


def _set_status(conn: Connection, model: str, dimensions: int, status: str) -> None:
    with atomic(conn):
        info = table.model_info(conn)
        if info is None or (info["model"], int(info["dimensions"])) != (model, dimensions):
            return  # another model became active meanwhile
        if info.get("status") != status:
            info["status"] = status
            info["status_at"] = now_iso()
            table.write_model_info(conn, info)


# -------------------------------------------------------------------------------------------- pending


def pending(conn: Connection, model: str, dimensions: int, limit: int | None = None) -> list[PendingMemory]:
    """Memories whose vector is missing, from another model/dimension, or stale (enriched text changed).

    Every memory row is embedded, superseded or expired ones included: retrieval applies time filters.
    """
    out: list[PendingMemory] = []
    if limit is not None and limit <= 0:
        return out
    for row in table.memory_rows(conn, model, dimensions):
        concepts = row["concept_list"].split("\x1f") if row["concept_list"] else ()
        text = enrich(row, concepts)
        digest = content_hash(text, model, dimensions)
        if digest == row["vector_hash"]:
            continue
        out.append(PendingMemory(int(row["id"]), text, digest))
        if limit is not None and len(out) >= limit:
            break
    return out


def delete_orphans(conn: Connection) -> int:
    """Drop vectors and vector_meta rows of memories that no longer exist; returns how many memories."""
    with atomic(conn):
        return table.delete_orphans(conn)


def refile(conn: Connection) -> int:
    """Move the vectors of memories whose scope or project changed to their new partition; how many."""
    with atomic(conn):
        return table.refile(conn)


def _cached_blobs(conn: Connection, hashes: Iterable[str], model: str, dimensions: int) -> dict[str, bytes]:
    """hash -> stored vector bytes, for hashes some memory already has a vector for (same model/dims)."""
    return table.blobs_by_hash(conn, sorted(set(hashes)), model, dimensions)


def _checked(vectors: np.ndarray, count: int, dimensions: int, who: str) -> np.ndarray:
    """Provider output as a (count, dimensions) float32 matrix of unit rows, or a clear error."""
    matrix = np.asarray(vectors, dtype=np.float32)
    if matrix.shape != (count, dimensions):
        raise EmbeddingError(f"{who} returned shape {matrix.shape}, expected ({count}, {dimensions})")
    norms = np.linalg.norm(matrix, axis=1)
    if not np.all(np.isfinite(matrix)) or np.any(norms == 0):
        raise EmbeddingError(f"{who} returned a zero or non-finite vector (cosine distance would be undefined)")
    if np.any(np.abs(norms - 1.0) > _NORM_TOLERANCE):
        matrix = matrix / norms[:, None]
    return np.ascontiguousarray(matrix, dtype=np.float32)


def _write_batch(conn: Connection, blobs: dict[int, bytes], hashes: dict[int, str], model: str, dimensions: int) -> int:
    """Replace the vectors of ``blobs``' memories (those that still exist) in one transaction."""
    with atomic(conn):
        return table.replace(conn, blobs, hashes, model, dimensions, now_iso())


def embed_pending(
    conn: Connection,
    provider: EmbeddingProvider,
    *,
    batch_size: int = 64,
    max_batches: int | None = None,
    progress: Callable[[EmbedStats], None] | None = None,
    pause_seconds: float = 0.0,
    deadline: float | None = None,
) -> EmbedStats:
    """Bring ``vectors`` up to date with ``memories`` for ``provider`` (resumable, batch by batch).

    The provider is called outside any transaction; each batch's vectors are then written in one short
    transaction, so an interrupted run keeps the finished batches and the next run continues. Texts whose
    hash some memory already has a vector for are copied instead of embedded, and equal texts within a
    batch are embedded once. ``max_batches`` bounds the work per call (``remaining`` tells what is left);
    ``pause_seconds`` sleeps between batches so foreground readers are not starved. ``deadline`` (a
    ``time.monotonic()`` value) is checked before every batch but the first, so a run's time budget holds
    to within one batch and every call still makes progress.
    """
    if batch_size < 1:
        raise EmbeddingError(f"batch_size must be positive, got {batch_size}")
    started = time.perf_counter()
    model, dimensions = provider.model, int(provider.dimensions)
    who = f"embedding provider {provider.name!r} ({model})"
    stats = EmbedStats(model=model, dimensions=dimensions)
    stats.recreated = ensure_vector_table(conn, dimensions, model=model)
    stats.deleted = delete_orphans(conn)
    stats.refiled = refile(conn)
    limit = batch_size * max_batches if max_batches is not None else None
    todo = pending(conn, model, dimensions, limit)
    for start in range(0, len(todo), batch_size):
        batch = todo[start : start + batch_size]
        if stats.batches and deadline is not None and time.monotonic() >= deadline:
            break
        if stats.batches and pause_seconds > 0:
            time.sleep(pause_seconds)
        blobs_by_hash = _cached_blobs(conn, (p.hash for p in batch), model, dimensions)
        fresh: dict[str, str] = {}  # hash -> text, each distinct text once
        for item in batch:
            if item.hash not in blobs_by_hash:
                fresh.setdefault(item.hash, item.text)
        if fresh:
            matrix = _checked(provider.embed(list(fresh.values())), len(fresh), dimensions, who)
            for digest, vector in zip(fresh, matrix, strict=True):
                blobs_by_hash[digest] = vector.tobytes()
        blobs = {p.memory_id: blobs_by_hash[p.hash] for p in batch}
        hashes = {p.memory_id: p.hash for p in batch}
        _write_batch(conn, blobs, hashes, model, dimensions)
        stats.embedded += len(fresh)
        stats.reused_from_cache += len(batch) - len(fresh)  # cache hits + repeats within the batch
        stats.batches += 1
        stats.seconds = time.perf_counter() - started
        if progress is not None:
            progress(stats)
    stats.remaining = len(pending(conn, model, dimensions))
    _set_status(conn, model, dimensions, "complete" if stats.remaining == 0 else "in_progress")
    stats.seconds = time.perf_counter() - started
    return stats


# --------------------------------------------------------------------------------------------- reading


def _model_filter(conn: Connection, model: str | None, dimensions: int) -> str | None:
    """The model whose vectors may be returned (``model``, else the active one), or None when every stored
    vector qualifies (nothing recorded, or no vector of another model/dimension) and no filter is needed."""
    if model is None:
        active = active_model(conn)
        if active is None:
            return None
        model = active[0]
    return model if table.has_other_models(conn, model, dimensions) else None


def _query_vector(conn: Connection, query_vec: Sequence[float] | np.ndarray) -> tuple[np.ndarray, int]:
    spec = vector_table_spec(conn)
    if spec is None:
        raise EmbeddingError("no vector table: run the embedding job (embed_pending) first")
    query = np.asarray(query_vec, dtype=np.float32).reshape(-1)
    if query.shape[0] != spec.dimensions:
        raise EmbeddingError(
            f"query vector has {query.shape[0]} dimensions but the vector table holds {spec.dimensions}; "
            "embed the query with the active embedding model"
        )
    norm = float(np.linalg.norm(query))
    if not np.isfinite(norm) or norm == 0:
        raise EmbeddingError("query vector is zero or not finite")
    return np.ascontiguousarray(query / norm, dtype=np.float32), spec.dimensions


def search(
    conn: Connection,
    query_vec: Sequence[float] | np.ndarray,
    k: int,
    *,
    memory_ids: Iterable[int] | None = None,
    model: str | None = None,
    project_id: str | None = None,
) -> list[tuple[int, float]]:
    """The ``k`` nearest memories as (memory_id, cosine similarity), most similar first.

    ``memory_ids`` restricts the search to those memories (an exact pre-filter inside the KNN scan).
    ``project_id`` scans only that project's memories and the global-scope ones (their vec0 partitions):
    the exact top ``k`` of what a query of that project may see, without reading every other project's.
    Only vectors of ``model`` (default: the active model) are considered, so a half-finished migration
    never compares vectors from two models. ``k`` is capped at sqlite-vec's limit of 4096.
    """
    k = min(int(k), KNN_MAX_K)
    if k <= 0:
        return []
    query, dimensions = _query_vector(conn, query_vec)
    wanted = None if memory_ids is None else sorted({int(i) for i in memory_ids})
    if wanted is not None and not wanted:
        return []
    model = _model_filter(conn, model, dimensions)
    knn_k = min(k, len(wanted)) if wanted is not None else k
    partitions = None if project_id is None else table.partitions_for(project_id)
    rows = table.knn(
        conn, query.tobytes(), knn_k, memory_ids=wanted, model=model, dimensions=dimensions, partitions=partitions
    )
    allowed = None if wanted is None else set(wanted)
    out: list[tuple[int, float]] = []
    for memory_id, distance in rows:
        if distance is None or (allowed is not None and memory_id not in allowed):
            continue  # NULL distance: a zero vector (never written by embed_pending)
        out.append((int(memory_id), 1.0 - float(distance)))
    return out[:k]


def vectors_for(conn: Connection, memory_ids: Iterable[int], *, model: str | None = None) -> dict[int, np.ndarray]:
    """memory_id -> unit float32 vector for those of ``memory_ids`` embedded with ``model`` (default: active).

    For MMR and pairwise similarity (``a @ b`` is the cosine similarity).
    """
    wanted = sorted({int(i) for i in memory_ids})
    if not wanted:
        return {}
    spec = vector_table_spec(conn)
    if spec is None:
        return {}
    model = _model_filter(conn, model, spec.dimensions)
    if model is not None:
        wanted = table.of_model(conn, wanted, model, spec.dimensions)
    return {
        memory_id: np.frombuffer(blob, dtype=np.float32).copy()
        for memory_id, blob in table.blobs_for(conn, wanted).items()
    }


def coverage(conn: Connection, model: str, dimensions: int) -> tuple[int, int]:
    """(memories with a vector of this model and dimension, all memories)."""
    return table.coverage(conn, model, dimensions)


def unembedded_ids(conn: Connection, model: str, dimensions: int) -> set[int]:
    """Memories with no vector from this model and dimension: score them with FTS only (CX19)."""
    return table.unembedded_ids(conn, model, dimensions)

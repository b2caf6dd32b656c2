"""Vectors for episodic transcript chunks (``chunk_vectors``), kept like the memory vectors.

Same contract as :mod:`nous_assets.embed.memory_embedding` — derived data, one model at a time, recreated on a
dimension change, resumable batches — but keyed by ``transcript_chunks.id`` and embedding the raw
message text (chunks have no type or concepts to enrich with). The SQL is
:mod:`nous_assets.store.chunk_vectors`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence

import numpy as np

from nous_assets.capture.episodes import store_chunks
from nous_assets.embed.base import EmbeddingProvider
from nous_assets.embed.enrich import content_hash
from nous_assets.store import chunk_vectors as table
from nous_assets.store.db import Connection, atomic
from nous_assets.timeutil import now_iso
from nous_assets.turns import Turn

_DIM_RE = re.compile(r"float\s*\[\s*(\d+)\s*\]", re.IGNORECASE)
_PARTITION_RE = re.compile(r"\bpartition\s+key\b", re.IGNORECASE)


def ensure_chunk_table(conn: Connection, dimensions: int) -> bool:
    """Recreate ``chunk_vectors`` when its dimension differs from the provider's (or it lacks the folder
    partitions); True if recreated."""
    sql = table.table_sql(conn)
    current = int(m.group(1)) if sql and (m := _DIM_RE.search(sql)) else None
    if current == dimensions and _PARTITION_RE.search(sql or ""):
        return False
    with atomic(conn):
        table.recreate_table(conn, dimensions)
    return True


def pending_chunk_count(conn: Connection, model: str, dimensions: int) -> int:
    """Chunks without a vector of this model and dimension."""
    return table.pending_count(conn, model, dimensions)


def embed_pending_chunks(
    conn: Connection,
    provider: EmbeddingProvider,
    *,
    batch_size: int = 64,
    max_batches: int | None = None,
    deadline: float | None = None,
) -> tuple[int, int]:
    """Embed chunks without a vector of the provider's model; returns (embedded, remaining).

    Reads one batch of chunk text at a time: a first backfill can hold far more transcript text than
    should sit in memory at once. Stops after ``max_batches``, or before any batch but the first once
    ``deadline`` (a ``time.monotonic()`` value) has passed, so a run's time budget holds.
    """
    model, dims = provider.model, int(provider.dimensions)
    ensure_chunk_table(conn, dims)
    done = batches = 0
    while max_batches is None or batches < max_batches:
        if batches and deadline is not None and time.monotonic() >= deadline:
            break
        batch = table.pending_texts(conn, model, dims, batch_size)
        if not batch:
            break
        vectors = np.asarray(provider.embed([text for _, text in batch]), dtype=np.float32)
        now = now_iso()
        with atomic(conn):
            for (chunk_id, text), vector in zip(batch, vectors, strict=True):
                table.put(conn, chunk_id, vector.tobytes(), model, dims, content_hash(text, model, dims), now)
        done += len(batch)
        batches += 1
    return done, pending_chunk_count(conn, model, dims)


def search_chunks(
    conn: Connection,
    query_vec: np.ndarray,
    k: int,
    *,
    chunk_ids: Iterable[int] | None = None,
    project_id: str | None = None,
) -> list[tuple[int, float]]:
    """KNN over chunk vectors: (chunk_id, cosine similarity), best first; optionally within ``chunk_ids``.

    ``project_id`` scans only the folders that project's chunks can be in (their vec0 partitions), not every
    chunk; the caller still applies the project's exact scope to what comes back.
    """
    vec = np.asarray(query_vec, dtype=np.float32)
    k = max(1, min(int(k), table.KNN_MAX_K))
    try:
        folders = None if project_id is None else table.folders_for(conn, project_id)
        rows = table.knn(conn, vec.tobytes(), k, chunk_ids=chunk_ids, folders=folders)
    except Exception:  # dimension mismatch during a migration, or no table yet: no vector evidence
        return []
    return [(int(cid), 1.0 - float(dist)) for cid, dist in rows]


def forget_chunk_vectors(conn: Connection, chunk_ids: Iterable[int]) -> None:
    """Drop the vectors of chunks whose text changed, so the next embedding pass redoes them."""
    ids = [int(i) for i in chunk_ids]
    if not ids:
        return
    with atomic(conn):
        for chunk_id in ids:
            table.delete(conn, chunk_id)


def upsert_chunks(conn: Connection, turns: Sequence[Turn]) -> tuple[int, int]:
    """Store the turns' chunks and drop the vectors of the ones whose text changed, in one transaction;
    (new, changed). Capture owns the chunk rows, this package their vectors: this is where the two meet."""
    with atomic(conn):
        new, changed = store_chunks(conn, turns)
        forget_chunk_vectors(conn, changed)
    return new, len(changed)

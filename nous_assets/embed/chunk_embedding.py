"""Vectors for episodic transcript chunks (``chunk_vectors``), kept like the memory vectors.

Same contract as :mod:`nous_assets.embed.memory_embedding` — derived data, one model at a time, recreated on a
dimension change, resumable batches — but keyed by ``transcript_chunks.id`` and embedding the raw
message text (chunks have no type or concepts to enrich with). The SQL is
:mod:`nous_assets.store.search.chunk_vectors`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from itertools import islice

import numpy as np

from nous_assets.capture.episodes import store_chunks
from nous_assets.embed.base import EmbeddingProvider
from nous_assets.embed.enrich import content_hash
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import chunk_concepts
from nous_assets.store.search import chunk_vectors as table
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


def skipped_chunk_count(conn: Connection, model: str, dimensions: int) -> int:
    """Chunks of this model left to full-text search only (too few words to be worth a vector)."""
    return table.skipped_count(conn, model, dimensions)


_WORD_RE = re.compile(r"[^\W\d_]{2,}")


def worth_embedding(text: str, min_words: int) -> bool:
    """Whether a chunk carries enough words to be found by meaning: at least ``min_words`` runs of two or more
    letters. Acknowledgements, slash commands and bare symbols ("ok", "continue", "/mcp", "✅") fail by shape;
    their vectors would only crowd the nearest neighbours of short queries, and FTS still finds them."""
    return min_words <= 0 or len(list(islice(_WORD_RE.finditer(text), min_words))) >= min_words


def drop_other_variants(conn: Connection, model: str, dimensions: int) -> int:
    """Forget chunk vectors made by another model or variant (e.g. float32 after a switch to bfloat16), so a
    search never ranks vectors of two variants against each other; the chunks become pending. Returns how many."""
    stale = table.other_model_ids(conn, model, dimensions)
    for start in range(0, len(stale), 1000):
        forget_chunk_vectors(conn, stale[start : start + 1000])
    return len(stale)


def embed_pending_chunks(
    conn: Connection,
    provider: EmbeddingProvider,
    *,
    batch_size: int = 64,
    max_batches: int | None = None,
    deadline: float | None = None,
    min_words: int = 0,
) -> tuple[int, int]:
    """Embed chunks without a vector of the provider's model; returns (done, remaining).

    The whole backlog is ordered by text length first (ids and lengths only): each batch then holds texts of
    about one length, so the model pads little (one long text in a batch of short ones pads them all), and
    short chunks go first, so a budget-limited run covers the most chunks. Text is read one batch at a time: a
    first backfill can hold far more transcript text than should sit in memory at once. A batch's vectors
    are written in one transaction. Chunks with fewer than ``min_words`` words get a skip mark instead of a
    vector (they count as done). Stops after ``max_batches``, or before any batch but the first once
    ``deadline`` (a ``time.monotonic()`` value) has passed, so a run's time budget holds.
    """
    model, dims = provider.model, int(provider.dimensions)
    ensure_chunk_table(conn, dims)
    drop_other_variants(conn, model, dims)
    order = [chunk_id for chunk_id, _ in sorted(table.pending_lengths(conn, model, dims), key=lambda r: (r[1], r[0]))]
    done = 0
    for batches, start in enumerate(range(0, len(order), batch_size)):
        if max_batches is not None and batches >= max_batches:
            break
        if batches and deadline is not None and time.monotonic() >= deadline:
            break
        batch = table.texts(conn, order[start : start + batch_size])
        keep, skip = [], []
        for chunk_id, text in batch:
            (keep if worth_embedding(text, min_words) else skip).append((chunk_id, text))
        vectors = np.asarray(provider.embed([text for _, text in keep]), dtype=np.float32) if keep else []
        now = now_iso()
        rows = [
            (chunk_id, vector.tobytes(), content_hash(text, model, dims))
            for (chunk_id, text), vector in zip(keep, vectors, strict=True)
        ]
        with atomic(conn):
            table.put_many(conn, rows, model, dims, now)
            table.mark_skipped(conn, [(i, content_hash(t, model, dims)) for i, t in skip], model, dims, now)
        done += len(batch)
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
        folders = None if project_id is None else transcript_chunks.folders_for(conn, project_id)
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
        for chunk_id in changed:  # their concepts were mined from the old text too
            chunk_concepts.forget(conn, chunk_id)
    return new, len(changed)

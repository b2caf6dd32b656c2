"""The episodic chunk vector tables: ``chunk_vectors`` (sqlite-vec vec0, cosine) and ``chunk_vector_meta``.

Only SQL lives here; :mod:`nous_assets.embed.chunk_embedding` decides what to embed. Like the memory vectors they
are derived data (rebuilt from ``transcript_chunks``), one model at a time, keyed by the chunk's id.
Vectors travel as float32 bytes.

Partitions (migration 014): ``chunk_vectors.folder`` is a vec0 partition key, the Claude Code folder the chunk
was read from (``transcript_chunks.project_id``, fixed for a chunk's life). A project's query scans the folders
its chunks can live in (``transcript_chunks.folders_for``), each exactly, instead of every chunk vector.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from nous_assets.store.db import Connection

KNN_MAX_K = 4096  # sqlite-vec's limit for k

_PENDING = (
    "FROM transcript_chunks c LEFT JOIN chunk_vector_meta v ON v.chunk_id = c.id "
    "WHERE v.chunk_id IS NULL OR v.model != ? OR v.dimensions != ?"
)


def table_sql(conn: Connection) -> str | None:
    """The ``CREATE`` statement of ``chunk_vectors`` (None: no table); its declared dimension is in it."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE name = 'chunk_vectors'").fetchone()
    return row[0] if row is not None and row[0] else None


def recreate_table(conn: Connection, dimensions: int) -> None:
    """Drop and create ``chunk_vectors`` for ``dimensions`` and empty its meta. Call inside a transaction."""
    conn.execute("DROP TABLE IF EXISTS chunk_vectors")
    conn.execute(
        f"CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY, folder TEXT PARTITION KEY, "
        f"embedding FLOAT[{int(dimensions)}] distance_metric=cosine)"
    )
    conn.execute("DELETE FROM chunk_vector_meta")


def pending_count(conn: Connection, model: str | None, dimensions: int) -> int:
    """Chunks without a vector of this model and dimension (every chunk when ``model`` is None)."""
    if model is None:
        return int(conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0])
    return int(conn.execute(f"SELECT count(*) {_PENDING}", (model, int(dimensions))).fetchone()[0])


def pending_texts(conn: Connection, model: str, dimensions: int, limit: int) -> list[tuple[int, str]]:
    """(chunk_id, text) of up to ``limit`` chunks without a vector of this model, in id order."""
    rows = conn.execute(
        f"SELECT c.id, c.text {_PENDING} ORDER BY c.id LIMIT ?", (model, int(dimensions), limit)
    ).fetchall()
    return [(int(r[0]), r[1]) for r in rows]


def put(conn: Connection, chunk_id: int, vector: bytes, model: str, dimensions: int, digest: str, stamp: str) -> None:
    """Store (replace) one chunk's vector and its bookkeeping. Call inside a transaction."""
    put_many(conn, [(chunk_id, vector, digest)], model, dimensions, stamp)


def delete(conn: Connection, chunk_id: int, *, meta: bool = True) -> None:
    """Forget one chunk's vector (and, with ``meta``, its bookkeeping, so it is embedded again)."""
    conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (chunk_id,))
    if meta:
        conn.execute("DELETE FROM chunk_vector_meta WHERE chunk_id = ?", (chunk_id,))


def knn(
    conn: Connection,
    query: bytes,
    k: int,
    *,
    chunk_ids: Iterable[int] | None = None,
    folders: Sequence[str] | None = None,
) -> Sequence[tuple[int, float]]:
    """(chunk_id, cosine distance) of the ``k`` nearest chunk vectors to ``query``, nearest first.

    ``chunk_ids`` pre-filters inside the scan; ``folders`` scans only those partitions (exact top ``k`` of
    their union); None scans every chunk vector.
    """
    sql = "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ?"
    params: list[object] = [query, k]
    if chunk_ids is not None:
        sql += " AND chunk_id IN (SELECT value FROM json_each(?))"
        params.append(json.dumps(sorted(set(chunk_ids))))
    if folders is None:
        return conn.execute(sql + " ORDER BY distance", params).fetchall()
    merged = [
        (int(cid), float(dist))
        for folder in dict.fromkeys(folders)
        for cid, dist in conn.execute(sql + " AND folder = ? ORDER BY distance", [*params, folder])
    ]
    return sorted(merged, key=lambda hit: (hit[1], hit[0]))[:k]


# -- batched writes and skipped chunks (the embedding side: nous_assets.embed.chunk_embedding) ----------------

SKIPPED_PREFIX = "skip:"
"""``content_hash`` prefix of a chunk judged not worth a vector: its meta row says "done for this model" (so it
is not pending) while ``chunk_vectors`` holds nothing for it; full-text search still finds it."""

_UPSERT_META = (
    "INSERT INTO chunk_vector_meta(chunk_id, model, dimensions, content_hash, embedded_at) "
    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET model = excluded.model, "
    "dimensions = excluded.dimensions, content_hash = excluded.content_hash, embedded_at = excluded.embedded_at"
)


def pending_lengths(conn: Connection, model: str, dimensions: int) -> list[tuple[int, int]]:
    """(chunk_id, length of its text) of every chunk without a vector of this model: small, so a whole backlog
    can be ordered by length before any text is read."""
    rows = conn.execute(f"SELECT c.id, length(c.text) {_PENDING}", (model, int(dimensions))).fetchall()
    return [(int(r[0]), int(r[1])) for r in rows]


def texts(conn: Connection, chunk_ids: Sequence[int]) -> list[tuple[int, str]]:
    """(chunk_id, text) of these chunks, in the order given (chunks deleted meanwhile are left out)."""
    found: dict[int, str] = {}
    for start in range(0, len(chunk_ids), 500):
        part = chunk_ids[start : start + 500]
        marks = ",".join("?" * len(part))
        found.update(conn.execute(f"SELECT id, text FROM transcript_chunks WHERE id IN ({marks})", part).fetchall())
    return [(int(i), found[i]) for i in chunk_ids if i in found]


def put_many(conn: Connection, rows: Sequence[tuple[int, bytes, str]], model: str, dimensions: int, stamp: str) -> None:
    """Store (replace) the vectors of many chunks, ``(chunk_id, vector, digest)``. Call inside a transaction."""
    conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", [(r[0],) for r in rows])
    conn.executemany(  # the partition key is the chunk's folder, read where it is stored
        "INSERT INTO chunk_vectors(chunk_id, folder, embedding) SELECT id, project_id, ? FROM transcript_chunks "
        "WHERE id = ?",
        [(r[1], r[0]) for r in rows],
    )
    conn.executemany(_UPSERT_META, [(r[0], model, dimensions, r[2], stamp) for r in rows])


def mark_skipped(conn: Connection, rows: Sequence[tuple[int, str]], model: str, dimensions: int, stamp: str) -> None:
    """Record ``(chunk_id, digest)`` chunks as done for this model without a vector. Call inside a transaction."""
    conn.executemany("DELETE FROM chunk_vectors WHERE chunk_id = ?", [(r[0],) for r in rows])
    conn.executemany(_UPSERT_META, [(r[0], model, dimensions, SKIPPED_PREFIX + r[1], stamp) for r in rows])


def skipped_count(conn: Connection, model: str, dimensions: int) -> int:
    """Chunks of this model left without a vector on purpose."""
    return int(
        conn.execute(
            "SELECT count(*) FROM chunk_vector_meta WHERE model = ? AND dimensions = ? AND content_hash LIKE ?",
            (model, int(dimensions), SKIPPED_PREFIX + "%"),
        ).fetchone()[0]
    )


def other_model_ids(conn: Connection, model: str, dimensions: int) -> list[int]:
    """Chunks whose stored vector (or skip mark) is of another model or dimension."""
    rows = conn.execute(
        "SELECT chunk_id FROM chunk_vector_meta WHERE model != ? OR dimensions != ?", (model, int(dimensions))
    ).fetchall()
    return [int(r[0]) for r in rows]

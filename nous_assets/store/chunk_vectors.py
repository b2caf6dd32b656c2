"""The episodic chunk vector tables: ``chunk_vectors`` (sqlite-vec vec0, cosine) and ``chunk_vector_meta``.

Only SQL lives here; :mod:`nous_assets.embed.chunk_embedding` decides what to embed. Like the memory vectors they
are derived data (rebuilt from ``transcript_chunks``), one model at a time, keyed by the chunk's id.
Vectors travel as float32 bytes.
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
        f"CREATE VIRTUAL TABLE chunk_vectors USING vec0(chunk_id INTEGER PRIMARY KEY, "
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
    delete(conn, chunk_id, meta=False)
    conn.execute("INSERT INTO chunk_vectors(chunk_id, embedding) VALUES (?, ?)", (chunk_id, vector))
    conn.execute(
        "INSERT INTO chunk_vector_meta(chunk_id, model, dimensions, content_hash, embedded_at) "
        "VALUES (?, ?, ?, ?, ?) ON CONFLICT(chunk_id) DO UPDATE SET model = excluded.model, "
        "dimensions = excluded.dimensions, content_hash = excluded.content_hash, "
        "embedded_at = excluded.embedded_at",
        (chunk_id, model, dimensions, digest, stamp),
    )


def delete(conn: Connection, chunk_id: int, *, meta: bool = True) -> None:
    """Forget one chunk's vector (and, with ``meta``, its bookkeeping, so it is embedded again)."""
    conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (chunk_id,))
    if meta:
        conn.execute("DELETE FROM chunk_vector_meta WHERE chunk_id = ?", (chunk_id,))


def knn(
    conn: Connection, query: bytes, k: int, *, chunk_ids: Iterable[int] | None = None
) -> Sequence[tuple[int, float]]:
    """(chunk_id, cosine distance) of the ``k`` nearest chunk vectors to ``query``; optionally within ``chunk_ids``."""
    if chunk_ids is None:
        return conn.execute(
            "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ? ORDER BY distance",
            (query, k),
        ).fetchall()
    return conn.execute(
        "SELECT chunk_id, distance FROM chunk_vectors WHERE embedding MATCH ? AND k = ? "
        "AND chunk_id IN (SELECT value FROM json_each(?)) ORDER BY distance",
        (query, k, json.dumps(sorted(set(chunk_ids)))),
    ).fetchall()

"""Memory vectors on PostgreSQL with pgvector: cosine HNSW search, filtered by tenant and model.

One ``embedding vector`` column holds any dimension; each dimension in use gets its own partial HNSW
expression index (``embedding::vector(d)`` where ``dimensions = d``), created on the first upsert of that
dimension, and searches use the same expression so the index serves them. The tenant and model filters
run inside the index scan with pgvector's iterative scan (``hnsw.iterative_scan``), so a tenant with few
vectors among many still gets its ``top_k`` nearest instead of an empty post-filtered page.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

import numpy as np
import psycopg

_EF_SEARCH = 100


def _dims(dimensions: int) -> int:
    if isinstance(dimensions, bool) or not isinstance(dimensions, int) or not 0 < dimensions <= 16_000:
        raise ValueError(f"vector dimension must be in 1..16000, got {dimensions!r}")
    return dimensions


def _vector(values: Sequence[float]) -> np.ndarray:
    vec = np.asarray(values, dtype=np.float32)
    if vec.ndim != 1 or not np.isfinite(vec).all():
        raise ValueError("a vector must be one row of finite numbers")
    return vec


class PgVectorStore:
    """``memory_vectors`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def _ensure_index(self, dimensions: int) -> None:
        d = _dims(dimensions)
        self.conn.execute(
            f"CREATE INDEX IF NOT EXISTS idx_memory_vectors_hnsw_{d} ON memory_vectors "
            f"USING hnsw ((embedding::vector({d})) vector_cosine_ops) WHERE dimensions = {d}"
        )

    def upsert(
        self, vectors: Mapping[int, Sequence[float]], *, model: str, content_hashes: Mapping[int, str], at: str
    ) -> int:
        if not vectors:
            return 0
        arrays = {int(mid): _vector(v) for mid, v in vectors.items()}
        dims = {len(v) for v in arrays.values()}
        if len(dims) != 1:
            raise ValueError(f"vectors of one upsert must share a dimension, got {sorted(dims)}")
        (dimensions,) = dims
        with self.conn.transaction():
            self._ensure_index(dimensions)
            alive = {
                r[0]
                for r in self.conn.execute(
                    "SELECT id FROM memories WHERE tenant_id = %s AND id = ANY(%s)", (self.tenant_id, sorted(arrays))
                )
            }
            rows = [
                (self.tenant_id, mid, model, dimensions, content_hashes[mid], arrays[mid], at)
                for mid in sorted(alive)
            ]
            if rows:
                self.conn.cursor().executemany(
                    "INSERT INTO memory_vectors(tenant_id, memory_id, model, dimensions, content_hash, embedding, "
                    "embedded_at) VALUES (%s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, memory_id) DO UPDATE "
                    "SET model = excluded.model, dimensions = excluded.dimensions, "
                    "content_hash = excluded.content_hash, embedding = excluded.embedding, "
                    "embedded_at = excluded.embedded_at",
                    rows,
                )
        return len(rows)

    def search(
        self, query: Sequence[float], top_k: int, *, model: str, memory_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        vec = _vector(query)
        d = _dims(len(vec))
        if top_k <= 0:
            return []
        where = "dimensions = %(d)s AND model = %(m)s"
        params: dict[str, object] = {"t": self.tenant_id, "d": d, "m": model, "q": vec, "k": int(top_k)}
        if memory_ids is not None:
            where += " AND memory_id = ANY(%(ids)s)"
            params["ids"] = [int(i) for i in memory_ids]
        with self.conn.transaction():
            self.conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {_EF_SEARCH}")
            rows = self.conn.execute(
                f"SELECT memory_id, embedding::vector({d}) <=> %(q)s::vector({d}) AS distance FROM memory_vectors "
                f"WHERE tenant_id = %(t)s AND {where} "
                f"ORDER BY embedding::vector({d}) <=> %(q)s::vector({d}) LIMIT %(k)s",
                params,
            ).fetchall()
        return [(int(mid), float(dist)) for mid, dist in rows]

    def delete(self, memory_ids: Iterable[int]) -> int:
        ids = sorted({int(i) for i in memory_ids})
        if not ids:
            return 0
        return self.conn.execute(
            "DELETE FROM memory_vectors WHERE tenant_id = %s AND memory_id = ANY(%s)", (self.tenant_id, ids)
        ).rowcount

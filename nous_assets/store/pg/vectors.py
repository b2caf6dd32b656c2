"""Memory vectors on PostgreSQL with pgvector: cosine HNSW search, filtered by tenant and model.

One ``embedding vector`` column holds any dimension; each dimension in use gets its own partial HNSW
expression index (``embedding::vector(d)`` where ``dimensions = d``), created on the first upsert of that
dimension, and searches use the same expression so the index serves them. The table is hash-partitioned by
tenant (migration 004), so a search walks the graph of one partition, shared with few other tenants.

Within the partition the tenant and model filters run inside the index scan with pgvector's iterative scan
(``hnsw.iterative_scan``). Where that still yields fewer than ``top_k`` rows (a tenant with few vectors next
to a big one: the scan stops at ``hnsw.max_scan_tuples``), and whenever the caller names the candidate ids,
the search is exact over the tenant's own rows, which are few in both cases: a tenant always gets its
``top_k`` nearest, never a short post-filtered page.
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


def ensure_index(conn: psycopg.Connection, dimensions: int) -> None:
    """Create the HNSW index of ``dimensions`` (on every partition) unless it exists.

    Called by each upsert; a bulk load defers it (``PgVectorStore(..., index_on_upsert=False)``) and calls it
    once after the rows are in, since building the graph once is far cheaper than inserting row by row.
    """
    d = _dims(dimensions)
    conn.execute(
        f"CREATE INDEX IF NOT EXISTS idx_memory_vectors_hnsw_{d} ON memory_vectors "
        f"USING hnsw ((embedding::vector({d})) vector_cosine_ops) WHERE dimensions = {d}"
    )


class PgVectorStore:
    """``memory_vectors`` rows of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str, *, index_on_upsert: bool = True) -> None:
        self.conn = conn
        self.tenant_id = tenant_id
        self.index_on_upsert = index_on_upsert

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
            if self.index_on_upsert:
                ensure_index(self.conn, dimensions)
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
        params: dict[str, object] = {"t": self.tenant_id, "d": d, "m": model, "q": vec, "k": int(top_k)}
        if memory_ids is not None:
            params["ids"] = [int(i) for i in memory_ids]
            return self._exact(params)
        with self.conn.transaction():
            self.conn.execute("SET LOCAL hnsw.iterative_scan = strict_order")
            self.conn.execute(f"SET LOCAL hnsw.ef_search = {_EF_SEARCH}")
            rows = self.conn.execute(
                f"SELECT memory_id, embedding::vector({d}) <=> %(q)s::vector({d}) AS distance FROM memory_vectors "
                "WHERE tenant_id = %(t)s AND dimensions = %(d)s AND model = %(m)s "
                f"ORDER BY embedding::vector({d}) <=> %(q)s::vector({d}) LIMIT %(k)s",
                params,
            ).fetchall()
        if len(rows) < top_k:  # the index scan gave up before finding top_k of this tenant: count exactly
            return self._exact(params)
        return [(int(mid), float(dist)) for mid, dist in rows]

    def _exact(self, params: dict[str, object]) -> list[tuple[int, float]]:
        """Exact cosine order over the tenant's rows (the bare column: no index yields this order)."""
        ids = " AND memory_id = ANY(%(ids)s)" if "ids" in params else ""
        rows = self.conn.execute(
            "SELECT memory_id, embedding <=> %(q)s::vector AS distance FROM memory_vectors "
            f"WHERE tenant_id = %(t)s AND dimensions = %(d)s AND model = %(m)s{ids} "
            "ORDER BY distance, memory_id LIMIT %(k)s",
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

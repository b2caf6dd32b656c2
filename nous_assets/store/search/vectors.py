"""The memory vector tables: ``vectors`` (sqlite-vec vec0, cosine) and ``vector_meta``, plus the active
embedding model recorded in ``nous_meta`` under ``embedding_model``.

Only SQL lives here; :mod:`nous_assets.embed.memory_embedding` decides what to embed and checks the vectors.
Vectors travel as float32 bytes so this module needs neither numpy nor a provider.

sqlite-vec notes: vec0 has no UPSERT and ``INSERT OR REPLACE`` fails on the primary key, so a changed
vector is delete + insert. A constraint ``memory_id IN (...)`` is applied *inside* the KNN scan (exact
pre-filter), but any other condition (a join, a column of another table) would only filter the k rows
afterwards, so every filter here is expressed as ``memory_id IN (subquery)``.

Partitions (migration 013): ``vectors.part`` is a vec0 partition key, ``'g'`` for a global-scope memory and
``'p:' || project_id`` for a project-scope one, so a project's query scans two partitions (exact KNN within
each) instead of every vector. ``vector_meta`` keeps the float32 bytes (``embedding``) and the partition each
vector was filed under (``part``): vectors are loaded by id from there (vec0 answers ``memory_id IN (...)``
with a scan of the whole table) and ``vectors`` is rebuilt from there when its dimension changes.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence

import numpy as np

from nous_assets.store import meta
from nous_assets.store.db import Connection, atomic

TABLE = "vectors"
META_KEY = "embedding_model"
_CREATE = (
    "CREATE VIRTUAL TABLE vectors USING vec0(\n"
    "    memory_id INTEGER PRIMARY KEY,\n"
    "    part TEXT PARTITION KEY,\n"
    "    embedding FLOAT[{dimensions}] distance_metric=cosine\n"
    ")"
)
_IDS_JSON = "SELECT value FROM json_each(?)"
GLOBAL_PART = "g"
# the partition a memory's vector belongs in, from its ``memories`` row ``m``
_PART_OF = "CASE WHEN m.scope = 'global' THEN 'g' ELSE 'p:' || m.project_id END"


def partitions_for(project_id: str) -> list[str]:
    """The partitions a query of ``project_id`` scans: its own memories and every global-scope one."""
    return [f"p:{project_id}", GLOBAL_PART]


def table_sql(conn: Connection) -> str | None:
    """The ``CREATE`` statement of the vec0 table (None: no table); its declared dimension is in it."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone()
    return row[0] if row is not None and row[0] else None


def recreate_table(conn: Connection, dimensions: int, *, exists: bool) -> None:
    """Drop (when it ``exists``) and create the vec0 table for ``dimensions``, refilled from ``vector_meta``.

    Vectors are derived data: those ``vector_meta`` holds at this dimension go back in (a table rebuilt for
    a new layout keeps them), the bookkeeping of any other dimension is dropped so they are embedded again.
    Call inside a transaction.
    """
    dimensions = int(dimensions)
    if exists:
        conn.execute(f"DROP TABLE {TABLE}")
    conn.execute(_CREATE.format(dimensions=dimensions))
    conn.execute(
        "DELETE FROM vector_meta WHERE dimensions != ? OR embedding IS NULL OR length(embedding) != ?",
        (dimensions, 4 * dimensions),
    )
    conn.execute(
        f"UPDATE vector_meta SET part = (SELECT {_PART_OF} FROM memories m WHERE m.id = vector_meta.memory_id)"
    )
    conn.execute(
        f"INSERT INTO {TABLE}(memory_id, part, embedding) SELECT memory_id, part, embedding FROM vector_meta "
        "WHERE part IS NOT NULL ORDER BY part, memory_id"
    )


def model_info(conn: Connection) -> dict | None:
    """The recorded active model (``model``, ``dimensions``, ``status``...), or None when absent or unreadable."""
    value = meta.get(conn, META_KEY)
    if value is None:
        return None
    try:
        info = json.loads(value)
    except ValueError:
        return None
    if not isinstance(info, dict) or "model" not in info or "dimensions" not in info:
        return None
    return info


def write_model_info(conn: Connection, info: Mapping) -> None:
    meta.put(conn, META_KEY, json.dumps(dict(info), sort_keys=True))


def memory_rows(conn: Connection, model: str, dimensions: int) -> Iterator[sqlite3.Row]:
    """Every memory with its concepts (``concept_list``, joined by U+001F) and its vector's ``vector_hash``.

    Memories without a usable vector come first, then the most reinforced, then the newest (spec CX19:
    important memories are re-embedded first).
    """
    return conn.execute(
        "SELECT m.id, m.type, m.kind, m.domain, m.content, "
        "(SELECT group_concat(c.concept, char(31)) FROM concepts c WHERE c.memory_id = m.id) AS concept_list, "
        "vm.content_hash AS vector_hash "
        "FROM memories m LEFT JOIN vector_meta vm ON vm.memory_id = m.id "
        "ORDER BY (vm.memory_id IS NULL OR vm.model IS NOT ? OR vm.dimensions IS NOT ?) DESC, "
        "m.reinforcement_score DESC, m.id DESC",
        (model, dimensions),
    )


def delete_orphans(conn: Connection) -> int:
    """Drop vectors and vector_meta rows of memories that no longer exist; returns how many memories.

    Call inside a transaction.
    """
    orphans = {
        int(r[0])
        for r in conn.execute(f"SELECT memory_id FROM {TABLE} WHERE memory_id NOT IN (SELECT id FROM memories)")
    }
    orphans |= {
        int(r[0])
        for r in conn.execute("SELECT memory_id FROM vector_meta WHERE memory_id NOT IN (SELECT id FROM memories)")
    }
    if orphans:
        ids = json.dumps(sorted(orphans))
        conn.execute(f"DELETE FROM {TABLE} WHERE memory_id IN ({_IDS_JSON})", (ids,))
        conn.execute(f"DELETE FROM vector_meta WHERE memory_id IN ({_IDS_JSON})", (ids,))
    return len(orphans)


def blobs_by_hash(conn: Connection, hashes: Sequence[str], model: str, dimensions: int) -> dict[str, bytes]:
    """hash -> stored vector bytes, for hashes some memory already has a vector for (same model/dims)."""
    if not hashes:
        return {}
    owner: dict[int, str] = {}
    for row in conn.execute(
        f"SELECT memory_id, content_hash FROM vector_meta WHERE content_hash IN ({_IDS_JSON}) "
        "AND model = ? AND dimensions = ?",
        (json.dumps(list(hashes)), model, dimensions),
    ):
        owner.setdefault(int(row[0]), row[1])
    if not owner:
        return {}
    blobs: dict[str, bytes] = {}
    for memory_id, blob in blobs_for(conn, owner).items():
        blobs.setdefault(owner[memory_id], blob)
    return blobs


def replace(
    conn: Connection, blobs: Mapping[int, bytes], hashes: Mapping[int, str], model: str, dimensions: int, stamp: str
) -> int:
    """Replace the vectors of ``blobs``' memories (those that still exist); returns how many were written.

    Call inside a transaction.
    """
    ids = json.dumps(sorted(blobs))
    alive = {
        int(r[0]): r[1]
        for r in conn.execute(f"SELECT m.id, {_PART_OF} FROM memories m WHERE m.id IN ({_IDS_JSON})", (ids,))
    }
    conn.execute(f"DELETE FROM {TABLE} WHERE memory_id IN ({_IDS_JSON})", (ids,))
    rows = sorted((mid, alive[mid], blob) for mid, blob in blobs.items() if mid in alive)
    conn.executemany(f"INSERT INTO {TABLE}(memory_id, part, embedding) VALUES (?, ?, ?)", rows)
    conn.executemany(
        "INSERT INTO vector_meta(memory_id, model, dimensions, content_hash, embedded_at, part, embedding) "
        "VALUES (?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET model = excluded.model, dimensions = excluded.dimensions, "
        "content_hash = excluded.content_hash, embedded_at = excluded.embedded_at, part = excluded.part, "
        "embedding = excluded.embedding",
        [(mid, model, dimensions, hashes[mid], stamp, part, blob) for mid, part, blob in rows],
    )
    gone = json.dumps(sorted(set(blobs) - set(alive)))
    conn.execute(f"DELETE FROM vector_meta WHERE memory_id IN ({_IDS_JSON})", (gone,))
    return len(rows)


def refile(conn: Connection) -> int:
    """Move vectors whose memory changed scope or project into the partition it now belongs in; how many.

    vec0 cannot update a partition key, so each is deleted and inserted again from ``vector_meta``'s bytes.
    Call inside a transaction.
    """
    moved = conn.execute(
        f"SELECT vm.memory_id, {_PART_OF}, vm.embedding FROM vector_meta vm JOIN memories m ON m.id = vm.memory_id "
        f"WHERE vm.part IS NOT ({_PART_OF}) AND vm.embedding IS NOT NULL"
    ).fetchall()
    for memory_id, part, blob in moved:
        conn.execute(f"DELETE FROM {TABLE} WHERE memory_id = ?", (memory_id,))
        conn.execute(f"INSERT INTO {TABLE}(memory_id, part, embedding) VALUES (?, ?, ?)", (memory_id, part, blob))
        conn.execute("UPDATE vector_meta SET part = ? WHERE memory_id = ?", (part, memory_id))
    return len(moved)


def has_other_models(conn: Connection, model: str, dimensions: int) -> bool:
    """Whether any stored vector was made by another model or dimension (then searches must filter).

    Four range probes of ``idx_vector_meta_model``, never a scan (``!=`` would read every row): every query
    asks this.
    """
    return bool(
        conn.execute(
            "SELECT EXISTS(SELECT 1 FROM vector_meta WHERE model < ?1) "
            "OR EXISTS(SELECT 1 FROM vector_meta WHERE model > ?1) "
            "OR EXISTS(SELECT 1 FROM vector_meta WHERE model = ?1 AND dimensions < ?2) "
            "OR EXISTS(SELECT 1 FROM vector_meta WHERE model = ?1 AND dimensions > ?2)",
            (model, dimensions),
        ).fetchone()[0]
    )


def knn(
    conn: Connection,
    query: bytes,
    k: int,
    *,
    memory_ids: Sequence[int] | None = None,
    model: str | None = None,
    dimensions: int = 0,
    partitions: Sequence[str] | None = None,
) -> list[tuple[int, float | None]]:
    """(memory_id, cosine distance) of the ``k`` nearest vectors to ``query`` (float32 bytes), nearest first.

    ``memory_ids`` pre-filters inside the scan; ``model`` keeps only vectors of that model and ``dimensions``;
    ``partitions`` (see :func:`partitions_for`) scans only those, each exactly, and merges: the result is the
    exact top ``k`` of their union. None scans every vector.
    """
    if partitions is not None:
        merged = [
            hit
            for part in dict.fromkeys(partitions)
            for hit in _knn(conn, query, k, memory_ids=memory_ids, model=model, dimensions=dimensions, part=part)
        ]
        return sorted(merged, key=lambda hit: (hit[1] is None, hit[1] or 0.0, hit[0]))[:k]
    return _knn(conn, query, k, memory_ids=memory_ids, model=model, dimensions=dimensions, part=None)


def _knn(
    conn: Connection,
    query: bytes,
    k: int,
    *,
    memory_ids: Sequence[int] | None,
    model: str | None,
    dimensions: int,
    part: str | None,
) -> list[tuple[int, float | None]]:
    """One vec0 KNN query, within partition ``part`` when given."""
    sql = f"SELECT memory_id, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ?"
    params: list[object] = [query, k]
    if part is not None:
        sql += " AND part = ?"
        params.append(part)
    if model is not None:
        sql += " AND memory_id IN (SELECT memory_id FROM vector_meta WHERE model = ? AND dimensions = ?"
        params += [model, dimensions]
        if memory_ids is not None:
            sql += f" AND memory_id IN ({_IDS_JSON})"
            params.append(json.dumps(list(memory_ids)))
        sql += ")"
    elif memory_ids is not None:
        sql += f" AND memory_id IN ({_IDS_JSON})"
        params.append(json.dumps(list(memory_ids)))
    sql += " ORDER BY distance"
    return [(int(memory_id), distance) for memory_id, distance in conn.execute(sql, params)]


def of_model(conn: Connection, memory_ids: Iterable[int], model: str, dimensions: int) -> list[int]:
    """Those of ``memory_ids`` whose vector was made by ``model`` at ``dimensions``."""
    rows = conn.execute(
        f"SELECT memory_id FROM vector_meta WHERE memory_id IN ({_IDS_JSON}) AND model = ? AND dimensions = ?",
        (json.dumps(sorted(memory_ids)), model, dimensions),
    )
    return sorted(int(r[0]) for r in rows)


def blobs_for(conn: Connection, memory_ids: Iterable[int]) -> dict[int, bytes]:
    """memory_id -> stored vector bytes for those of ``memory_ids`` that have one (primary-key lookups)."""
    rows = conn.execute(
        f"SELECT memory_id, embedding FROM vector_meta WHERE memory_id IN ({_IDS_JSON}) AND embedding IS NOT NULL",
        (json.dumps(sorted(memory_ids)),),
    )
    return {int(memory_id): bytes(blob) for memory_id, blob in rows}


def coverage(conn: Connection, model: str, dimensions: int) -> tuple[int, int]:
    """(memories with a vector of this model and dimension, all memories)."""
    total = int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    embedded = int(
        conn.execute(
            "SELECT count(*) FROM memories m JOIN vector_meta vm ON vm.memory_id = m.id "
            "WHERE vm.model = ? AND vm.dimensions = ?",
            (model, dimensions),
        ).fetchone()[0]
    )
    return embedded, total


def unembedded_ids(conn: Connection, model: str, dimensions: int) -> set[int]:
    """Memories with no vector from this model and dimension: score them with FTS only (CX19)."""
    return {
        int(r[0])
        for r in conn.execute(
            "SELECT m.id FROM memories m LEFT JOIN vector_meta vm "
            "ON vm.memory_id = m.id AND vm.model = ? AND vm.dimensions = ? WHERE vm.memory_id IS NULL",
            (model, dimensions),
        )
    }


def unembedded_count(conn: Connection, model: str | None, dimensions: int) -> int:
    """How many memories have no vector of this model and dimension (every memory when ``model`` is None)."""
    if model is None:
        return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])
    return len(unembedded_ids(conn, model, dimensions))


def _blob(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SqliteVectorStore:
    """The sqlite-vec ``vectors`` table and ``vector_meta`` (this module's functions, over one connection).

    The vec0 table has one dimension: an upsert of another dimension starts the table over (vectors are
    derived data, as ``embed.memory_embedding`` treats a model change), where PostgreSQL keeps both.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def upsert(
        self, vectors_: Mapping[int, Sequence[float]], *, model: str, content_hashes: Mapping[int, str], at: str
    ) -> int:
        if not vectors_:
            return 0
        dims = {len(v) for v in vectors_.values()}
        if len(dims) != 1:
            raise ValueError(f"vectors of one upsert must share a dimension, got {sorted(dims)}")
        (dimensions,) = dims
        with atomic(self.conn):
            table = table_sql(self.conn)
            if table is None or f"FLOAT[{dimensions}]" not in table.upper():
                recreate_table(self.conn, dimensions, exists=table is not None)
            blobs = {mid: _blob(v) for mid, v in vectors_.items()}
            return replace(self.conn, blobs, dict(content_hashes), model, dimensions, at)

    def search(
        self, query: Sequence[float], top_k: int, *, model: str, memory_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        table = table_sql(self.conn)
        if table is None or f"FLOAT[{len(query)}]" not in table.upper():
            return []  # the table holds one dimension: no stored vector can be of this one
        hits = knn(self.conn, _blob(query), top_k, memory_ids=memory_ids, model=model, dimensions=len(query))
        return [(mid, float(d)) for mid, d in hits if d is not None]

    def delete(self, memory_ids: Iterable[int]) -> int:
        ids = sorted(set(memory_ids))
        if not ids or table_sql(self.conn) is None:
            return 0
        with atomic(self.conn):
            marks = ",".join("?" * len(ids))
            self.conn.execute(f"DELETE FROM vectors WHERE memory_id IN ({marks})", ids)
            return self.conn.execute(f"DELETE FROM vector_meta WHERE memory_id IN ({marks})", ids).rowcount

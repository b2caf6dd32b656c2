"""The memory vector tables: ``vectors`` (sqlite-vec vec0, cosine) and ``vector_meta``, plus the active
embedding model recorded in ``nous_meta`` under ``embedding_model``.

Only SQL lives here; :mod:`nous_assets.embed.memory_embedding` decides what to embed and checks the vectors.
Vectors travel as float32 bytes so this module needs neither numpy nor a provider.

sqlite-vec notes: vec0 has no UPSERT and ``INSERT OR REPLACE`` fails on the primary key, so a changed
vector is delete + insert. A constraint ``memory_id IN (...)`` is applied *inside* the KNN scan (exact
pre-filter), but any other condition (a join, a column of another table) would only filter the k rows
afterwards, so every filter here is expressed as ``memory_id IN (subquery)``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence

from nous_assets.store.db import Connection

TABLE = "vectors"
META_KEY = "embedding_model"
_CREATE = (
    "CREATE VIRTUAL TABLE vectors USING vec0(\n"
    "    memory_id INTEGER PRIMARY KEY,\n"
    "    embedding FLOAT[{dimensions}] distance_metric=cosine\n"
    ")"
)
_IDS_JSON = "SELECT value FROM json_each(?)"


def table_sql(conn: Connection) -> str | None:
    """The ``CREATE`` statement of the vec0 table (None: no table); its declared dimension is in it."""
    row = conn.execute("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?", (TABLE,)).fetchone()
    return row[0] if row is not None and row[0] else None


def recreate_table(conn: Connection, dimensions: int, *, exists: bool) -> None:
    """Drop (when it ``exists``) and create the vec0 table for ``dimensions``; empty ``vector_meta``.

    Vectors are derived data, so a new dimension simply starts over. Call inside a transaction.
    """
    if exists:
        conn.execute(f"DROP TABLE {TABLE}")
    conn.execute(_CREATE.format(dimensions=int(dimensions)))
    conn.execute("DELETE FROM vector_meta")


def model_info(conn: Connection) -> dict | None:
    """The recorded active model (``model``, ``dimensions``, ``status``...), or None when absent or unreadable."""
    row = conn.execute("SELECT value FROM nous_meta WHERE key = ?", (META_KEY,)).fetchone()
    if row is None:
        return None
    try:
        info = json.loads(row[0])
    except ValueError:
        return None
    if not isinstance(info, dict) or "model" not in info or "dimensions" not in info:
        return None
    return info


def write_model_info(conn: Connection, info: Mapping) -> None:
    conn.execute(
        "INSERT INTO nous_meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (META_KEY, json.dumps(dict(info), sort_keys=True)),
    )


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
    for row in conn.execute(
        f"SELECT memory_id, embedding FROM {TABLE} WHERE memory_id IN ({_IDS_JSON})", (json.dumps(sorted(owner)),)
    ):
        blobs.setdefault(owner[int(row[0])], bytes(row[1]))
    return blobs


def replace(
    conn: Connection, blobs: Mapping[int, bytes], hashes: Mapping[int, str], model: str, dimensions: int, stamp: str
) -> int:
    """Replace the vectors of ``blobs``' memories (those that still exist); returns how many were written.

    Call inside a transaction.
    """
    ids = json.dumps(sorted(blobs))
    alive = {int(r[0]) for r in conn.execute(f"SELECT id FROM memories WHERE id IN ({_IDS_JSON})", (ids,))}
    conn.execute(f"DELETE FROM {TABLE} WHERE memory_id IN ({_IDS_JSON})", (ids,))
    rows = sorted((mid, blob) for mid, blob in blobs.items() if mid in alive)
    conn.executemany(f"INSERT INTO {TABLE}(memory_id, embedding) VALUES (?, ?)", rows)
    conn.executemany(
        "INSERT INTO vector_meta(memory_id, model, dimensions, content_hash, embedded_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET model = excluded.model, dimensions = excluded.dimensions, "
        "content_hash = excluded.content_hash, embedded_at = excluded.embedded_at",
        [(mid, model, dimensions, hashes[mid], stamp) for mid, _ in rows],
    )
    gone = json.dumps(sorted(set(blobs) - alive))
    conn.execute(f"DELETE FROM vector_meta WHERE memory_id IN ({_IDS_JSON})", (gone,))
    return len(rows)


def has_other_models(conn: Connection, model: str, dimensions: int) -> bool:
    """Whether any stored vector was made by another model or dimension (then searches must filter)."""
    return bool(
        conn.execute(
            "SELECT EXISTS(SELECT 1 FROM vector_meta WHERE model != ? OR dimensions != ?)", (model, dimensions)
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
) -> list[tuple[int, float | None]]:
    """(memory_id, cosine distance) of the ``k`` nearest vectors to ``query`` (float32 bytes), nearest first.

    ``memory_ids`` pre-filters inside the scan; ``model`` keeps only vectors of that model and ``dimensions``.
    """
    sql = f"SELECT memory_id, distance FROM {TABLE} WHERE embedding MATCH ? AND k = ?"
    params: list[object] = [query, k]
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
    """memory_id -> stored vector bytes for those of ``memory_ids`` that have one."""
    rows = conn.execute(
        f"SELECT memory_id, embedding FROM {TABLE} WHERE memory_id IN ({_IDS_JSON})", (json.dumps(sorted(memory_ids)),)
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

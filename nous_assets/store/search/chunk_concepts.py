"""``chunk_concepts``: the concept set of each episodic chunk, stored next to the digest of the text it came from.

Derived data, like the chunk vectors: the embeddings asset fills it (:func:`put_many` for the chunks
:func:`missing` lists) and retrieval reads it (:func:`for_ids`), trusting a row only while its digest matches
the chunk's text. Redaction rewrites drop the row with the text (``store.redaction.rewrite_chunk_text``).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from nous_assets.store.db import Connection

MAX_PARAMS = 500


def missing(conn: Connection, limit: int) -> list[tuple[int, str]]:
    """(chunk_id, text) of up to ``limit`` chunks without a concepts row, in id order."""
    rows = conn.execute(
        "SELECT c.id, c.text FROM transcript_chunks c LEFT JOIN chunk_concepts k ON k.chunk_id = c.id "
        "WHERE k.chunk_id IS NULL ORDER BY c.id LIMIT ?",
        (int(limit),),
    ).fetchall()
    return [(int(r[0]), r[1]) for r in rows]


def put_many(conn: Connection, rows: Sequence[tuple[int, str, Sequence[str]]]) -> None:
    """Store (replace) ``(chunk_id, text_digest, concepts)`` rows. Call inside a transaction."""
    conn.executemany(
        "INSERT INTO chunk_concepts(chunk_id, text_digest, concepts_json) VALUES (?, ?, ?) "
        "ON CONFLICT(chunk_id) DO UPDATE SET text_digest = excluded.text_digest, "
        "concepts_json = excluded.concepts_json",
        [(int(i), digest, json.dumps(sorted(concepts))) for i, digest, concepts in rows],
    )


def for_ids(conn: Connection, ids: Sequence[int]) -> dict[int, tuple[str, list[str]]]:
    """{chunk_id: (text_digest, concepts)} of the stored rows among ``ids``."""
    out: dict[int, tuple[str, list[str]]] = {}
    for start in range(0, len(ids), MAX_PARAMS):
        part = [int(i) for i in ids[start : start + MAX_PARAMS]]
        for chunk_id, digest, concepts in conn.execute(
            f"SELECT chunk_id, text_digest, concepts_json FROM chunk_concepts WHERE chunk_id IN "
            f"({','.join('?' * len(part))})",
            part,
        ):
            out[int(chunk_id)] = (digest, json.loads(concepts))
    return out


def forget(conn: Connection, chunk_id: int) -> None:
    """Drop one chunk's concepts (its text changed). Call inside a transaction."""
    conn.execute("DELETE FROM chunk_concepts WHERE chunk_id = ?", (int(chunk_id),))

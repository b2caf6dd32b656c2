"""Reads of ``nli_results``: cached natural-language-inference labels between pairs of memories."""

from __future__ import annotations

import json
from collections.abc import Iterable

from nous_assets.store.db import Connection
from nous_assets.store.reads.consolidation import not_observation


def contradictions_among(conn: Connection, ids: Iterable[int]) -> dict[tuple[int, int], tuple[str, float]]:
    """Cached NLI contradictions among ``ids``: {(a, b): (label, confidence)} with a < b."""
    rows = conn.execute(
        "SELECT memory_id_a, memory_id_b, nli_label, confidence FROM nli_results "
        "WHERE nli_label = 'contradiction' AND memory_id_a IN (SELECT value FROM json_each(:ids)) "
        "AND memory_id_b IN (SELECT value FROM json_each(:ids))",
        {"ids": json.dumps(sorted(set(ids)))},
    ).fetchall()
    return {(int(a), int(b)): (label, float(conf)) for a, b, label, conf in rows}


COMPARABLE_COLUMNS = "id, learning_id, content, project_id, scope, source_session, valid_from, vector_clock_json"


def comparable_memories(conn: Connection) -> list[tuple]:
    """Current memories (validity window open), in id order: what the NLI tier compares.

    Rows are ``(id, learning_id, content, project_id, scope, source_session, valid_from, vector_clock_json)``.
    """
    return conn.execute(  # an observation restates its members: comparing it with them finds nothing new
        f"SELECT {COMPARABLE_COLUMNS} FROM memories WHERE valid_until IS NULL AND {not_observation()} "
        "ORDER BY id"
    ).fetchall()


def classified_pairs(conn: Connection, model_version: str) -> set[tuple[int, int]]:
    """Pairs ``(a, b)`` (a < b) already labelled by ``model_version``: never classified again by it."""
    rows = conn.execute("SELECT memory_id_a, memory_id_b FROM nli_results WHERE model_version = ?", (model_version,))
    return {(int(a), int(b)) for a, b in rows}


def upsert(conn: Connection, rows: Iterable[tuple[int, int, str, float, str, str]]) -> None:
    """Write ``(a, b, label, confidence, model_version, updated_at)`` rows keyed by the canonical pair.

    A pair labelled again (by a newer model version) keeps one row: the latest label replaces the old one.
    """
    conn.executemany(
        "INSERT INTO nli_results(memory_id_a, memory_id_b, nli_label, confidence, model_version, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT(memory_id_a, memory_id_b) DO UPDATE SET "
        "nli_label = excluded.nli_label, confidence = excluded.confidence, "
        "model_version = excluded.model_version, updated_at = excluded.updated_at",
        [(min(a, b), max(a, b), label, conf, version, at) for a, b, label, conf, version, at in rows],
    )


def label_counts(conn: Connection) -> dict[str, int]:
    """{label: cached pairs with it}, for the asset's metadata."""
    return {str(label): int(n) for label, n in conn.execute("SELECT nli_label, count(*) FROM nli_results GROUP BY 1")}

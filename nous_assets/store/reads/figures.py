"""Read-only totals the pipeline's assets report as materialisation metadata.

Counts only, over tables other modules write: kept here so the Dagster layer (``nous_assets/defs``)
holds no SQL and a table's columns are named in the store alone.
"""

from __future__ import annotations

from collections.abc import Iterable

from nous_assets.store.db import Connection


def memories_total(conn: Connection) -> int:
    """Memories in the projection (current and closed)."""
    return int(conn.execute("SELECT count(*) FROM memories").fetchone()[0])


def memories_valid_from(conn: Connection, days: Iterable[str]) -> int:
    """Memories whose validity (else creation) starts on one of ``days`` (YYYY-MM-DD)."""
    return sum(
        int(
            conn.execute(
                "SELECT count(*) FROM memories WHERE substr(coalesce(valid_from, created_at), 1, 10) = ?", (day,)
            ).fetchone()[0]
        )
        for day in days
    )


def chunks_total(conn: Connection) -> int:
    """Episodic transcript chunks held."""
    return int(conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0])


def memory_vectors_total(conn: Connection) -> int:
    """Memories with a stored vector (any model)."""
    return int(conn.execute("SELECT count(*) FROM vector_meta").fetchone()[0])


def edges_by_type(conn: Connection) -> dict[str, int]:
    """Edge counts keyed ``rel_type:origin``."""
    return dict(conn.execute("SELECT rel_type || ':' || origin, count(*) FROM edges GROUP BY 1").fetchall())


def packets(conn: Connection) -> tuple[int, int]:
    """(packets in the injection cache, characters of the largest)."""
    count, largest = conn.execute("SELECT count(*), coalesce(max(char_count), 0) FROM injection_cache").fetchone()
    return int(count), int(largest)

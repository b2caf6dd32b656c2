"""How much embedding work is waiting: the reconcile schedule asks this to request a catch-up run.

A pipeline run embeds within its time budget (``embed.run_budget_seconds``) and leaves the rest; retrieval
scores unembedded memories with FTS meanwhile. This count is cheap (no model load, no text enrichment), so
the hourly schedule can tell whether another run is needed to finish the vectors.
"""

from __future__ import annotations

from nous_assets.embed.chunks import pending_chunk_count
from nous_assets.embed.store import active_model, unembedded_ids
from nous_assets.store.db import Connection


def embedding_backlog(conn: Connection) -> int:
    """Memories and transcript chunks without a vector of the active model (all of them before any vector)."""
    active = active_model(conn)
    if active is None:
        memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        chunks = conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0]
        return int(memories) + int(chunks)
    model, dimensions = active
    return len(unembedded_ids(conn, model, dimensions)) + pending_chunk_count(conn, model, dimensions)

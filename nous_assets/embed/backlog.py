"""How much embedding work is waiting: the reconcile schedule asks this to request a catch-up run.

A pipeline run embeds within its time budget (``embed.run_budget_seconds``) and leaves the rest; retrieval
scores unembedded memories with FTS meanwhile. This count is cheap (no model load, no text enrichment), so
the hourly schedule can tell whether another run is needed to finish the vectors.
"""

from __future__ import annotations

from nous_assets.embed.memory_embedding import active_model
from nous_assets.store.db import Connection
from nous_assets.store.search import chunk_vectors, vectors


def embedding_backlog(conn: Connection) -> int:
    """Memories and transcript chunks without a vector of the active model (all of them before any vector)."""
    model, dimensions = active_model(conn) or (None, 0)
    return vectors.unembedded_count(conn, model, dimensions) + chunk_vectors.pending_count(conn, model, dimensions)

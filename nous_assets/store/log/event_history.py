"""Look-ups in the history of ``learning_events`` for a memory that is no longer projected.

The projection forgets an archived memory; its events remain. A memory's id is the event id of the
``LearningExtracted`` that created it, which is how these queries find its learning again.
"""

from __future__ import annotations

import json

from nous_assets.store.db import Connection


def archive_reason(conn: Connection, memory_id: int) -> str | None:
    """Why the learning memory ``memory_id`` was last archived ("archived" without a reason); None if never."""
    row = conn.execute(
        "SELECT a.payload_json FROM learning_events e JOIN learning_events a ON a.learning_id = e.learning_id "
        "WHERE e.event_id = ? AND e.event_type = 'LearningExtracted' AND a.event_type = 'LearningArchived' "
        "ORDER BY a.event_id DESC LIMIT 1",
        (memory_id,),
    ).fetchone()
    if row is None:
        return None
    return str(json.loads(row[0]).get("reason", "archived"))

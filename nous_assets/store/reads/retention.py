"""What the retention pass reads: every projected memory's score and activity, and the decay already applied.

Two whole-table reads (a retention pass looks at every memory once per run): the projection's rows, and per
learning the end of the last period a ``LearningWeakened`` with reason ``decay`` covered, from the log, so a
period is never decayed twice whatever the projection has caught up with.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.db import Connection


@dataclass(frozen=True)
class Retained:
    """A memory as retention judges it: its score, when it was last active, and the scope it counts in."""

    learning_id: str
    project_id: str
    scope: str
    score: float
    recorded: str  # when the log first held it (a backfilled memory is no older than its backfill)
    active: str  # the latest of ``recorded`` and its last reinforcement or weakening

    @property
    def scope_key(self) -> str:
        """The rotation bound counts per project, and the global memories as one more scope."""
        return "global" if self.scope == "global" else f"project:{self.project_id}"


def memories(conn: Connection) -> list[Retained]:
    """Every memory of the projection, in id order."""
    rows = conn.execute(
        "SELECT learning_id, project_id, scope, reinforcement_score, created_at, accessed_at FROM memories ORDER BY id"
    )
    return [
        Retained(lid, project, scope, float(score), recorded, max(recorded, accessed or recorded))
        for lid, project, scope, score, recorded, accessed in rows
    ]


def decayed_until(conn: Connection) -> dict[str, str]:
    """{learning id: end of the last period its decay events cover}."""
    rows = conn.execute(
        "SELECT learning_id, MAX(json_extract(payload_json, '$.period_end')) FROM learning_events "
        "WHERE event_type = 'LearningWeakened' AND json_extract(payload_json, '$.reason') = 'decay' "
        "GROUP BY learning_id"
    )
    return {lid: end for lid, end in rows if end}

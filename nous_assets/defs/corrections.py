"""A correction takes effect at once: the projection -> interventions -> cache steps as one run, in-process.

``nous review reject/approve/supersede/validate``, ``nous feedback`` and ``nous forget`` append events; until
this existed the packets only changed at the next run a transcript triggered. :func:`rebuild_packets`
materialises today's partition of the three assets that turn events into packets (``memories`` projects,
``interventions`` observes and reduces, ``injection_cache`` rebuilds the packets of every project whose memories
moved) through the same asset definitions the pipeline runs, recorded as a run in the instance (the UI shows it,
tagged ``nous/source=user_review``). Nothing is written behind the asset graph, and nothing else is re-run:
embeddings and edges of a rejected or forgotten memory are simply no longer read (its row is gone).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

import dagster as dg

from nous_assets.defs.assets import PIPELINE_ASSETS
from nous_assets.defs.assets.capture import SOURCE_TAG
from nous_assets.defs.backfill import QUIET_CONSOLE, _own_state_storage
from nous_assets.defs.failures import failure_reason
from nous_assets.defs.resources import NousResource
from nous_assets.defs.runs import WORKER_TAG, worker_id

CORRECTION_STEPS = ("memories", "interventions", "injection_cache")
"""The assets a correction re-materialises, in dependency order."""
CORRECTION_SOURCE = "user_review"


@dataclass(frozen=True)
class Rebuild:
    """One correction run: its id, whether it succeeded, how many projects' packets were rebuilt, why it failed."""

    run_id: str
    success: bool
    projects_rebuilt: int = 0
    error: str | None = None


def correction_assets() -> list[dg.AssetsDefinition]:
    """The assets of :data:`CORRECTION_STEPS`, taken from the one asset list the pipeline runs."""
    chosen = [a for a in PIPELINE_ASSETS if a.key.to_user_string() in CORRECTION_STEPS]
    assert len(chosen) == len(CORRECTION_STEPS), "an asset of CORRECTION_STEPS left the graph"
    return chosen


def rebuild_packets(*, instance: dg.DagsterInstance, resource: NousResource | None = None) -> Rebuild:
    """Project, observe and rebuild packets now, for today's partition, in this process, recorded in ``instance``
    (``dg.materialize`` of the three assets alone: the replay check on ``memories`` stays with the pipeline's runs).

    Never raises for a failed run: the result says why (the events are written; the next run applies them)."""
    today = datetime.now(UTC).date().isoformat()
    with _own_state_storage(instance):
        result = dg.materialize(
            correction_assets(),
            partition_key=today,
            resources={"nous": resource or NousResource()},
            instance=instance,
            run_config=QUIET_CONSOLE,
            tags={SOURCE_TAG: CORRECTION_SOURCE, WORKER_TAG: worker_id()},
            raise_on_error=False,
        )
    run_id = result.run_id
    if not result.success:
        return Rebuild(run_id, False, error=failure_reason(result))
    rebuilt = 0
    for mat in result.asset_materializations_for_node("injection_cache"):
        value = mat.metadata.get("projects_rebuilt")
        rebuilt = int(value.value) if value is not None else 0
    return Rebuild(run_id, True, rebuilt)

"""What consolidation reads (the SQL side of :mod:`nous_assets.consolidate`): the memories it may group, their
vectors, concepts and edges, and the observations it holds. It writes only events, through the event store."""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from nous_assets.status import INJECTABLE
from nous_assets.store.db import Connection
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, Memory
from nous_assets.store.search import memory_search, vectors

OBSERVATION = "observation"
"""The ``kind`` of an observation: a memory of type ``knowledge`` that consolidates others."""

def not_observation(alias: str = "") -> str:
    """SQL: the memory (``alias`` its table's, e.g. ``m.``) is not an observation. Extraction and the NLI tier never
    compare with one: it restates its members, so a re-learning reinforces the member it repeats and the next
    consolidation follows."""
    return f"coalesce({alias}kind, '') != '{OBSERVATION}'"

_INJECTABLE = ", ".join(f"'{s}'" for s in sorted(INJECTABLE))


@dataclass(frozen=True)
class Scoped:
    """One memory consolidation may group, with what it needs to compare and rank it."""

    memory: Memory
    vector: np.ndarray | None
    concepts: frozenset[str]
    sessions: int  # distinct sessions of its events: how much evidence backs it
    folder: str  # the project its extraction event names (the Claude Code folder it was read in)


def candidates(conn: Connection) -> dict[tuple[str, str], list[Scoped]]:
    """Current memories that may be consolidated, by (scope, project): injectable statuses only (a hypothesis
    must not be laundered into an observation), no observations and no slotted items (the project brief and
    other one-value slots are already one statement each)."""
    rows = conn.execute(
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE valid_until IS NULL AND status IN ({_INJECTABLE}) "
        "AND coalesce(kind, '') != ? AND slot IS NULL ORDER BY learning_id",
        (OBSERVATION,),
    ).fetchall()
    memories = [Memory(*r) for r in rows]
    ids = [m.id for m in memories]
    concepts = memory_search.concepts_of(conn, ids)
    blobs = vectors.blobs_for(conn, ids)
    sessions = _sessions(conn, [m.learning_id for m in memories])
    folders = dict(conn.execute("SELECT event_id, project_id FROM learning_events WHERE event_id IN "
                                "(SELECT value FROM json_each(?))", (json.dumps(ids),)).fetchall())  # fmt: skip
    out: dict[tuple[str, str], list[Scoped]] = defaultdict(list)
    for m in memories:
        blob = blobs.get(m.id)
        vector = np.frombuffer(blob, dtype=np.float32) if blob else None
        scoped = Scoped(m, vector, frozenset(concepts.get(m.id, ())), sessions.get(m.learning_id, 1),
                        folders.get(m.id, m.project_id))  # fmt: skip
        out[(m.scope, m.project_id)].append(scoped)
    return dict(out)


def _sessions(conn: Connection, learning_ids: list[str]) -> dict[str, int]:
    rows = conn.execute(
        "SELECT learning_id, count(DISTINCT session_id) FROM learning_events "
        "WHERE learning_id IN (SELECT value FROM json_each(?)) GROUP BY learning_id",
        (json.dumps(learning_ids),),
    )
    return {r[0]: int(r[1]) for r in rows}


def edges_among(conn: Connection, ids: Iterable[int]) -> set[frozenset[int]]:
    """Pairs of ``ids`` joined by an edge of any type, either way."""
    rows = conn.execute(
        "SELECT source_id, target_id FROM edges WHERE source_id IN (SELECT value FROM json_each(?)) "
        "AND target_id IN (SELECT value FROM json_each(?))",
        (json.dumps(sorted(ids)),) * 2,
    )
    return {frozenset((int(a), int(b))) for a, b in rows}


@dataclass(frozen=True)
class HeldObservation:
    learning_id: str
    scope: str
    project_id: str
    slot: str
    members: tuple[str, ...]


def held_observations(conn: Connection) -> list[HeldObservation]:
    """The current observations with the members they were formed from (their provenance)."""
    rows = conn.execute(
        "SELECT learning_id, scope, project_id, slot, provenance_json FROM memories "
        "WHERE kind = ? AND valid_until IS NULL ORDER BY learning_id",
        (OBSERVATION,),
    ).fetchall()
    out = []
    for lid, scope, project, slot, provenance in rows:
        members = (json.loads(provenance or "{}") or {}).get("members") or []
        out.append(HeldObservation(lid, scope, project, slot or "", tuple(sorted(members))))
    return out

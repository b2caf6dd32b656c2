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


def candidates(conn: Connection, project_id: str | None = None) -> dict[tuple[str, str], list[Scoped]]:
    """Current memories that may be consolidated, by (scope, project): injectable statuses only (a hypothesis
    must not be laundered into an observation), no observations and no slotted items (the project brief and
    other one-value slots are already one statement each). ``project_id``: that project's only."""
    rows = conn.execute(
        f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE valid_until IS NULL AND status IN ({_INJECTABLE}) "
        "AND coalesce(kind, '') != ? AND slot IS NULL AND (? IS NULL OR project_id = ?) ORDER BY learning_id",
        (OBSERVATION, project_id, project_id),
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
    memory_id: int = 0
    content: str = ""


def held_observations(conn: Connection, project_id: str | None = None) -> list[HeldObservation]:
    """The current observations with the members they were formed from (their provenance); ``project_id``: that
    project's only."""
    rows = conn.execute(
        "SELECT learning_id, scope, project_id, slot, provenance_json, id, content FROM memories "
        "WHERE kind = ? AND valid_until IS NULL AND (? IS NULL OR project_id = ?) ORDER BY learning_id",
        (OBSERVATION, project_id, project_id),
    ).fetchall()
    out = []
    for lid, scope, project, slot, provenance, memory_id, content in rows:
        members = (json.loads(provenance or "{}") or {}).get("members") or []
        out.append(HeldObservation(lid, scope, project, slot or "", tuple(sorted(members)), memory_id, content))
    return out


def members_of(conn: Connection, learning_ids: Iterable[str]) -> list[tuple[int, str, str, str, str | None]]:
    """(id, learning id, content, status, valid_until) of the memories an observation was formed from, by id; one
    archived since is missing."""
    rows = conn.execute(
        "SELECT id, learning_id, content, status, valid_until FROM memories "
        "WHERE learning_id IN (SELECT value FROM json_each(?)) ORDER BY id",
        (json.dumps(sorted(learning_ids)),),
    )
    return [tuple(r) for r in rows]


@dataclass(frozen=True)
class Quality:
    """Seed 003's CX15 figures over the observations, as of a moment (see :func:`quality`)."""

    active: int  # current observations
    formed: int  # every observation the projection holds (current or closed)
    judged: int  # formed 30 days or more before the moment
    used: int  # of those, injected or recalled within 30 days of forming
    contradicted: int  # ever contradicted
    observation_accesses: int  # accesses of observations since they formed
    member_accesses: int  # accesses of their members since the observation formed
    members: int  # distinct members of accessed-or-not observations
    drift: float | None  # mean |reinforcement - initial| of the judged observations

    @property
    def precision(self) -> float | None:
        return round(self.used / self.judged, 4) if self.judged else None

    @property
    def contradiction_rate(self) -> float | None:
        return round(self.contradicted / self.formed, 4) if self.formed else None

    @property
    def lift(self) -> float | None:
        """Accesses per observation over accesses per member: > 1 when the observation is found more than the
        memories it consolidates (CX15's retrieval lift)."""
        if not self.formed or not self.members or not self.member_accesses:
            return None
        return round((self.observation_accesses / self.formed) / (self.member_accesses / self.members), 4)

    @property
    def stability(self) -> float | None:
        return round(1.0 - self.drift, 4) if self.drift is not None else None


_QUALITY_SQL = f"""
WITH obs AS (
    SELECT id, created_at AS learned_at, valid_until, contradiction_count,
           reinforcement_score, provenance_json
    FROM memories WHERE kind = '{OBSERVATION}'
), mem AS (
    SELECT DISTINCT o.id AS observation_id, m.id AS member_id, o.learned_at
    FROM obs o, json_each(coalesce(json_extract(o.provenance_json, '$.members'), '[]')) j
    JOIN memories m ON m.learning_id = j.value
)
SELECT
    (SELECT count(*) FROM obs WHERE valid_until IS NULL),
    (SELECT count(*) FROM obs),
    (SELECT count(*) FROM obs WHERE julianday(learned_at) <= julianday(:as_of) - 30),
    (SELECT count(*) FROM obs o WHERE julianday(o.learned_at) <= julianday(:as_of) - 30 AND EXISTS (
        SELECT 1 FROM access_log a WHERE a.memory_id = o.id
        AND julianday(a.accessed_at) <= min(julianday(o.learned_at) + 30, julianday(:as_of)))),
    (SELECT count(*) FROM obs WHERE contradiction_count > 0),
    (SELECT count(*) FROM access_log a JOIN obs o ON a.memory_id = o.id
     WHERE julianday(a.accessed_at) BETWEEN julianday(o.learned_at) AND julianday(:as_of)),
    (SELECT count(*) FROM access_log a JOIN mem ON a.memory_id = mem.member_id
     WHERE julianday(a.accessed_at) BETWEEN julianday(mem.learned_at) AND julianday(:as_of)),
    (SELECT count(DISTINCT member_id) FROM mem),
    (SELECT avg(abs(reinforcement_score - :initial)) FROM obs WHERE julianday(learned_at) <= julianday(:as_of) - 30)
"""


def quality(conn: Connection, as_of: str, initial_reinforcement: float = 0.5) -> Quality:
    """The CX15 figures as of ``as_of`` (ISO time): precision (observations 30 days old that a packet or recall
    used within 30 days of forming), contradiction rate, retrieval lift and stability (one minus how far their
    reinforcement moved from where it started). An observation forms when its event is recorded (``created_at``),
    not when its members were learned: a backfill of last year's history forms observations today, and judging
    them by their members' dates would call every one of them unused."""
    row = conn.execute(_QUALITY_SQL, {"as_of": as_of, "initial": initial_reinforcement}).fetchone()
    *counts, drift = row
    return Quality(*(int(c or 0) for c in counts), None if drift is None else float(drift))

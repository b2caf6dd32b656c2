"""Consolidation over the whole store: each scope's alike memories become observations, as events.

An observation is a memory of type ``knowledge`` and kind ``observation`` (:data:`OBSERVATION`), written by a
``LearningExtracted`` whose key is its member set: the same clusters give the same keys, so a re-run writes
nothing and a replay of the log gives the same observations. When a held observation's members no longer form
a cluster (one was superseded or refuted, or a new memory joined) it is stale: superseded by the new
observation of the same anchor when there is one (``LearningSuperseded``), else retired (``LearningWeakened``
to ``superseded``), as the project brief retires its items.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from typing import Any

from nous_assets.consolidate import topics, tuning
from nous_assets.consolidate.clusters import clusters
from nous_assets.consolidate.communities import Topic, communities
from nous_assets.consolidate.gate import gate
from nous_assets.consolidate.observation import Member, Observation, observe
from nous_assets.consolidate.similarity import Item
from nous_assets.ids import learning_id_for
from nous_assets.settings import Thresholds
from nous_assets.status import SUPERSEDED
from nous_assets.store import tuning as tuning_store
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads import consolidation as reads
from nous_assets.store.reads.consolidation import OBSERVATION, HeldObservation, Quality, Scoped
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project
from nous_assets.timeutil import now_iso

VERSION = "consolidation-v2"  # v2: a detail drops the label it shares with the anchor
MAX_CONCEPTS = 12


@dataclass
class ConsolidationStats:
    """One run's figures (CX15 where they need no access history): what was grouped and how much it shrank."""

    scopes: int = 0
    memories: int = 0
    clustered: int = 0
    observations: int = 0
    formed: int = 0
    superseded: int = 0
    retired: int = 0
    member_chars: int = 0
    observation_chars: int = 0
    largest: int = 0
    events_written: int = 0
    scopes_waiting: int = 0  # scopes with memories still to embed: left as they are until the vectors come
    cohesion: float = 0.0  # the cohesion gate this run clustered with
    tuned: str = ""  # why the gate moved this run ("" when it did not)
    tuning_history: list[dict[str, Any]] = field(default_factory=list)  # the gate's latest moves, newest first
    quality: Quality | None = None  # CX15 figures before this run
    deferred: int = 0  # clusters the recall gate held back: their members are not found by what they are about
    sizes: dict[int, int] = field(default_factory=dict)
    topics: dict[str, list[Topic]] = field(default_factory=dict)  # project -> its communities, largest first

    @property
    def compression(self) -> float | None:
        """Characters of the clustered memories over characters of their observations."""
        return round(self.member_chars / self.observation_chars, 3) if self.observation_chars else None

    def cx15(self) -> dict[str, float | None]:
        """Seed 003's CX15 figures: this run's compression, and the store's precision, contradiction rate,
        retrieval lift and stability before it (None: not enough history to say)."""
        q = self.quality
        return {"compression": self.compression, "precision_30d": q and q.precision,
                "contradiction_rate": q and q.contradiction_rate, "retrieval_lift": q and q.lift,
                "stability": q and q.stability}  # fmt: skip


def consolidate(
    conn: Connection, *, source: str, thresholds: Thresholds | None = None, embedder: Any = None
) -> ConsolidationStats:
    """Bring every scope's observations up to date with its current memories (see the module docstring);
    ``embedder`` (a query embedder) runs the recall gate (:mod:`~nous_assets.consolidate.gate`), which passes every
    cluster without one. The cohesion gate is the configured one as quality tuned it
    (:mod:`~nous_assets.consolidate.tuning`).

    Clustering runs outside any transaction (seconds for thousands of memories: other writers must not wait on
    it); the events are appended under the write lock. A memory that changed in between is seen by the next run.
    """
    stats = ConsolidationStats()
    thresholds = thresholds or Thresholds()
    policy = Policy.of(thresholds)
    with atomic(conn):
        project(conn, policy=policy)
        stats.cohesion = _tune(conn, thresholds, stats)
    groups = reads.candidates(conn)
    held = reads.held_observations(conn)
    events: list[LearningEvent] = []
    slots: dict[tuple[str, str], str] = {}  # (project, slot) -> the observation formed there now
    for (scope, project_id), scoped in sorted(groups.items()):
        stats.scopes += 1
        stats.memories += len(scoped)
        if any(s.vector is None for s in scoped):  # clustered without them it would re-form once they come
            stats.scopes_waiting += 1
            slots.update({(project_id, h.slot): h.learning_id for h in held if h.project_id == project_id})
            continue
        formed: dict[str, tuple[str, ...]] = {}
        items, edges = topics.scope_items(scoped), topics.scope_edges(conn, scoped)
        for observation in _observations(scoped, items, edges, embedder, stats):
            _count(stats, observation)
            lid = learning_id_for(_key(scope, project_id, observation.member_ids))
            slots[(project_id, observation.slot)] = lid
            formed[lid] = observation.member_ids
            events.append(_formed(lid, observation, scope, project_id, source))
        if scope == "project":
            stats.topics[project_id] = communities(items, edges, topics.sessions_of(scoped), formed)
    events += _stale(held, slots, source, stats)
    held_ids = {h.learning_id for h in held}
    stats.formed = sum(1 for e in events if e.event_type == "LearningExtracted" and e.learning_id not in held_ids)
    with atomic(conn):
        stats.events_written = sum(r.created for r in SqliteEventStore(conn).append_many(events))
        project(conn, policy=policy)
    return stats


def _tune(conn: Connection, thresholds: Thresholds, stats: ConsolidationStats) -> float:
    """The cohesion gate for this run: the last tuned value (or the configured one), moved when the CX15 figures
    call for it, the move recorded (the caller holds the transaction)."""
    low, high = thresholds.consolidation_cohesion, thresholds.consolidation_cohesion_max
    current = min(high, max(low, tuning_store.current(conn, tuning.PARAMETER) or low))
    now = now_iso()
    stats.quality = reads.quality(conn, now, thresholds.initial_reinforcement)
    move = tuning.next_cohesion(current, stats.quality, low, high)
    if move is not None:
        tuning_store.record(conn, tuning.PARAMETER, move.old, move.new, move.reason, asdict(stats.quality), now)
        stats.tuned = move.reason
    stats.tuning_history = tuning_store.history(conn, tuning.PARAMETER, limit=5)
    return current if move is None else move.new


def _observations(
    scoped: list[Scoped], items: list[Item], edges: set[frozenset[str]], embedder: Any, stats: ConsolidationStats
) -> list[Observation]:
    by_key = {s.memory.learning_id: s for s in scoped}
    passed, deferred = gate(clusters(items, edges, stats.cohesion), items,
                            {k: s.memory.content for k, s in by_key.items()}, embedder)  # fmt: skip
    stats.deferred += len(deferred)
    return [observe([_member(by_key[k]) for k in group]) for group in passed]


def _member(s: Scoped) -> Member:
    m = s.memory
    provenance = json.loads(m.provenance_json or "{}") or {}
    return Member(m.learning_id, m.content, m.status, s.sessions, m.reinforcement_score, m.valid_from,
                  s.concepts, m.source_session, s.folder, provenance)  # fmt: skip


def _count(stats: ConsolidationStats, observation: Observation) -> None:
    size = len(observation.members)
    stats.observations += 1
    stats.clustered += size
    stats.largest = max(stats.largest, size)
    stats.sizes[size] = stats.sizes.get(size, 0) + 1
    stats.member_chars += sum(len(m.content) for m in observation.members)
    stats.observation_chars += len(observation.content)


def _key(scope: str, project_id: str, members: tuple[str, ...]) -> str:
    return hashlib.sha256(f"{VERSION}|{scope}|{project_id}|{'|'.join(members)}".encode()).hexdigest()


def _formed(lid: str, observation: Observation, scope: str, project_id: str, source: str) -> LearningEvent:
    anchor = observation.anchor
    concepts = sorted({c for m in observation.members for c in m.concepts})[:MAX_CONCEPTS]
    starts = [m.valid_from for m in observation.members if m.valid_from]
    payload: dict[str, Any] = {
        "content": observation.content,
        "extractor_version": VERSION,
        "concepts": concepts,
        "edges": [],
        "type": "knowledge",
        "kind": OBSERVATION,
        "domain": "consolidation",
        "scope": scope,
        "temporal_confidence": "high",
        "provenance": _provenance(observation),
        "slot": observation.slot,
        "status": anchor.status,
        "evidence": [{"status": anchor.status, "what": f"consolidates {len(observation.members)} memories",
                      "members": list(observation.member_ids)[:12]}],  # fmt: skip
    }
    key = _key(scope, project_id, observation.member_ids)
    folder = anchor.folder or project_id  # the event names a Claude Code folder, as extraction's do
    return LearningEvent("LearningExtracted", lid, payload, anchor.source_session, folder, source, key,
                         valid_from=min(starts) if starts else None)  # fmt: skip


def _provenance(observation: Observation) -> dict[str, Any]:
    """The anchor's provenance (where its text was read: transcript, offsets and records agree), then the members
    and every member's transcript records."""
    records = sorted({str(u) for m in observation.members for u in m.provenance.get("uuids") or ()})
    return {**observation.anchor.provenance, "member_uuids": records, "members": list(observation.member_ids),
            "anchor": observation.anchor.learning_id, "details": len(observation.details),
            "carried": list(observation.carried)}  # fmt: skip


def _stale(
    held: list[HeldObservation], slots: dict[tuple[str, str], str], source: str, stats: ConsolidationStats
) -> list[LearningEvent]:
    """Events closing the held observations that no cluster forms any more: superseded by the new observation
    of the same anchor (slot), else retired."""
    current = set(slots.values())
    out: list[LearningEvent] = []
    for h in held:
        if h.learning_id in current:
            continue
        session = "consolidation"
        replacement = slots.get((h.project_id, h.slot))
        if replacement is not None:
            payload: dict[str, Any] = {"superseded_by": replacement, "reason": "its cluster changed", "slot": h.slot}
            key = hashlib.sha256(f"{VERSION}:replace:{h.learning_id}:{replacement}".encode()).hexdigest()
            out.append(LearningEvent("LearningSuperseded", h.learning_id, payload, session, h.project_id, source, key))
            stats.superseded += 1
            continue
        payload = {"reinforcement_delta": -0.2, "reason": SUPERSEDED, "status": SUPERSEDED,
                   "evidence": [{"status": SUPERSEDED, "what": "its members no longer form a cluster"}]}  # fmt: skip
        key = hashlib.sha256(f"{VERSION}:retire:{h.learning_id}".encode()).hexdigest()
        out.append(LearningEvent("LearningWeakened", h.learning_id, payload, session, h.project_id, source, key))
        stats.retired += 1
    return out

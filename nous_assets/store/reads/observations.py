"""What the observers and ``nous review`` read: per-memory session history, contradictions, re-learning flags.

Reads only (the event log, the projection, ``nli_results``, ``access_log``); the policy that turns them
into intervention candidates or review items lives in :mod:`nous_assets.observe` and
:mod:`nous_assets.safety`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from nous_assets.store.db import Connection

# an event that says a session learned the learning: its extraction, or a re-learning reinforcement
_LEARNED_BY = (
    "(e.event_type = 'LearningExtracted' OR (e.event_type = 'LearningReinforced' AND "
    "(json_extract(e.payload_json, '$.reason') = 'relearned' OR "
    "json_extract(e.payload_json, '$.relearn.decision') IS NOT NULL)))"
)


def base_session(session_id: str) -> str:
    """A subagent's batch session (``<session>#agent-…``) belongs to the session that started it."""
    return str(session_id or "").split("#", 1)[0]


@dataclass
class LearnedMemory:
    """A current memory with the sessions that learned it: (session, day learned), earliest first."""

    memory_id: int
    learning_id: str
    project_id: str
    scope: str
    kind: str | None
    domain: str | None
    content: str
    provenance: dict[str, Any] | None
    sessions: list[tuple[str, str]] = field(default_factory=list)
    slot: str | None = None

    @property
    def session_ids(self) -> list[str]:
        return [s for s, _ in self.sessions]


def learned_memories(conn: Connection, *, kinds: tuple[str, ...] | None = None) -> list[LearnedMemory]:
    """Every current memory (of ``kinds``, when given) with the distinct sessions that learned it."""
    where = "m.valid_until IS NULL"
    params: list[Any] = []
    if kinds:
        where += f" AND m.kind IN ({','.join('?' * len(kinds))})"
        params.extend(kinds)
    rows = conn.execute(
        "SELECT m.id, m.learning_id, m.project_id, m.scope, m.kind, m.domain, m.content, m.provenance_json, "
        "e.session_id, coalesce(e.valid_from, e.transaction_time) AS at, m.slot FROM memories m "
        f"JOIN learning_events e ON e.learning_id = m.learning_id WHERE {where} AND {_LEARNED_BY} "
        "ORDER BY m.id, at, e.event_id",
        params,
    ).fetchall()
    out: dict[int, LearnedMemory] = {}
    for r in rows:
        mem = out.get(r[0])
        if mem is None:
            provenance = json.loads(r[7]) if r[7] else None
            mem = out[r[0]] = LearnedMemory(r[0], r[1], r[2], r[3], r[4], r[5], r[6], provenance, slot=r[10])
        session = base_session(r[8])
        if session not in mem.session_ids:
            mem.sessions.append((session, str(r[9] or "")[:10]))
    return list(out.values())


def served_projects(conn: Connection) -> frozenset[str]:
    """The projects a session start (or a rating) ever took memories for: those Nous has served."""
    return frozenset(r[0] for r in conn.execute("SELECT DISTINCT project_id FROM access_log") if r[0])


def injection_counts(conn: Connection, memory_ids: list[int]) -> dict[int, int]:
    """{memory id: times it was injected (or rated)} for those with any ``access_log`` row."""
    rows = conn.execute(
        "SELECT memory_id, count(*) FROM access_log WHERE memory_id IN (SELECT value FROM json_each(?)) "
        "GROUP BY memory_id",
        (json.dumps(sorted(set(memory_ids))),),
    )
    return {int(m): int(n) for m, n in rows}


@dataclass(frozen=True)
class Contradiction:
    """A cached NLI contradiction between two current memories, with what review shows of each."""

    memory_a: int
    memory_b: int
    confidence: float
    model_version: str
    checked_at: str
    project_id: str
    domain_a: str | None
    domain_b: str | None
    content_a: str
    content_b: str
    learned_a: str
    learned_b: str
    session_a: str
    session_b: str


def contradictions(
    conn: Connection, *, min_confidence: float = 0.0, project_id: str | None = None
) -> list[Contradiction]:
    """``nli_results`` rows labelled contradiction (at least ``min_confidence``) whose memories are both current."""
    where, params = "n.nli_label = 'contradiction' AND n.confidence >= ?", [min_confidence]
    if project_id is not None:
        where += " AND a.project_id = ?"
        params.append(project_id)
    rows = conn.execute(
        "SELECT n.memory_id_a, n.memory_id_b, n.confidence, n.model_version, n.updated_at, a.project_id, "
        "a.domain, b.domain, a.content, b.content, coalesce(a.valid_from, a.created_at), "
        "coalesce(b.valid_from, b.created_at), a.source_session, b.source_session FROM nli_results n "
        "JOIN memories a ON a.id = n.memory_id_a JOIN memories b ON b.id = n.memory_id_b "
        f"WHERE {where} AND a.valid_until IS NULL AND b.valid_until IS NULL "
        "ORDER BY n.confidence DESC, n.memory_id_a, n.memory_id_b",
        params,
    ).fetchall()
    return [Contradiction(*(tuple(r[:10]) + (str(r[10])[:10], str(r[11])[:10], base_session(r[12]),
                                             base_session(r[13])))) for r in rows]  # fmt: skip


def current_per_domain(conn: Connection) -> dict[tuple[str, str], int]:
    """{(project, domain): current memories} (memories without a domain are left out)."""
    rows = conn.execute(
        "SELECT project_id, domain, count(*) FROM memories WHERE valid_until IS NULL AND domain IS NOT NULL "
        "AND domain <> '' GROUP BY project_id, domain"
    )
    return {(p, d): int(n) for p, d, n in rows}


@dataclass(frozen=True)
class RelearnFlag:
    """A re-learning decision recorded in an event payload (``payload.relearn``), with its memory."""

    event_id: int
    event_type: str
    learning_id: str
    session_id: str
    learned_at: str
    decision: str
    tier: int | None
    similarity: float | None
    matched: str | None
    memory_id: int | None
    project_id: str
    content: str | None
    matched_content: str | None


def _decision(relearn: dict[str, Any]) -> tuple[str, str | None]:
    """(decision, matched learning) from the current payload shape or the older ``{"near": …}`` one."""
    if "decision" in relearn:
        return str(relearn["decision"]), relearn.get("matched")
    return "near_miss", relearn.get("near")


def relearn_flags(conn: Connection, *, decisions: frozenset[str], project_id: str | None = None) -> list[RelearnFlag]:
    """Events carrying a re-learning flag whose decision is one of ``decisions``, newest first."""
    where, params = "json_extract(e.payload_json, '$.relearn') IS NOT NULL", []
    if project_id is not None:
        where += " AND coalesce(m.project_id, e.project_id) = ?"
        params.append(project_id)
    rows = conn.execute(
        "SELECT e.event_id, e.event_type, e.learning_id, e.session_id, coalesce(e.valid_from, e.transaction_time), "
        "json_extract(e.payload_json, '$.relearn'), m.id, coalesce(m.project_id, e.project_id), m.content "
        "FROM learning_events e LEFT JOIN memories m ON m.learning_id = e.learning_id "
        f"WHERE {where} ORDER BY e.event_id DESC",
        params,
    ).fetchall()
    out = []
    for r in rows:
        relearn = json.loads(r[5]) if r[5] else {}
        if not isinstance(relearn, dict):
            continue
        decision, matched = _decision(relearn)
        if decision not in decisions:
            continue
        other = None
        if matched:
            other = conn.execute("SELECT content FROM memories WHERE learning_id = ?", (matched,)).fetchone()
        similarity = relearn.get("similarity")
        out.append(RelearnFlag(r[0], r[1], r[2], base_session(r[3]), str(r[4])[:10], decision, relearn.get("tier"),
                               float(similarity) if similarity is not None else None, matched, r[6], r[7], r[8],
                               other[0] if other else None))  # fmt: skip
    return out


def project_checkout(conn: Connection, project_id: str) -> str | None:
    """The main checkout directory of a project, as identity recorded it (None when unknown)."""
    row = conn.execute(
        "SELECT alias FROM project_aliases WHERE kind = 'cwd' AND project_id = ? "
        "ORDER BY evidence = 'main-checkout' DESC, length(alias), alias LIMIT 1",
        (project_id,),
    ).fetchone()
    return row[0] if row else None


def valid_from(conn: Connection, memory_id: int) -> str | None:
    """When a memory of the projection started to hold (None: unknown, or no such memory)."""
    row = conn.execute("SELECT valid_from FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return row[0] if row else None

"""``intervention_candidates``, their audit trail and ``active_interventions`` (the SQL side of ``observe/``).

Candidates are immutable once written (migration 011 forbids UPDATE and DELETE): the reducer's and the
user's decisions are rows appended to ``intervention_transitions``, so a candidate's current state is its
last transition (or ``candidate`` when it has none). ``active_interventions`` is the read model the packets
take their notes from; an expired row stays there until its cooldown is over, so the same dedupe key does
not come back at once.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from nous_assets.store.db import Connection, atomic

CANDIDATE = "candidate"


LEARNING_KEY = "learning:"  # dedupe key prefix of an intervention about one learning: learning:<learning id>

@dataclass(frozen=True)
class InterventionCandidate:
    """One observation as the observers emit it (the spec's ``InterventionCandidate`` plus its dedupe key)."""

    candidate_id: str
    scope: str  # session | project | global
    target_project_id: str | None
    reason_codes: tuple[str, ...]
    confidence: float
    priority: int
    ttl_seconds: int
    cooldown_seconds: int
    payload_text: str
    dedupe_key: str
    evidence: dict[str, Any] = field(default_factory=dict)
    created_at: str = ""
    target_session_id: str | None = None


@dataclass(frozen=True)
class Active:
    """A row of ``active_interventions`` with what review shows next to it."""

    intervention_id: str
    scope: str
    target_project_id: str | None
    payload_text: str
    priority: int
    expires_at: str
    cooldown_until: str | None
    dedupe_key: str
    source_candidate_id: str | None
    updated_at: str
    reason_codes: tuple[str, ...] = ()
    confidence: float = 0.0
    evidence: dict[str, Any] = field(default_factory=dict)


def insert_candidates(conn: Connection, candidates: Sequence[InterventionCandidate]) -> int:
    """Append the candidates not written before (same id: same observation, nothing written); how many were new."""
    new = 0
    for c in candidates:
        cur = conn.execute(
            "INSERT OR IGNORE INTO intervention_candidates(candidate_id, scope, target_session_id, target_project_id, "
            "reason_codes_json, confidence, priority, ttl_seconds, cooldown_seconds, payload_text, state, created_at, "
            "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (c.candidate_id, c.scope, c.target_session_id, c.target_project_id, json.dumps(list(c.reason_codes)),
             c.confidence, c.priority, c.ttl_seconds, c.cooldown_seconds, c.payload_text, CANDIDATE, c.created_at,
             c.created_at),
        )  # fmt: skip
        if cur.rowcount:
            conn.execute(
                "INSERT INTO intervention_candidate_keys(candidate_id, dedupe_key, evidence_json) VALUES (?, ?, ?)",
                (c.candidate_id, c.dedupe_key, json.dumps(c.evidence, sort_keys=True)),
            )
            new += 1
    return new


def _candidate(row: Any) -> InterventionCandidate:
    return InterventionCandidate(
        candidate_id=row["candidate_id"],
        scope=row["scope"],
        target_project_id=row["target_project_id"],
        reason_codes=tuple(json.loads(row["reason_codes_json"])),
        confidence=float(row["confidence"]),
        priority=int(row["priority"]),
        ttl_seconds=int(row["ttl_seconds"]),
        cooldown_seconds=int(row["cooldown_seconds"]),
        payload_text=row["payload_text"],
        dedupe_key=row["dedupe_key"],
        evidence=json.loads(row["evidence_json"]),
        created_at=row["created_at"],
        target_session_id=row["target_session_id"],
    )


_CANDIDATE_SQL = (
    "SELECT c.*, k.dedupe_key, k.evidence_json FROM intervention_candidates c "
    "JOIN intervention_candidate_keys k ON k.candidate_id = c.candidate_id"
)


def pending(conn: Connection) -> list[InterventionCandidate]:
    """Candidates the reducer has not decided yet (no transition), oldest first."""
    rows = conn.execute(
        f"{_CANDIDATE_SQL} WHERE NOT EXISTS (SELECT 1 FROM intervention_transitions t "
        "WHERE t.candidate_id = c.candidate_id) ORDER BY c.created_at, c.candidate_id"
    ).fetchall()
    return [_candidate(r) for r in rows]


def candidate(conn: Connection, candidate_id: str) -> InterventionCandidate | None:
    row = conn.execute(f"{_CANDIDATE_SQL} WHERE c.candidate_id = ?", (candidate_id,)).fetchone()
    return _candidate(row) if row else None


def state_of(conn: Connection, candidate_id: str) -> str:
    """A candidate's current state: its last transition's, ``candidate`` when it has none."""
    row = conn.execute(
        "SELECT to_state FROM intervention_transitions WHERE candidate_id = ? ORDER BY id DESC LIMIT 1",
        (candidate_id,),
    ).fetchone()
    return row[0] if row else CANDIDATE


def add_transition(
    conn: Connection, candidate_id: str, to_state: str, reason: str, at: str, *, actor: str = "reducer"
) -> None:
    """Append one state change to the audit trail (from the candidate's current state)."""
    conn.execute(
        "INSERT INTO intervention_transitions(candidate_id, from_state, to_state, reason, actor, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (candidate_id, state_of(conn, candidate_id), to_state, reason, actor, at),
    )


def transitions(conn: Connection, candidate_id: str) -> list[tuple[str, str, str, str, str]]:
    """(from, to, reason, actor, at) of one candidate, in order."""
    rows = conn.execute(
        "SELECT from_state, to_state, reason, actor, at FROM intervention_transitions WHERE candidate_id = ? "
        "ORDER BY id",
        (candidate_id,),
    ).fetchall()
    return [tuple(r) for r in rows]


def by_dedupe_key(conn: Connection, dedupe_key: str) -> Active | None:
    row = conn.execute("SELECT * FROM active_interventions WHERE dedupe_key = ?", (dedupe_key,)).fetchone()
    return _active(row) if row else None


def _active(row: Any, extra: Any = None) -> Active:
    base = Active(
        intervention_id=row["intervention_id"],
        scope=row["scope"],
        target_project_id=row["target_project_id"],
        payload_text=row["payload_text"],
        priority=int(row["priority"]),
        expires_at=row["expires_at"],
        cooldown_until=row["cooldown_until"],
        dedupe_key=row["dedupe_key"],
        source_candidate_id=row["source_candidate_id"],
        updated_at=row["updated_at"],
    )
    if extra is None:
        return base
    return replace(
        base,
        reason_codes=tuple(json.loads(extra["reason_codes_json"])),
        confidence=float(extra["confidence"]),
        evidence=json.loads(extra["evidence_json"]),
    )


def activate(conn: Connection, c: InterventionCandidate, *, expires_at: str, cooldown_until: str, at: str) -> None:
    """Make ``c`` the active intervention of its dedupe key (replacing an expired one of the same key)."""
    conn.execute(
        "INSERT INTO active_interventions(intervention_id, scope, target_session_id, target_project_id, payload_text, "
        "priority, expires_at, cooldown_until, dedupe_key, source_candidate_id, updated_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(dedupe_key) DO UPDATE SET "
        "intervention_id = excluded.intervention_id, scope = excluded.scope, "
        "target_session_id = excluded.target_session_id, target_project_id = excluded.target_project_id, "
        "payload_text = excluded.payload_text, priority = excluded.priority, expires_at = excluded.expires_at, "
        "cooldown_until = excluded.cooldown_until, source_candidate_id = excluded.source_candidate_id, "
        "updated_at = excluded.updated_at",
        (c.candidate_id, c.scope, c.target_session_id, c.target_project_id, c.payload_text, c.priority, expires_at,
         cooldown_until, c.dedupe_key, c.candidate_id, at),
    )  # fmt: skip


def end(conn: Connection, intervention_id: str, at: str, *, cooldown_until: str) -> None:
    """End an active intervention now (dismissed in review); its key is held back until ``cooldown_until``."""
    conn.execute(
        "UPDATE active_interventions SET expires_at = ?, cooldown_until = max(coalesce(cooldown_until, ''), ?), "
        "updated_at = ? WHERE intervention_id = ? AND expires_at > ?",
        (at, cooldown_until, at, intervention_id, at),
    )


def newly_expired(conn: Connection, now: str) -> list[Active]:
    """Active rows whose time is up and whose source candidate is still recorded as approved."""
    rows = conn.execute(
        "SELECT a.* FROM active_interventions a WHERE a.expires_at <= ? AND a.source_candidate_id IS NOT NULL "
        "AND (SELECT to_state FROM intervention_transitions t WHERE t.candidate_id = a.source_candidate_id "
        "ORDER BY t.id DESC LIMIT 1) = 'approved'",
        (now,),
    ).fetchall()
    return [_active(r) for r in rows]


_ACTIVE_WITH_CANDIDATE = (
    "SELECT a.*, c.reason_codes_json, c.confidence, k.evidence_json FROM active_interventions a "
    "JOIN intervention_candidates c ON c.candidate_id = a.source_candidate_id "
    "JOIN intervention_candidate_keys k ON k.candidate_id = a.source_candidate_id"
)


def current(conn: Connection, now: str, project_id: str | None = None) -> list[Active]:
    """Unexpired interventions, highest priority first; with ``project_id``, those a packet of it carries
    (its own project-scoped ones and every global one)."""
    where, params = "a.expires_at > ?", [now]
    if project_id is not None:
        where += " AND (a.scope = 'global' OR (a.scope = 'project' AND a.target_project_id = ?))"
        params.append(project_id)
    rows = conn.execute(
        f"{_ACTIVE_WITH_CANDIDATE} WHERE {where} ORDER BY a.priority DESC, c.confidence DESC, a.intervention_id",
        params,
    ).fetchall()
    return [_active(r, r) for r in rows]


def global_only(items: Iterable[Active]) -> list[Active]:
    return [a for a in items if a.scope == "global"]


def packet_digests(conn: Connection) -> dict[str, str]:
    """Per project, the digest of the interventions its packets were last built with."""
    return {r[0]: r[1] for r in conn.execute("SELECT project_id, digest FROM packet_interventions")}


def save_packet_digest(conn: Connection, project_id: str, digest: str, at: str) -> None:
    conn.execute(
        "INSERT INTO packet_interventions(project_id, digest, built_at) VALUES (?, ?, ?) "
        "ON CONFLICT(project_id) DO UPDATE SET digest = excluded.digest, built_at = excluded.built_at",
        (project_id, digest, at),
    )


def counts_by_state(conn: Connection) -> dict[str, int]:
    """How many candidates are in each current state (for the asset's metadata)."""
    rows = conn.execute(
        "SELECT coalesce((SELECT to_state FROM intervention_transitions t WHERE t.candidate_id = c.candidate_id "
        "ORDER BY t.id DESC LIMIT 1), 'candidate') AS state, count(*) FROM intervention_candidates c GROUP BY state"
    ).fetchall()
    return {r[0]: int(r[1]) for r in rows}


class SqliteInterventionStore:
    """The intervention tables (this module's functions, over one connection)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def append_candidates(self, candidates: Sequence[InterventionCandidate]) -> int:
        with atomic(self.conn):
            return insert_candidates(self.conn, candidates)

    def add_transition(self, candidate_id: str, to_state: str, reason: str, at: str, *, actor: str = "reducer") -> None:
        with atomic(self.conn):
            add_transition(self.conn, candidate_id, to_state, reason, at, actor=actor)

    def transitions(self, candidate_id: str) -> list[tuple[str, str, str, str, str]]:
        return transitions(self.conn, candidate_id)

    def upsert_active(self, candidate: InterventionCandidate, *, expires_at: str, cooldown_until: str, at: str) -> None:
        with atomic(self.conn):
            activate(self.conn, candidate, expires_at=expires_at, cooldown_until=cooldown_until, at=at)

    def resolve(self, now: str, project_id: str | None = None) -> list[Active]:
        return current(self.conn, now, project_id)

"""Interventions on PostgreSQL: immutable candidates, the append-only transition trail and one active
intervention per dedupe key, for one tenant (the rules of :mod:`nous_assets.store.sqlite.interventions`)."""

from __future__ import annotations

import json
from collections.abc import Sequence

import psycopg
from psycopg.rows import dict_row

from nous_assets.store.sqlite.interventions import CANDIDATE, Active, InterventionCandidate


class PgInterventionStore:
    """The intervention tables of one tenant."""

    def __init__(self, conn: psycopg.Connection, tenant_id: str) -> None:
        self.conn = conn
        self.tenant_id = tenant_id

    def append_candidates(self, candidates: Sequence[InterventionCandidate]) -> int:
        new = 0
        with self.conn.transaction():
            for c in candidates:
                cur = self.conn.execute(
                    "INSERT INTO intervention_candidates(tenant_id, candidate_id, scope, target_session_id, "
                    "target_project_id, reason_codes_json, confidence, priority, ttl_seconds, cooldown_seconds, "
                    "payload_text, dedupe_key, evidence_json, created_at) "
                    "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT DO NOTHING",
                    (self.tenant_id, c.candidate_id, c.scope, c.target_session_id, c.target_project_id,
                     json.dumps(list(c.reason_codes)), c.confidence, c.priority, c.ttl_seconds, c.cooldown_seconds,
                     c.payload_text, c.dedupe_key, json.dumps(c.evidence, sort_keys=True), c.created_at),
                )  # fmt: skip
                new += cur.rowcount
        return new

    def state_of(self, candidate_id: str) -> str:
        row = self.conn.execute(
            "SELECT to_state FROM intervention_transitions WHERE tenant_id = %s AND candidate_id = %s "
            "ORDER BY id DESC LIMIT 1",
            (self.tenant_id, candidate_id),
        ).fetchone()
        return CANDIDATE if row is None else row[0]

    def add_transition(self, candidate_id: str, to_state: str, reason: str, at: str, *, actor: str = "reducer") -> None:
        with self.conn.transaction():
            self.conn.execute(
                "INSERT INTO intervention_transitions(tenant_id, candidate_id, from_state, to_state, reason, actor, "
                "at) VALUES (%s, %s, %s, %s, %s, %s, %s)",
                (self.tenant_id, candidate_id, self.state_of(candidate_id), to_state, reason, actor, at),
            )

    def transitions(self, candidate_id: str) -> list[tuple[str, str, str, str, str]]:
        rows = self.conn.execute(
            "SELECT from_state, to_state, reason, actor, at FROM intervention_transitions "
            "WHERE tenant_id = %s AND candidate_id = %s ORDER BY id",
            (self.tenant_id, candidate_id),
        ).fetchall()
        return [tuple(r) for r in rows]

    def upsert_active(self, candidate: InterventionCandidate, *, expires_at: str, cooldown_until: str, at: str) -> None:
        c = candidate
        self.conn.execute(
            "INSERT INTO active_interventions(tenant_id, intervention_id, scope, target_session_id, target_project_id, "
            "payload_text, priority, expires_at, cooldown_until, dedupe_key, source_candidate_id, updated_at) "
            "VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (tenant_id, dedupe_key) DO UPDATE SET "
            "intervention_id = excluded.intervention_id, scope = excluded.scope, "
            "target_session_id = excluded.target_session_id, target_project_id = excluded.target_project_id, "
            "payload_text = excluded.payload_text, priority = excluded.priority, expires_at = excluded.expires_at, "
            "cooldown_until = excluded.cooldown_until, source_candidate_id = excluded.source_candidate_id, "
            "updated_at = excluded.updated_at",
            (self.tenant_id, c.candidate_id, c.scope, c.target_session_id, c.target_project_id, c.payload_text,
             c.priority, expires_at, cooldown_until, c.dedupe_key, c.candidate_id, at),
        )  # fmt: skip

    def resolve(self, now: str, project_id: str | None = None) -> list[Active]:
        where, params = "a.expires_at > %s", [self.tenant_id, now]
        if project_id is not None:
            where += " AND (a.scope = 'global' OR (a.scope = 'project' AND a.target_project_id = %s))"
            params.append(project_id)
        rows = (
            self.conn.cursor(row_factory=dict_row)
            .execute(
                "SELECT a.*, c.reason_codes_json, c.confidence, c.evidence_json FROM active_interventions a "
                "JOIN intervention_candidates c "
                "ON c.tenant_id = a.tenant_id AND c.candidate_id = a.source_candidate_id "
                f"WHERE a.tenant_id = %s AND {where} ORDER BY a.priority DESC, c.confidence DESC, a.intervention_id",
                params,
            )
            .fetchall()
        )
        return [
            Active(
                intervention_id=r["intervention_id"], scope=r["scope"], target_project_id=r["target_project_id"],
                payload_text=r["payload_text"], priority=int(r["priority"]), expires_at=r["expires_at"],
                cooldown_until=r["cooldown_until"], dedupe_key=r["dedupe_key"],
                source_candidate_id=r["source_candidate_id"], updated_at=r["updated_at"],
                reason_codes=tuple(json.loads(r["reason_codes_json"])), confidence=float(r["confidence"]),
                evidence=json.loads(r["evidence_json"]),
            )  # fmt: skip
            for r in rows
        ]

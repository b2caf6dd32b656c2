"""The policy reducer: candidates -> ``active_interventions`` (confidence threshold, TTL, cooldown, dedupe).

For each candidate not decided yet, oldest first, one transition is appended to the audit trail:

* ``suppressed`` when its confidence is below ``intervention_min_confidence``;
* ``approved`` when its dedupe key has an unexpired intervention: the newer evidence replaces it (the old
  candidate is recorded ``suppressed``, "replaced by …"), so a key is active at most once;
* ``suppressed`` when the key's last intervention ended and its cooldown is not over (anti-spam);
* ``approved`` otherwise: active until ``now + ttl``, its key cooling down until ``expires + cooldown``.

Interventions whose time is up are recorded ``expired`` first. ``now`` is a parameter so TTL and cooldown
are decided by the caller's clock (tests pass explicit times). Everything runs in one transaction.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta

from nous_assets.store.db import Connection, atomic
from nous_assets.store.sqlite import interventions as store
from nous_assets.store.sqlite.interventions import InterventionCandidate
from nous_assets.timeutil import parse_time, to_iso


@dataclass
class ReduceStats:
    approved: int = 0
    suppressed: int = 0
    expired: int = 0
    projects: set[str | None] = field(default_factory=set)  # whose packets change (None: every packet)


def later(at: str, seconds: int) -> str:
    return to_iso(parse_time(at) + timedelta(seconds=int(seconds)))


def _touch(stats: ReduceStats, scope: str, project_id: str | None) -> None:
    stats.projects.add(None if scope == "global" else project_id)


def _decide(conn: Connection, c: InterventionCandidate, min_confidence: float, now: str, stats: ReduceStats) -> None:
    if c.confidence < min_confidence:
        store.add_transition(conn, c.candidate_id, "suppressed", f"confidence {c.confidence:.2f} below "
                             f"{min_confidence:.2f}", now)  # fmt: skip
        stats.suppressed += 1
        return
    existing = store.by_dedupe_key(conn, c.dedupe_key)
    reason = "confidence, dedupe and cooldown passed"
    if existing is not None and existing.expires_at > now:
        if existing.source_candidate_id:
            store.add_transition(conn, existing.source_candidate_id, "suppressed",
                                 f"replaced by newer evidence {c.candidate_id}", now)  # fmt: skip
        reason = f"refreshes {existing.intervention_id} (same dedupe key) with newer evidence"
    elif existing is not None and existing.cooldown_until and now < existing.cooldown_until:
        store.add_transition(conn, c.candidate_id, "suppressed",
                             f"cooling down until {existing.cooldown_until} ({c.dedupe_key})", now)  # fmt: skip
        stats.suppressed += 1
        return
    expires = later(now, c.ttl_seconds)
    store.activate(conn, c, expires_at=expires, cooldown_until=later(expires, c.cooldown_seconds), at=now)
    store.add_transition(conn, c.candidate_id, "approved", reason, now)
    stats.approved += 1
    _touch(stats, c.scope, c.target_project_id)


def reduce(conn: Connection, min_confidence: float, now: str, *, observed: set[str] | None = None) -> ReduceStats:
    """Expire what is due, then decide every pending candidate (see the module docstring). With ``observed``
    (the dedupe keys the observers still see), an active intervention whose condition cleared — its memory
    superseded, archived or injected since — ends now, recorded ``expired``."""
    stats = ReduceStats()
    with atomic(conn):
        for a in store.newly_expired(conn, now):
            store.add_transition(conn, a.source_candidate_id or "", "expired", f"ttl elapsed at {a.expires_at}", now)
            stats.expired += 1
            _touch(stats, a.scope, a.target_project_id)
        for a in store.current(conn, now) if observed is not None else ():
            if a.dedupe_key in observed or not a.source_candidate_id:
                continue
            store.end(conn, a.intervention_id, now, cooldown_until=a.cooldown_until or now)
            store.add_transition(conn, a.source_candidate_id, "expired", "condition no longer observed", now)
            stats.expired += 1
            _touch(stats, a.scope, a.target_project_id)
        for c in store.pending(conn):
            _decide(conn, c, min_confidence, now, stats)
    return stats


class UnknownIntervention(LookupError):
    """No active intervention has that id."""


def dismiss(conn: Connection, intervention_id: str, now: str, *, reason: str | None = None) -> InterventionCandidate:
    """End an active intervention from ``nous review`` (audited as ``user_review``); its key then cools down."""
    with atomic(conn):
        candidate = store.candidate(conn, intervention_id)
        active = store.by_dedupe_key(conn, candidate.dedupe_key) if candidate else None
        if candidate is None or active is None or active.intervention_id != intervention_id:
            raise UnknownIntervention(f"no active intervention {intervention_id}")
        if active.expires_at <= now:
            return candidate
        store.end(conn, intervention_id, now, cooldown_until=later(now, candidate.cooldown_seconds))
        why = " ".join((reason or "").split()) or "dismissed by the user"
        store.add_transition(conn, intervention_id, "suppressed", f"dismissed in review: {why}", now,
                             actor="user_review")  # fmt: skip
    return candidate

"""CacheStore and InterventionStore contracts: packets replaced per project atomically, read by key,
invalidated; candidates appended once, an audit trail of transitions, one active intervention per dedupe
key, resolved by project and priority."""

from __future__ import annotations

import json

from nous_assets.store.packet_row import CachedPacket
from nous_assets.store.protocols import CacheStore, InterventionStore
from nous_assets.store.sqlite.interventions import InterventionCandidate

AT = "2026-01-01T00:00:00.000000Z"


def _packet(project: str, suffix: str, text: str, built: int) -> tuple:
    return (f"{project}:{suffix}", project, "project", json.dumps({"fp": suffix}), text, "[1, 2]", len(text), built, AT)


def test_providers_satisfy_the_protocols(backend):
    assert isinstance(backend.cache, CacheStore)
    assert isinstance(backend.interventions, InterventionStore)


def test_put_replaces_every_packet_of_a_project_and_only_that_project(backend):
    cache = backend.cache
    cache.put("p1", [_packet("p1", "a", "alpha", 5), _packet("p1", "b", "beta", 7)])
    cache.put("p10", [_packet("p10", "a", "other project", 3)])
    assert cache.get("p1:a") == CachedPacket(*_packet("p1", "a", "alpha", 5))
    assert cache.built_versions() == {"p1": 5, "p10": 3}
    cache.put("p1", [_packet("p1", "c", "gamma", 9)])
    assert cache.get("p1:a") is None and cache.get("p1:b") is None
    assert cache.get("p1:c").packet_text == "gamma"
    assert cache.get("p10:a").packet_text == "other project"  # a project whose name extends p1 is untouched
    assert cache.invalidate(["p1:c", "p1:missing"]) == 1
    assert cache.get("p1:c") is None
    assert cache.built_versions() == {"p10": 3}


def _candidate(cid: str, *, key: str, scope: str = "project", project: str | None = "p1", priority: int = 1,
               confidence: float = 0.8) -> InterventionCandidate:  # fmt: skip
    return InterventionCandidate(
        candidate_id=cid, scope=scope, target_project_id=project, reason_codes=("repeat_failure",),
        confidence=confidence, priority=priority, ttl_seconds=3600, cooldown_seconds=600,
        payload_text=f"note {cid}", dedupe_key=key, evidence={"sessions": [cid]}, created_at=AT,
    )  # fmt: skip


def test_candidates_are_appended_once_with_an_audit_trail(backend):
    store = backend.interventions
    assert store.append_candidates([_candidate("c1", key="k1"), _candidate("c2", key="k2")]) == 2
    assert store.append_candidates([_candidate("c1", key="k1")]) == 0
    store.add_transition("c1", "approved", "confident", AT)
    store.add_transition("c1", "expired", "ttl", "2026-01-02T00:00:00.000000Z")
    assert store.transitions("c1") == [
        ("candidate", "approved", "confident", "reducer", AT),
        ("approved", "expired", "ttl", "reducer", "2026-01-02T00:00:00.000000Z"),
    ]
    assert store.transitions("c2") == []


def test_one_active_intervention_per_key_resolved_by_project_and_priority(backend):
    store = backend.interventions
    cands = [
        _candidate("c1", key="k1", priority=1),
        _candidate("c2", key="k1", priority=5),  # same key: replaces c1
        _candidate("c3", key="k3", scope="global", project=None, priority=3),
        _candidate("c4", key="k4", project="p2", priority=9),
        _candidate("c5", key="k5", priority=2),
    ]
    store.append_candidates(cands)
    for c in cands:
        expires = "2026-01-01T00:30:00.000000Z" if c.candidate_id == "c5" else "2026-01-02T00:00:00.000000Z"
        store.upsert_active(c, expires_at=expires, cooldown_until=expires, at=AT)
    now = "2026-01-01T01:00:00.000000Z"  # c5 has expired
    active = store.resolve(now, "p1")
    assert [a.intervention_id for a in active] == ["c2", "c3"]
    assert active[0].dedupe_key == "k1" and active[0].evidence == {"sessions": ["c2"]}
    assert active[0].reason_codes == ("repeat_failure",)
    assert [a.intervention_id for a in store.resolve(now)] == ["c4", "c2", "c3"]

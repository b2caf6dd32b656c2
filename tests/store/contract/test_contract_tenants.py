"""Tenant isolation: whatever tenant A writes, tenant B's providers neither see nor change, and the same
idempotency keys mean different things per tenant. (SQLite: one file per tenant; PostgreSQL: one database,
every row keyed and every query filtered by tenant.)"""

from __future__ import annotations

import json

from eventgen import extracted, lifecycle

from nous_assets.store.sqlite.interventions import InterventionCandidate

AT = "2026-01-01T00:00:00.000000Z"
LATER = "2026-02-01T00:00:00.000000Z"


def _fill(b) -> dict:
    """Write something through every provider of ``b``; returns the ids written."""
    stored = b.events.append_many([
        extracted("L1", "tenant secret about deploys", key="x1", concepts=["deploy"]),
        extracted("L2", "another secret", key="x2", edges=[{"target": "L1", "rel_type": "relates_to"}]),
        lifecycle("LearningReinforced", "L1", {"reinforcement_delta": 0.2}, key="r1"),
    ])  # fmt: skip
    b.projection.project()
    one, two = stored[0].event.event_id, stored[1].event.event_id
    b.vectors.upsert({one: [1.0, 0.0], two: [0.0, 1.0]}, model="m", content_hashes={one: "a", two: "b"}, at=AT)
    b.cache.put("p1", [("p1:fp", "p1", "project", "{}", "packet of A", json.dumps([one]), 11, two, AT)])
    cand = InterventionCandidate("c1", "global", None, ("r",), 0.9, 1, 60, 60, "note of A", "k1", {}, AT)
    b.interventions.append_candidates([cand])
    b.interventions.upsert_active(cand, expires_at=LATER, cooldown_until=LATER, at=AT)
    return {"ids": [one, two]}


def test_tenant_b_never_sees_tenant_a(make_backend):
    a, b = make_backend("a"), make_backend("b")
    written = _fill(a)
    one, two = written["ids"]
    assert b.events.last_event_id() == 0 and list(b.events.replay(0)) == []
    assert b.events.get(one) is None and b.events.get_by_key("x1") is None
    assert b.projection.project().events == 0
    assert b.projection.memory(one) is None and b.projection.search_text("secret deploys", 10) == []
    assert b.projection.snapshot() == {"memories": [], "concepts": [], "edges": [], "memories_fts": []}
    assert b.vectors.search([1.0, 0.0], 5, model="m") == []
    assert b.cache.get("p1:fp") is None and b.cache.built_versions() == {}
    assert b.interventions.resolve(AT) == [] and b.interventions.transitions("c1") == []


def test_tenant_b_cannot_change_tenant_a(make_backend):
    a, b = make_backend("a"), make_backend("b")
    written = _fill(a)
    before = a.projection.snapshot()
    # the same keys are new events for B, and B's writes land in B only
    fresh = b.events.append(extracted("L1", "B's own words", key="x1"))
    assert fresh.created and b.events.get_by_key("x1").payload["content"] == "B's own words"
    b.projection.project()
    b.projection.rebuild()
    assert b.vectors.delete(written["ids"]) == 0
    assert b.cache.invalidate(["p1:fp"]) == 0
    b.cache.put("p1", [])

    assert a.projection.snapshot() == before
    assert a.events.get_by_key("x1").payload["content"] == "tenant secret about deploys"
    assert {i for i, _ in a.vectors.search([1.0, 0.0], 5, model="m")} == set(written["ids"])
    assert a.cache.get("p1:fp").packet_text == "packet of A"
    assert [x.intervention_id for x in a.interventions.resolve(AT)] == ["c1"]

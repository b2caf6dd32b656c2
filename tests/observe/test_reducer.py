"""The reducer: confidence threshold, TTL, cooldown and dedupe, every state change in the audit trail."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.observe.reducer import UnknownIntervention, dismiss, later, reduce
from nous_assets.store.db import atomic
from nous_assets.store.sqlite import interventions
from nous_assets.store.sqlite.interventions import InterventionCandidate

T0 = "2026-04-01T00:00:00.000000Z"
MIN = 0.6


def _candidate(cid: str, key: str = "learning:x", confidence: float = 0.8, at: str = T0, *, ttl=3600, cooldown=7200,
               project="shop", scope="project") -> InterventionCandidate:  # fmt: skip
    return InterventionCandidate(cid, scope, project, ("repeated_correction",), confidence, 3, ttl, cooldown,
                                 f"note {cid}", key, {"memory_id": 1}, at)  # fmt: skip


def _emit(conn, *candidates: InterventionCandidate) -> None:
    with atomic(conn):
        interventions.insert_candidates(conn, list(candidates))


def _states(conn, cid: str) -> list[str]:
    return [to for _, to, _, _, _ in interventions.transitions(conn, cid)]


def test_below_the_confidence_threshold_is_suppressed_with_its_reason(conn):
    _emit(conn, _candidate("weak", confidence=0.55))
    stats = reduce(conn, MIN, T0)
    assert stats.suppressed == 1 and stats.approved == 0 and interventions.current(conn, T0) == []
    [(frm, to, why, actor, _)] = interventions.transitions(conn, "weak")
    assert (frm, to, actor) == ("candidate", "suppressed", "reducer") and "0.55 below 0.60" in why


def test_approved_until_its_ttl_then_expired_then_cooling_down(conn):
    _emit(conn, _candidate("a"))
    assert reduce(conn, MIN, T0).approved == 1
    [active] = interventions.current(conn, T0)
    assert active.expires_at == later(T0, 3600) and active.cooldown_until == later(T0, 3600 + 7200)
    assert interventions.current(conn, "2026-04-01T00:59:59.000000Z") != []
    after_ttl = "2026-04-01T01:00:00.000000Z"
    stats = reduce(conn, MIN, after_ttl)
    assert stats.expired == 1 and interventions.current(conn, after_ttl) == []
    assert reduce(conn, MIN, after_ttl).expired == 0  # recorded once
    # the same key, new evidence, inside the cooldown: suppressed
    _emit(conn, _candidate("b", at=after_ttl))
    assert reduce(conn, MIN, after_ttl).suppressed == 1
    assert "cooling down until" in interventions.transitions(conn, "b")[0][2]
    # after the cooldown it may come back
    late = "2026-04-01T03:00:00.000000Z"
    _emit(conn, _candidate("c", at=late))
    assert reduce(conn, MIN, late).approved == 1
    assert [a.intervention_id for a in interventions.current(conn, late)] == ["c"]
    assert _states(conn, "a") == ["approved", "expired"] and _states(conn, "b") == ["suppressed"]


def test_one_active_intervention_per_dedupe_key(conn):
    _emit(conn, _candidate("old", at=T0))
    reduce(conn, MIN, T0)
    soon = "2026-04-01T00:10:00.000000Z"
    _emit(conn, _candidate("new", at=soon), _candidate("other", key="learning:y", at=soon))
    stats = reduce(conn, MIN, soon)
    assert stats.approved == 2
    assert sorted(a.intervention_id for a in interventions.current(conn, soon)) == ["new", "other"]
    assert _states(conn, "old") == ["approved", "suppressed"]
    assert "replaced by newer evidence new" in interventions.transitions(conn, "old")[1][2]


def test_dismissed_in_review_ends_it_and_the_key_cools_down(conn):
    _emit(conn, _candidate("a"))
    reduce(conn, MIN, T0)
    later_on = "2026-04-01T00:30:00.000000Z"
    dismiss(conn, "a", later_on, reason="not helpful")
    assert interventions.current(conn, later_on) == []
    [_, (frm, to, why, actor, _)] = interventions.transitions(conn, "a")
    assert (frm, to, actor) == ("approved", "suppressed", "user_review") and "not helpful" in why
    _emit(conn, _candidate("b", at=later_on))
    assert reduce(conn, MIN, later_on).suppressed == 1  # cooling down from the dismissal
    try:
        dismiss(conn, "nope", later_on)
    except UnknownIntervention:
        pass
    else:
        raise AssertionError("dismissing an unknown intervention was accepted")


_STEP = st.tuples(st.sampled_from(["k1", "k2"]), st.floats(0.3, 1.0), st.integers(0, 5000))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(_STEP, min_size=1, max_size=12))
def test_any_sequence_keeps_the_policy(tmp_path_factory, new_db, steps):
    """Whatever arrives when: at most one intervention per key is active, nothing below the threshold is ever
    approved, every candidate is decided once, an approval never lands inside its key's cooldown, and a
    suppressed candidate leaves the live intervention of its key in place."""
    conn = new_db(tmp_path_factory.mktemp("reduce") / "cortex.db")
    try:
        clock = 0
        for n, (key, drawn, advance) in enumerate(steps):
            confidence = round(drawn, 3)  # what the candidate event carries
            clock += advance
            now = later(T0, clock)
            cid = f"c{n}"
            before = interventions.by_dedupe_key(conn, key)
            _emit(conn, _candidate(cid, key, confidence, now, ttl=1800, cooldown=1800))
            reduce(conn, MIN, now)
            active = interventions.current(conn, now)
            assert len({a.dedupe_key for a in active}) == len(active)
            history = interventions.transitions(conn, cid)
            assert len(history) == 1 and history[0][0] == "candidate"
            if history[0][1] == "approved":
                assert confidence >= MIN - 1e-9
                # never inside the cooldown of the key's last intervention (a refresh of a live one is fine)
                assert before is None or before.expires_at > now or now >= before.cooldown_until
                assert [a.intervention_id for a in active if a.dedupe_key == key] == [cid]
            elif before is not None and before.expires_at > now:
                assert [a.intervention_id for a in active if a.dedupe_key == key] == [before.intervention_id]
        assert interventions.pending(conn) == []
    finally:
        conn.close()

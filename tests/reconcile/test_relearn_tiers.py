"""Re-learning tiers 2 and 3, the decision matrix applied as events, and the re-learning flags review reads."""

from __future__ import annotations

import json

import pytest
from test_one_memory_per_learning import _ingest, _record

from nous_assets.reconcile.decision_matrix import History, decide_relearning
from nous_assets.reconcile.relearn import Held, Incoming, decide, jaccard, signature
from nous_assets.settings import Thresholds
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.reads import recurrence
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, verify

HELD = "Integration tests require the database container running under docker compose."
REWORDED = "Integration tests requires the database containers running under docker-compose."
OTHERS = [Held("o1", "Run the linter before pushing."), Held("o2", "The dev server listens on port 4000.")]


def test_tier2_merges_a_rewording_tier1_misses():
    assert jaccard(signature(HELD), signature(REWORDED)) < 0.75  # tier 1 alone keeps them apart
    decision = decide(Incoming("new", REWORDED), [Held("held", HELD), *OTHERS])
    assert decision.reinforces and decision.target == "held" and decision.tier == 2 and decision.similarity >= 0.85


def test_tier2_keeps_a_sentence_with_other_names_apart():
    """Same frame, other tool and other target: a template filled differently, not an inflection."""
    other = "Integration tests require the cache container running under docker compose."
    decision = decide(Incoming("new", other), [Held("held", HELD), *OTHERS])
    assert not decision.reinforces
    named = decide(Incoming("n", "Config lives in `apps/web/.env`, read at boot."),
                   [Held("h", "Config lives in `apps/api/.env`, read at boot.")])  # fmt: skip
    assert not named.reinforces


def test_tier3_is_asked_only_about_ambiguous_pairs():
    asked: list[tuple[str, str]] = []

    def judge(a: str, b: str) -> bool:
        asked.append((a, b))
        return True

    clear = decide(Incoming("new", REWORDED), [Held("held", HELD), *OTHERS], judge=judge)
    assert clear.tier == 2 and asked == []  # tier 2 settled it
    far = decide(Incoming("x", "Use pnpm for installs."), [Held("held", HELD)], judge=judge)
    assert not far.reinforces and asked == []  # nothing alike: nothing to ask
    near_text = "Integration tests need a database container up, started under docker compose beforehand."
    held = [Held("held", HELD), *OTHERS]
    without = decide(Incoming("n", near_text), held, near_miss=0.4, ambiguous=0.5)
    assert without.action == "new" and without.near == "held"  # a near-miss, recorded
    judged = decide(Incoming("n", near_text), held, near_miss=0.4, ambiguous=0.5, judge=judge)
    assert judged.reinforces and judged.tier == 3 and asked == [(near_text, HELD)]
    refused = decide(Incoming("n", near_text), held, near_miss=0.4, ambiguous=0.5, judge=lambda a, b: None)
    assert refused.action == "new" and refused.near == "held"  # "cannot tell" is a no


@pytest.mark.parametrize(
    ("history", "expected"),
    [
        (History(2, 0.9, 5, 5, 0), ("merge_silent", 0.1)),  # low recurrence: merge silently, whatever else
        (History(3, 0.8, 4, 3, 1), ("merge_boost", 0.3)),  # high, high score, injections helped
        (History(3, 0.5, 4, 3, 1), ("merge_silent", 0.1)),  # helped but the score is not high yet
        (History(4, 0.8, 0, 0, 0), ("injection_failure", 0.1)),  # never injected
        (History(3, 0.2, 2, 0, 2), ("injection_failure", 0.1)),  # low score, injected and ignored
        (History(3, 0.5, 2, 0, 2), ("rewrite", 0.1)),  # medium score, injected and ignored
    ],
)
def test_decision_matrix(history, expected):
    decision, delta = decide_relearning(history, Thresholds())
    assert (decision, pytest.approx(delta)) == (expected[0], expected[1])


def _flags(conn):
    return {f["session_id"]: f for f in recurrence.relearn_flags(conn)}


def test_a_third_session_relearning_a_never_injected_memory_flags_an_injection_failure(conn):
    for n in (1, 2, 3):
        _ingest(conn, f"s{n}", [_record(HELD if n == 1 else REWORDED)])
    project(conn)
    lid, score = conn.execute("SELECT learning_id, reinforcement_score FROM memories").fetchone()
    flags = _flags(conn)
    assert flags["s2"]["decision"] == "merge_silent" and flags["s2"]["tier"] == 2 and flags["s2"]["matched"] == lid
    assert flags["s3"]["decision"] == "injection_failure"
    assert score == pytest.approx(0.5 + 0.1 + 0.1)
    assert verify(conn).ok


def test_a_helpful_high_scored_memory_relearned_in_a_third_session_is_boosted(conn):
    _ingest(conn, "s1", [_record(HELD)])
    project(conn)
    memory_id, lid = conn.execute("SELECT id, learning_id FROM memories").fetchone()
    store = SqliteEventStore(conn)
    for n in range(3):  # earlier sessions where it was injected and helped
        conn.execute("INSERT INTO access_log(memory_id, session_id, project_id, source, accessed_at, was_useful) "
                     "VALUES (?, ?, 'spotter', 'hook', '2026-02-11T00:00:00Z', 1)", (memory_id, f"i{n}"))  # fmt: skip
        store.append(LearningEvent("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "session_outcome"},
                                   f"i{n}", "spotter", "fs_reconcile", f"outcome-{n}"))  # fmt: skip
    _ingest(conn, "s2", [_record(REWORDED)])
    _ingest(conn, "s3", [_record(HELD)])
    project(conn)
    flags = _flags(conn)
    assert flags["s3"]["decision"] == "merge_boost" and flags["s3"]["tier"] == 1
    payload = json.loads(conn.execute("SELECT payload_json FROM learning_events WHERE session_id = 's3'").fetchone()[0])
    assert payload["reinforcement_delta"] == pytest.approx(0.3) and payload["reason"] == "relearned"
    score = conn.execute("SELECT reinforcement_score FROM memories").fetchone()[0]
    assert score == pytest.approx(0.5 + 0.3 + 0.1 + 0.3)
    # the recurrence retrieval reads counts every tier's re-learning as a session that learned it
    assert recurrence.learning_sessions(conn, [lid]) == {lid: 3}


def test_near_misses_are_recorded_in_the_shared_shape_and_the_old_shape_still_reads(conn):
    _ingest(conn, "s1", [_record("Integration tests require the database container running under docker compose.")])
    t = Thresholds(relearn_near_miss=0.4, relearn_ambiguous=0.5)
    near = "Integration tests need a database container up, started under docker compose beforehand."
    from nous_assets.extract.base import SessionBatch
    from nous_assets.extract.worker import DrainStats, append_learnings

    append_learnings(conn, SessionBatch("spotter", "s2", "2026-02-10", ()), [_record(near)], extractor_version="v1",
                     source="historical_backfill", thresholds=t, stats=DrainStats())  # fmt: skip
    SqliteEventStore(conn).append(LearningEvent(
        "LearningExtracted", "old-format", {"content": "x", "extractor_version": "v0", "concepts": [], "edges": [],
                                            "relearn": {"near": "someone", "similarity": 0.7}},
        "s0", "spotter", "historical_backfill", "old-near"))  # fmt: skip
    flags = _flags(conn)
    assert flags["s2"]["decision"] == "near_miss" and flags["s2"]["matched"] is not None
    assert set(flags["s2"]) >= {"decision", "tier", "similarity", "matched"}
    assert {k: flags["s0"][k] for k in ("decision", "tier", "similarity", "matched")} == {
        "decision": "near_miss", "tier": 1, "similarity": 0.7, "matched": "someone"}  # fmt: skip

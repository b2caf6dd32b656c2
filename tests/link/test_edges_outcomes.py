"""Derived edges (similarity, D-T-D causality) and the reinforcement loop (outcomes, feedback)."""

from __future__ import annotations

import json

import pytest

from nous_assets.link.edges import derive_edges
from nous_assets.reinforce.outcomes import evaluate_sessions, feedback_event, ingest_access_spool
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project, rebuild, verify


def _learn(store, lid, content, concepts, *, session="s1", offset=0, path="/t/s1.jsonl", project_id="p"):
    store.append(LearningEvent(
        "LearningExtracted", lid,
        {"content": content, "extractor_version": "t", "concepts": concepts, "edges": [],
         "provenance": {"session_id": session, "source_path": path, "uuids": [lid], "line_offsets": [offset]}},
        session, project_id, "historical_backfill", f"k-{lid}"))


def _edges(conn, rel):
    return {(s, t): w for s, t, w in conn.execute(
        "SELECT source_id, target_id, weight FROM edges WHERE rel_type = ? AND origin = 'derived'", (rel,))}


def test_similarity_edges_link_concept_neighbours_within_a_project(store, conn):
    _learn(store, "a", "pytest fixtures for sqlite", ["pytest", "sqlite", "fixtures"])
    _learn(store, "b", "sqlite fixtures in pytest are slow", ["pytest", "sqlite", "speed"])
    _learn(store, "c", "deploy with docker", ["docker", "deploy", "compose"])
    _learn(store, "d", "pytest sqlite fixtures elsewhere", ["pytest", "sqlite", "fixtures"], project_id="other")
    project(conn)
    stats = derive_edges(conn)
    related = _edges(conn, "relates_to")
    assert (1, 2) in related and (2, 1) in related and related[(1, 2)] == pytest.approx(0.5)
    assert not any(3 in pair for pair in related)  # nothing shared with the docker memory
    assert not any(4 in pair for pair in related)  # other project's memory is not linked
    assert stats.memories == 4
    again = derive_edges(conn)  # incremental: nothing changed since the checkpoint
    assert again.memories == 0 and _edges(conn, "relates_to") == related


def test_causal_edges_follow_the_session_and_subagent_briefing(store, conn):
    _learn(store, "p1", "parent before task", ["x", "y", "z"], session="S", offset=100)
    _learn(store, "p2", "parent after task", ["x", "y", "w"], session="S", offset=900)
    _learn(store, "c1", "subagent first", ["q", "r", "s"], session="S#agent-a1", offset=10, path="/t/sub.jsonl")
    _learn(store, "c2", "subagent last", ["q", "r", "t"], session="S#agent-a1", offset=50, path="/t/sub.jsonl")
    project(conn)
    derive_edges(conn, task_offsets={"S#agent-a1": ("S", "/t/s1.jsonl", 500)})
    causes = _edges(conn, "causes")
    assert (1, 2) in causes  # consecutive learnings of the parent session
    assert (3, 4) in causes  # and of the subagent
    assert causes[(1, 3)] == 0.7  # briefing: parent's learning before the Task call -> subagent's first
    assert causes[(4, 2)] == 0.7  # debriefing: subagent's last -> parent's first after the call
    assert all(0 <= w <= 1 for w in causes.values())


def test_derived_edges_never_overwrite_event_edges_and_replay_ignores_them(store, conn):
    _learn(store, "a", "one", ["m", "n", "o"])
    store.append(LearningEvent("LearningExtracted", "b", {"content": "two", "extractor_version": "t",
                 "concepts": ["m", "n", "o"], "edges": [{"target": "a", "rel_type": "relates_to", "weight": 0.9}]},
                 "s1", "p", "historical_backfill", "k-b"))
    project(conn)
    derive_edges(conn)
    row = conn.execute("SELECT weight, origin FROM edges WHERE source_id = 2 AND target_id = 1").fetchone()
    assert tuple(row) == (0.9, "event")
    assert verify(conn).ok
    rebuild(conn)  # a rebuild drops derived edges; the pipeline derives them again
    assert verify(conn).ok


def test_session_outcomes_reinforce_touched_memories_and_weaken_corrected_ones(store, conn):
    _learn(store, "a", "run mypy in strict mode", ["mypy", "strict mode", "typing"])
    _learn(store, "b", "use the docker compose stack for tests", ["docker compose", "integration tests"])
    _learn(store, "c", "prefer httpx over requests", ["httpx", "requests", "http client"])
    project(conn)
    conn.executemany("INSERT INTO access_log(memory_id, session_id, accessed_at) VALUES (?, 'S9', '2026-03-01')",
                     [(1,), (2,), (3,)])
    texts = {"S9": "ran mypy strict mode on the typing module; then docker compose up for integration tests"}
    corrections = {"S9": "no, the docker compose stack is wrong for integration tests"}
    stats = evaluate_sessions(conn, texts, corrections)
    assert (stats.evaluated, stats.reinforced, stats.weakened, stats.untouched) == (3, 1, 1, 1)
    project(conn)
    scores = dict(conn.execute("SELECT learning_id, reinforcement_score FROM memories"))
    assert scores["a"] == pytest.approx(0.6) and scores["b"] == pytest.approx(0.3) and scores["c"] == 0.5
    again = evaluate_sessions(conn, texts, corrections)  # each access is judged once
    assert again.evaluated == 0


def test_feedback_and_access_spool(store, conn, tmp_path):
    _learn(store, "a", "use ruff", ["ruff", "lint", "python"])
    project(conn)
    event = feedback_event(conn, 1, "useful", session_id="S1")
    assert event.event_type == "LearningReinforced"
    assert feedback_event(conn, 1, "useful", session_id="S1").event_id == event.event_id  # idempotent per session
    assert feedback_event(conn, 1, "ignored") is None
    assert feedback_event(conn, 1, "corrected").event_type == "LearningWeakened"
    with pytest.raises(LookupError):
        feedback_event(conn, 999, "useful")
    spool = tmp_path / "access-spool.jsonl"
    spool.write_text(json.dumps({"memory_ids": [1], "session_id": "S2", "accessed_at": "2026-03-02"}) + "\n{torn")
    assert ingest_access_spool(conn, spool) == 1 and not spool.exists()
    assert conn.execute("SELECT count(*) FROM access_log WHERE session_id = 'S2'").fetchone()[0] == 1


def test_corrections_are_read_from_the_log_before_the_projection_catches_up(store, conn):
    """session_outcomes runs upstream of the projecting asset: a correction appended in this run counts."""
    from nous_assets.store.search.memory_lookup import corrections_by_session

    _learn(store, "b", "use the docker compose stack for tests", ["docker compose", "integration tests"])
    project(conn)
    conn.execute("INSERT INTO access_log(memory_id, session_id, accessed_at) VALUES (1, 'S9', '2026-03-01')")
    payload = {"content": "no, the docker compose stack is wrong for integration tests", "kind": "correction",
               "extractor_version": "t", "concepts": ["docker compose"], "edges": []}
    store.append(LearningEvent("LearningExtracted", "fix", payload, "S9", "p", "historical_backfill", "k-fix"))
    # the correction event above is not projected
    corrections = corrections_by_session(conn, ["S9", "S0"])
    assert set(corrections) == {"S9"} and "is wrong" in corrections["S9"]
    stats = evaluate_sessions(conn, {"S9": "docker compose up for the integration tests"}, corrections)
    assert (stats.reinforced, stats.weakened) == (0, 1)

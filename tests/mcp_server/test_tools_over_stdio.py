"""The four read-only tools through the real MCP client over stdio, on the backfilled shared corpus.

Queries are gold learnings of the shared transcripts (../shared/data/gold/gold-dev.jsonl) that the pipeline
stores; the expected memories are the ones the gold entry's own keyword sets match, read from the pipeline's
database — nothing here names a memory id or a result.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from nous_assets.mcp_server.predict import OUTCOME_FLOOR
from nous_assets.retrieve.scoring import DIMENSIONS
from nous_assets.status import STATUSES

pytestmark = pytest.mark.slow

# Gold learnings across the three source corpora and six kinds; (id, give the gold cwd as the project).
GOLD_QUERIES = [
    ("spotter-3", False),
    ("spotter-10", True),
    ("spotter-14", True),
    ("spotter-26", False),
    ("spotter-70", True),
    ("episodic-memory-11", True),
    ("episodic-memory-43", False),
    ("fasthooks-2", True),
]


def matches_gold(text: str, entry: dict[str, Any]) -> bool:
    """The gold set's rule: the text contains every keyword of at least one of the entry's keyword sets."""
    lowered = text.lower()
    return any(all(keyword.lower() in lowered for keyword in keywords) for keywords in entry["match"])


def stored_matches(corpus_pipeline, entry: dict[str, Any]) -> set[int]:
    conn = corpus_pipeline.conn()
    try:
        rows = conn.execute("SELECT id, content FROM memories").fetchall()
    finally:
        conn.close()
    return {mid for mid, content in rows if matches_gold(content, entry)}


def _line_at(path: str, offset: int) -> dict[str, Any]:
    with open(path, "rb") as handle:
        handle.seek(offset)
        return json.loads(handle.readline())


def test_the_server_lists_four_read_only_tools_and_remember(corpus_client):
    tools = {tool.name: tool for tool in corpus_client.tools()}
    assert set(tools) == {"recall", "explain", "timeline", "predict", "remember"}
    assert all(tool.annotations.read_only_hint for name, tool in tools.items() if name != "remember")
    assert tools["recall"].input_schema["required"] == ["query"]
    budget = tools["recall"].input_schema["properties"]["budget"]
    assert 20_000 in [branch.get("maximum") for branch in budget.get("anyOf", [budget])]


@pytest.mark.parametrize(("gold_id", "by_directory"), GOLD_QUERIES)
def test_recall_finds_the_gold_learning(corpus_client, corpus_pipeline, gold, gold_id, by_directory):
    entry = gold[gold_id]
    expected = stored_matches(corpus_pipeline, entry)
    assert expected, f"the pipeline no longer stores {gold_id}; pick another gold learning"
    args = {"query": entry["text"]}
    if by_directory:
        args["project"] = entry["project_cwd"]
    answer = corpus_client.answer("recall", args)
    memories = [r for r in answer["results"] if "memory" in r][:3]
    assert any(r["memory"] in expected for r in memories), (gold_id, [r["text"] for r in memories])
    if by_directory:  # the directory named the project: nothing from elsewhere but global memories
        assert {r["project"] for r in answer["results"] if r.get("scope") != "global"} == {answer["project"]}


def test_recall_results_carry_date_project_source_and_score_breakdown(corpus_client, corpus_pipeline, gold):
    answer = corpus_client.answer("recall", {"query": gold["spotter-4"]["text"], "budget": 20_000})
    results = answer["results"]
    assert any("memory" in r for r in results) and any("episode" in r for r in results)
    corpus = Path(corpus_pipeline.env["NOUS_PROJECT_GLOB"].split("**")[0])
    scores = [r["score"] for r in results]
    assert scores == sorted(scores, reverse=True)
    for r in results:
        assert len(r["date"]) == 10 and r["project"]
        assert ("status" in r) == ("memory" in r) and r.get("status", "verified") in STATUSES
        factors = {"contradiction_factor", "announcement_factor"}
        assert set(r["score_breakdown"]) - {"rank"} - factors <= set(DIMENSIONS)
        product = math.prod(r["score_breakdown"].get(f, 1.0) for f in factors)
        assert sum(v for k, v in r["score_breakdown"].items() if k in DIMENSIONS) == pytest.approx(
            r["score"] / product, abs=1e-3
        )
        source = r["source"]
        assert Path(source["transcript"]).is_relative_to(corpus)
        line = _line_at(source["transcript"], source["byte_offset"])  # the offset starts a JSONL record
        assert line.get("sessionId") and source["session"].startswith(line["sessionId"])
        data = Path(source["transcript"]).read_bytes()
        assert source["line"] == data[: source["byte_offset"]].count(b"\n") + 1
        text = data.decode("utf-8", errors="replace")
        assert all(u in text for u in source["record_uuids"])


def test_recall_keeps_within_the_budget_and_says_what_it_left_out(corpus_client, gold):
    query = gold["spotter-1"]["text"]
    small = corpus_client.call("recall", {"query": query, "budget": 1800})
    large = corpus_client.answer("recall", {"query": query, "budget": 20_000})
    assert not small.is_error and len(small.content[0].text) <= 1800
    answer = json.loads(small.content[0].text)
    assert answer["left_out"] > 0 and len(answer["results"]) + answer["left_out"] == len(large["results"])
    assert [r.get("memory", r.get("episode")) for r in answer["results"]] == [
        r.get("memory", r.get("episode")) for r in large["results"]
    ][: len(answer["results"])]


def test_recall_as_at_sees_the_value_valid_then(corpus_client, corpus_pipeline):
    """A slot value superseded later is what recall returns for a time inside its validity window, and the
    value that replaced it is not (it did not exist yet)."""
    conn = corpus_pipeline.conn()
    try:
        old = conn.execute(
            "SELECT o.id, o.content, o.valid_from, o.valid_until, n.id FROM memories o JOIN memories n "
            "ON n.learning_id = o.superseded_by WHERE o.valid_from < o.valid_until ORDER BY o.id LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    assert old is not None
    old_id, content, valid_from, valid_until, new_id = old
    answer = corpus_client.answer("recall", {"query": content, "as_at": valid_from, "budget": 20_000})
    found = [r["memory"] for r in answer["results"] if "memory" in r]
    assert old_id in found and new_id not in found
    now = corpus_client.answer("recall", {"query": content, "budget": 20_000})
    assert old_id not in [r.get("memory") for r in now["results"]]
    assert answer["as_at"] < valid_until


def test_explain_tells_a_superseded_memory_and_its_replacement(corpus_client, corpus_pipeline):
    conn = corpus_pipeline.conn()
    try:
        old_id, new_id, new_status = conn.execute(
            "SELECT o.id, n.id, n.status FROM memories o JOIN memories n ON n.learning_id = o.superseded_by "
            "ORDER BY o.id LIMIT 1"
        ).fetchone()
        sessions = {r[0] for r in conn.execute(
            "SELECT session_id FROM learning_events WHERE learning_id = "
            "(SELECT learning_id FROM memories WHERE id = ?)", (old_id,))}  # fmt: skip
    finally:
        conn.close()
    answer = corpus_client.answer("explain", {"memory_id": old_id})
    old = answer["memory"]
    assert old["memory"] == old_id and old["state"] == old["status"] == "superseded"
    assert [e["type"] for e in answer["events"]][0] == "LearningExtracted"
    assert "LearningSuperseded" in [e["type"] for e in answer["events"]]
    assert new_id in [m["memory"] for m in answer["replaced_by"]]
    assert {s["session"] for s in answer["sessions"]} == sessions
    newer = corpus_client.answer("explain", {"memory_id": new_id})
    assert newer["memory"]["state"] == "current" and newer["memory"]["status"] == new_status
    assert old_id in [m["memory"] for m in newer["replaced"]]


def test_explain_lists_every_session_that_relearned_a_memory(corpus_client, corpus_pipeline):
    conn = corpus_pipeline.conn()
    try:
        memory_id, learning_id = conn.execute(
            "SELECT m.id, m.learning_id FROM memories m JOIN learning_events e ON e.learning_id = m.learning_id "
            "WHERE e.event_type = 'LearningReinforced' GROUP BY m.id ORDER BY count(*) DESC, m.id LIMIT 1"
        ).fetchone()
        events = conn.execute("SELECT count(*) FROM learning_events WHERE learning_id = ?", (learning_id,)).fetchone()
        events = events[0]
    finally:
        conn.close()
    answer = corpus_client.answer("explain", {"memory_id": memory_id})
    assert answer["events_total"] == events and len(answer["events"]) == min(events, 31)
    relearned = [e for e in answer["events"] if e["type"] == "LearningReinforced"]
    assert relearned and all(e["session"] in {s["session"] for s in answer["sessions"]} for e in relearned)
    assert all("said" in e for e in relearned)


def test_timeline_shows_the_sessions_and_decisions_of_a_day(corpus_client, corpus_pipeline):
    conn = corpus_pipeline.conn()
    try:
        memory_id, project, valid_from, session = conn.execute(
            "SELECT id, project_id, valid_from, source_session FROM memories WHERE kind = 'decision' "
            "ORDER BY valid_from LIMIT 1"
        ).fetchone()
        cwd = conn.execute(
            "SELECT alias FROM project_aliases WHERE kind = 'cwd' AND project_id = ? ORDER BY alias LIMIT 1", (project,)
        ).fetchone()[0]
    finally:
        conn.close()
    answer = corpus_client.answer("timeline", {"project": cwd, "day": valid_from[:10], "days": 0, "budget": 20_000})
    assert answer["project"] == project
    assert answer["from"][:10] == valid_from[:10] and answer["from"] <= valid_from < answer["until"]
    assert memory_id in [d["memory"] for d in answer["decisions"]]
    assert all(d["kind"] == "decision" for d in answer["decisions"])
    listed = {s["session"] for s in answer["sessions"]}
    assert session in listed or session.split("#")[0] in listed
    starts = [s["started"] for s in answer["sessions"]]
    assert starts == sorted(starts) and all(answer["from"] <= s < answer["until"] for s in starts)


def test_explain_shows_how_an_observation_was_formed_and_timeline_the_project_map(corpus_client, corpus_pipeline):
    conn = corpus_pipeline.conn()
    try:
        observation, project, provenance = conn.execute(
            "SELECT id, project_id, provenance_json FROM memories WHERE kind = 'observation' AND valid_until IS NULL "
            "AND scope = 'project' ORDER BY id LIMIT 1"
        ).fetchone()
        members = json.loads(provenance)["members"]
        member_ids = {r[0]: r[1] for r in conn.execute(
            "SELECT id, learning_id FROM memories WHERE learning_id IN (SELECT value FROM json_each(?))",
            (json.dumps(members),))}  # fmt: skip
    finally:
        conn.close()
    answer = corpus_client.answer("explain", {"memory_id": observation})
    formed = answer["memory"]["formed_from"]
    assert {m["memory"] for m in formed} == set(member_ids) and len(formed) >= 2
    anchors = [m["memory"] for m in formed if m["anchor"]]
    assert len(anchors) == 1 and member_ids[anchors[0]] == json.loads(provenance)["anchor"]
    assert all(m["text"] and m["status"] in ("verified", "stated", "observed") for m in formed)

    conn = corpus_pipeline.conn()
    try:
        largest = conn.execute("SELECT project_id FROM memories WHERE scope = 'project' GROUP BY project_id "
                               "ORDER BY count(*) DESC LIMIT 1").fetchone()[0]  # fmt: skip
    finally:
        conn.close()
    timeline = corpus_client.answer("timeline", {"project": largest, "days": 0, "budget": 20_000})
    topics = timeline["topics"]
    assert timeline["left_out"]["topics"] == 0
    assert topics and all(t["memories"] >= 3 and t["topic"] for t in topics)
    sizes = [t["memories"] for t in topics]
    assert sizes == sorted(sizes, reverse=True)
    member = topics[0]["examples"][0]
    placed = corpus_client.answer("explain", {"memory_id": member})["memory"]["topic"]
    assert placed["label"] == topics[0]["topic"] and member not in placed["related"]


def test_predict_follows_causal_edges_forward_from_the_action(corpus_client, corpus_pipeline, gold):
    conn = corpus_pipeline.conn()
    try:
        causes = {(s, t) for s, t in conn.execute("SELECT source_id, target_id FROM edges WHERE rel_type = 'causes'")}
        seed = conn.execute(
            "SELECT source_id FROM edges WHERE rel_type = 'causes' GROUP BY source_id ORDER BY count(*) DESC, "
            "source_id LIMIT 1"
        ).fetchone()[0]
        followers = conn.execute(
            "SELECT e.target_id, e.weight, t.project_id = s.project_id FROM edges e "
            "JOIN memories s ON s.id = e.source_id JOIN memories t ON t.id = e.target_id "
            "WHERE e.rel_type = 'causes' AND e.source_id = ?", (seed,)
        ).fetchall()
    finally:
        conn.close()
    by_id = corpus_client.answer("predict", {"memory_id": seed, "budget": 20_000})
    direct = {o["memory"] for o in by_id["outcomes"] if o["hops"] == 1}
    kept = {t for t, weight, same in followers if same and weight >= OUTCOME_FLOOR}
    assert kept and kept <= direct  # every strong same-project follower (issue 21: nothing from elsewhere or weak)
    assert not {t for t, weight, same in followers if not same or weight < OUTCOME_FLOOR} & direct
    answer = corpus_client.answer("predict", {"action": gold["spotter-4"]["text"], "budget": 20_000})
    assert answer["seeds"] and answer["outcomes"]
    seeds = {s["memory"] for s in answer["seeds"]}
    for outcome in answer["outcomes"]:
        assert outcome["after"] in seeds and outcome["memory"] not in seeds
        if outcome["hops"] == 1:
            assert (outcome["after"], outcome["memory"]) in causes
        else:
            assert any((outcome["after"], mid) in causes and (mid, outcome["memory"]) in causes for _, mid in causes)


@pytest.mark.parametrize(
    ("tool", "arguments", "says"),
    [
        ("recall", {"query": ""}, "query must not be empty"),
        ("recall", {"query": "x" * 2001}, "2000"),
        ("recall", {"query": "port", "budget": 10}, "budget"),
        ("recall", {"query": "port", "budget": "lots"}, "budget"),
        ("recall", {"query": "port", "as_at": "last tuesday"}, "as_at must be an ISO-8601"),
        ("recall", {"query": "port", "project": "/etc"}, "no project '/etc'"),
        ("recall", {"query": "port", "project": "../../.."}, "no project"),
        ("recall", {"query": "port", "as_of": "2026-01-01"}, "does not take 'as_of'"),
        ("recall", {}, "query"),
        ("explain", {"memory_id": 10**9}, "no memory #1000000000"),
        ("explain", {"memory_id": -1}, "memory_id"),
        ("explain", {"memory_id": "12; DROP TABLE memories"}, "memory_id"),
        ("timeline", {"project": "spotter", "days": 400}, "days"),
        ("timeline", {"project": "spotter", "day": "2026-13-45"}, "day must be an ISO-8601"),
        ("timeline", {"project": "no-such-project"}, "no project 'no-such-project'"),
        ("predict", {}, "give action"),
        ("predict", {"action": "deploy", "memory_id": 1}, "not both"),
        ("no_such_tool", {}, "no_such_tool"),
    ],
)
def test_bad_inputs_are_mcp_errors_and_the_server_carries_on(corpus_client, tool, arguments, says):
    result = corpus_client.call(tool, arguments)
    assert result.is_error
    assert says in result.content[0].text
    assert "\n" not in result.content[0].text.strip() and "http" not in result.content[0].text  # one line
    assert len(corpus_client.tools()) == 5  # still serving
    log = corpus_client.log.read_text(encoding="utf-8", errors="replace")
    assert "Traceback" not in log and "unexpected exception" not in log  # anticipated, never a crash

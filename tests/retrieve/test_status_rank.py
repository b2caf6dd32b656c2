"""Status-aware search on a real SQLite file: a refuted claim, and the transcript chunk where it was made, never
rank above what still holds, and both say what became of them."""

from __future__ import annotations

import json

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.mcp_server.recall import recall
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.retrieve.status_rank import shown_status
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-app"
SESSION = [
    "why does the nightly sync hang on the staging box",
    "The nightly sync hangs because the lock file in /var/run/sync is stale; delete the stale lock file.",
    "no, that's not it. the lock file is fine",
    "Then the nightly sync hangs on the socket: its timeout is zero, so a dead peer blocks it forever.",
]


def _turn(n: int, text: str):
    return chunk_turn(n, text, role="user" if n % 2 == 0 else "assistant")


def _learn(store, lid: str, content: str, status: str, anchor: int) -> None:
    payload = {"content": content, "extractor_version": "t", "concepts": ["sync", "hang"], "edges": [],
               "scope": "project", "kind": "gotcha", "status": status,
               "provenance": {"session_id": "s1", "source_path": "/x.jsonl", "uuids": [f"s1-u{anchor}"],
                              "line_offsets": [anchor]}}  # fmt: skip
    store.append(LearningEvent("LearningExtracted", lid, payload, "s1", PROJECT, "historical_backfill", f"k-{lid}",
                               valid_from="2026-02-10T10:00:00Z"))  # fmt: skip


def _session(conn, store) -> None:
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(SESSION)])
    # the refuted claim repeats the query's words more often than the answer that replaced it: by score alone it
    # would come first
    _learn(store, "stale-lock", "The nightly sync hangs on staging because the sync lock file is stale: delete the "
           "stale sync lock file when the nightly sync hangs.", "refuted", anchor=1)  # fmt: skip
    _learn(store, "socket", "The sync hangs on a dead peer: the socket timeout is zero.", "verified", anchor=3)
    project(conn)


def test_a_refuted_claim_and_its_chunk_rank_below_what_holds(conn, store, tmp_path):
    _session(conn, store)
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text("why does the nightly sync hang on staging", project_id=PROJECT)
    results = retrieve(conn, query, settings, include_episodes=True, explain=True)
    shown = [(r.content[:30], shown_status(r)) for r in results]
    closed = [i for i, r in enumerate(results) if shown_status(r) in ("refuted", "superseded")]
    holding = [i for i, r in enumerate(results) if shown_status(r) not in ("refuted", "superseded")]
    assert closed and holding and max(holding) < min(closed), shown
    refuted_memory = next(r for r in results if not r.is_episode and r.status == "refuted")
    assert refuted_memory.score > min(r.score for r in results if r.content.startswith("The sync hangs on a dead"))
    claim_chunk = next(r for r in results if r.is_episode and r.content == SESSION[1])
    assert shown_status(claim_chunk) == "refuted"
    answer_chunk = next(r for r in results if r.is_episode and r.content == SESSION[3])
    assert shown_status(answer_chunk) is None  # a chunk without a rejected claim has no status of its own


def test_recall_and_search_json_show_the_later_status(conn, store, tmp_path, capsys):
    _session(conn, store)
    settings = load_settings({"HOME": str(tmp_path)})
    answer = recall(conn, settings, None, query="why does the nightly sync hang", project=PROJECT)
    episodes = {item["text"][:40]: item.get("status") for item in answer["results"] if "episode" in item}
    assert episodes[SESSION[1][:40]] == "refuted"
    assert episodes[SESSION[3][:40]] is None
    memories = [item for item in answer["results"] if "memory" in item]
    assert [m["status"] for m in memories] == ["verified", "refuted"]
    assert json.dumps(answer)  # the answer stays plain JSON



def test_asked_about_the_past_a_claim_closed_later_still_held():
    from nous_assets.retrieve.scoring import Candidate
    from nous_assets.retrieve.status_rank import closed_at

    replaced = Candidate(1, status="superseded", valid_from="2026-01-01T00:00:00Z", valid_until="2026-02-01T00:00:00Z")
    refuted = Candidate(2, status="refuted", valid_from="2026-01-01T00:00:00Z")
    assert closed_at(replaced, None) and closed_at(refuted, None)
    assert not closed_at(replaced, "2026-01-15T00:00:00Z")  # it was the value then
    assert closed_at(replaced, "2026-03-01T00:00:00Z")
    assert not closed_at(refuted, "2026-01-15T00:00:00Z")  # no date on a refutation: it held as far as we know
    assert not closed_at(Candidate(3, status="verified"), None)


def test_a_turn_the_assistant_takes_back_next_ranks_below_what_holds(conn, tmp_path):
    plan = "Step 1: add the unlisted prisma clients to package.json so knip stops reporting unlisted dependencies."
    turns = [
        chunk_turn(0, "knip reports unlisted dependencies for the prisma clients", role="user", session="k1"),
        chunk_turn(1, plan, role="assistant", session="k1"),
        chunk_turn(2, "Wait, I already tried this approach and it broke npm ci. Let me revert that and ignore "
                      "them in knip.json instead.", role="assistant", session="k1"),  # fmt: skip
        chunk_turn(3, "knip.json now ignores the generated clients; knip passes.", role="assistant", session="k1"),
    ]
    upsert_chunks(conn, turns)
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text("knip reports the prisma clients as unlisted dependencies; how do I fix it?",
                            project_id=PROJECT)  # fmt: skip
    results = retrieve(conn, query, settings, include_episodes=True)
    status = {r.content: shown_status(r) for r in results}
    assert status[plan] == "refuted" and [r.content for r in results][-1] == plan
    assert all(s is None for text, s in status.items() if text != plan)  # the retraction itself, and the rest, hold

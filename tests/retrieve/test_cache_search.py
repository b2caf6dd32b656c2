"""Injection cache builder and episodic search over a real database."""

from __future__ import annotations

import json

from nous_assets.capture.parser import Turn
from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.cache_build import GLOBAL, build_cache
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project


def _learn(store, lid, content, concepts, project_id, scope="project"):
    store.append(LearningEvent("LearningExtracted", lid, {
        "content": content, "extractor_version": "t", "concepts": concepts, "edges": [], "scope": scope,
        "kind": "preference"}, "s1", project_id, "historical_backfill", f"k-{lid}"))
    if scope == "global":  # a global memory reaches other projects once a second session said it too
        store.append(LearningEvent("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "relearned"},
                                   "s2", project_id, "historical_backfill", f"r-{lid}"))  # fmt: skip


def _turn(uuid, text, session="s9", project_id="-home-dev-app"):
    return Turn(uuid=uuid, uuids=(uuid,), parent_uuid=None, session_id=session, project_id=project_id, role="user",
                kind="message", timestamp="2026-03-01T10:00:00.000000Z", text=text, thinking="", tool_uses=(),
                tool_results=(), message_id=None, request_id=None, model=None, is_sidechain=False, agent_id=None,
                is_meta=False, is_compact_summary=False, cwd="/home/dev/app", git_branch="main", version=None,
                source_path="/x.jsonl", byte_start=0, byte_end=10, line_offsets=(0,))


def test_cache_packets_per_project_and_global_rebuilt_only_on_change(store, conn, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    _learn(store, "a", "Always run pytest with -x in the api project", ["pytest", "api", "testing"], "api")
    _learn(store, "b", "Use pnpm, never npm, for the web app", ["pnpm", "npm", "web"], "web")
    _learn(store, "g", "The user prefers short commit messages", ["git", "commit messages", "style"], "web",
           scope="global")
    project(conn)
    stats = build_cache(conn, settings, lake_dir=tmp_path / "lake")
    rows = {r["project_id"]: r for r in conn.execute("SELECT * FROM injection_cache")}
    assert set(rows) == {"api", "web", GLOBAL}
    assert "pytest" in rows["api"]["packet_text"] and "pnpm" not in rows["api"]["packet_text"]
    assert "commit messages" in rows[GLOBAL]["packet_text"] and "pytest" not in rows[GLOBAL]["packet_text"]
    assert all(r["char_count"] <= settings.thresholds.injection_budget_chars for r in rows.values())
    assert stats.projects_rebuilt == 3
    again = build_cache(conn, settings, lake_dir=tmp_path / "lake")
    assert again.projects_rebuilt == 0 and again.projects_unchanged == 3
    _learn(store, "a2", "The api project pins httpx to 0.27", ["httpx", "api", "pinning"], "api")
    project(conn)
    third = build_cache(conn, settings, lake_dir=tmp_path / "lake")
    assert third.projects_rebuilt == 1  # only api changed (global and web untouched)
    ids = json.loads(conn.execute("SELECT memory_ids_json FROM injection_cache WHERE project_id = 'api'").fetchone()[0])
    assert conn.execute("SELECT id FROM memories WHERE learning_id = 'a2'").fetchone()[0] in ids


def test_search_includes_episodic_chunks_marked_as_such(store, conn, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    _learn(store, "a", "Deploy with fly.io using the Dockerfile", ["fly.io", "deploy", "docker"], "-home-dev-app")
    project(conn)
    new, changed = upsert_chunks(conn, [_turn("u1", "the staging database password rotation happens on fridays"),
                                        _turn("u2", "unrelated chatter about lunch")])
    assert (new, changed) == (2, 0)
    assert upsert_chunks(conn, [_turn("u1", "the staging database password rotation happens on fridays")]) == (0, 0)
    results = retrieve(conn, Query.from_text("when does the staging password rotation happen",
                                             project_id="-home-dev-app"), settings, include_episodes=True)
    assert results and results[0].type == "episode" and results[0].is_episode and results[0].memory_id is None
    assert "fridays" in results[0].content
    chunk = conn.execute("SELECT id FROM transcript_chunks WHERE text LIKE '%fridays%'").fetchone()[0]
    assert results[0].id == chunk  # the chunk's own id; its kind, not its sign, says it is no memory
    plain = retrieve(conn, Query.from_text("when does the staging password rotation happen",
                                           project_id="-home-dev-app"), settings)
    assert all(r.type != "episode" for r in plain)


def test_a_chunk_and_a_memory_of_one_id_are_two_results(store, conn, tmp_path):
    """Memory ids and chunk ids are numbered apart: the same number names two rows, both retrievable."""
    settings = load_settings({"HOME": str(tmp_path)})
    _learn(store, "a", "The staging deploy runs on fridays via fly.io", ["fly.io", "deploy", "staging"],
           "-home-dev-app")
    project(conn)
    upsert_chunks(conn, [_turn("u1", "the staging deploy happens on fridays, said the user")])
    memory_id = conn.execute("SELECT id FROM memories").fetchone()[0]
    chunk_id = conn.execute("SELECT id FROM transcript_chunks").fetchone()[0]
    assert memory_id == chunk_id  # the collision the explicit kind exists for
    results = retrieve(conn, Query.from_text("staging deploy fridays", project_id="-home-dev-app"), settings,
                       include_episodes=True)
    assert sorted((r.is_episode, r.id) for r in results) == [(False, memory_id), (True, chunk_id)]
    assert len({r.key for r in results}) == 2 and [r.memory_id for r in results if not r.is_episode] == [memory_id]


def test_packets_never_carry_a_secret_even_from_an_old_memory(store, conn, tmp_path):
    """Defence in depth: a memory stored by an older redactor still holds a key; the packet the hook prints
    does not."""
    import random
    import string

    rng = random.Random(11)
    key = "rk_" + "live_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(24))
    settings = load_settings({"HOME": str(tmp_path)})
    _learn(store, "s", f"Payments in the api project use the restricted key {key}", ["payments", "stripe"], "api")
    _learn(store, "s2", "Payments in the api project are retried by the webhook worker", ["payments"], "api")
    project(conn)
    assert any(key in r[0] for r in conn.execute("SELECT content FROM memories"))  # the old memory really holds it
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    packets = [r[0] for r in conn.execute("SELECT packet_text FROM injection_cache")]
    assert packets and all(key not in p for p in packets)
    assert any("webhook worker" in p for p in packets)  # the key's memory is held for review, the rest injected
    held = conn.execute("SELECT reason FROM memory_holds").fetchall()
    assert held and "secret" in held[0][0]

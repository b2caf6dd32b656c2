"""Consolidation over a real cortex.db: observations as events, idempotent, stale ones closed, the same
observations from the same events in any order and from a replay of the log."""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path

import pytest

from nous_assets.consolidate.run import consolidate
from nous_assets.embed.light import LightMiniLM
from nous_assets.embed.memory_embedding import embed_pending
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, rebuild

sys.path.insert(0, str(Path(__file__).parents[1] / "store"))
from consolidation_texts import HOOK_1, HOOK_2, HOOK_3, PORT  # noqa: E402
from eventgen import extracted, lifecycle  # noqa: E402


@pytest.fixture(scope="module")
def embedder() -> LightMiniLM:
    return LightMiniLM()


def _learn(lid: str, content: str, session: str, status: str = "verified"):
    concepts = ["git hooks"] if "FORMAT" in content else ["phoenix"]
    extra = {"kind": "gotcha", "status": status, "provenance": {"uuids": [f"u-{lid}"]}}
    return extracted(lid, content, session=session, concepts=concepts, payload_extra=extra)


def _observations(conn) -> list[tuple]:
    return [tuple(r) for r in conn.execute(
        "SELECT learning_id, content, provenance_json, status FROM memories WHERE kind = 'observation' "
        "AND valid_until IS NULL ORDER BY learning_id")]  # fmt: skip


def _run(conn, embedder) -> int:
    project(conn)
    embed_pending(conn, embedder)
    return consolidate(conn, source="fs_watch").events_written


def test_alike_memories_become_one_observation_once(conn, embedder):
    SqliteEventStore(conn).append_many([_learn("a", HOOK_1, "s1"), _learn("b", HOOK_2, "s2"), _learn("c", PORT, "s3")])
    assert _run(conn, embedder) == 1
    (lid, content, provenance, status), = _observations(conn)
    provenance = json.loads(provenance)
    assert provenance["members"] == ["a", "b"] and provenance["member_uuids"] == ["u-a", "u-b"]
    assert provenance["uuids"] == [f"u-{provenance['anchor']}"]  # where its text was read: the anchor's records
    assert "mix format" in content and status == "verified"
    assert _run(conn, embedder) == 0  # the same clusters: the same keys, nothing written


def test_an_observation_whose_member_is_refuted_is_retired_and_one_a_new_member_joins_is_superseded(conn, embedder):
    store = SqliteEventStore(conn)
    store.append_many([_learn("a", HOOK_1, "s1"), _learn("b", HOOK_2, "s2")])
    _run(conn, embedder)
    (first, *_), = _observations(conn)

    store.append(_learn("c", HOOK_3, "s3"))  # a third session saw the same failure: the cluster grows
    _run(conn, embedder)
    (second, _, provenance, _), = _observations(conn)
    assert second != first and json.loads(provenance)["members"] == ["a", "b", "c"]
    closed = conn.execute("SELECT superseded_by, status FROM memories WHERE learning_id = ?", (first,)).fetchone()
    assert tuple(closed) == (second, "superseded")  # same anchor: the new observation replaces the old one

    for lid in ("b", "c"):  # two members refuted: nothing left to consolidate
        store.append(lifecycle("LearningWeakened", lid, {"reinforcement_delta": -0.3, "status": "refuted"},
                               key=f"refute-{lid}"))  # fmt: skip
    _run(conn, embedder)
    assert _observations(conn) == []
    assert conn.execute("SELECT status FROM memories WHERE learning_id = ?", (second,)).fetchone()[0] == "superseded"


def test_a_hypothesis_is_never_laundered_into_an_observation(conn, embedder):
    SqliteEventStore(conn).append_many(
        [_learn("a", HOOK_1, "s1", "hypothesis"), _learn("b", HOOK_2, "s2", "hypothesis")]
    )
    assert _run(conn, embedder) == 0 and _observations(conn) == []


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_same_events_in_any_order_and_batches_give_the_same_observations_and_replay_agrees(
    seed, new_db, tmp_path, embedder
):
    events = [_learn("a", HOOK_1, "s1"), _learn("b", HOOK_2, "s2"), _learn("c", HOOK_3, "s3"), _learn("d", PORT, "s4")]
    results = []
    for n, order in enumerate([events, random.Random(seed).sample(events, len(events))]):
        conn = new_db(tmp_path / f"db{n}.db")
        try:
            cut = random.Random(seed + n).randint(1, len(order) - 1)
            for batch in (order[:cut], order[cut:]):  # consolidation between two batches of events
                SqliteEventStore(conn).append_many(batch)
                _run(conn, embedder)
            incremental = _observations(conn)
            rebuild(conn)  # the projection from the log alone
            assert _observations(conn) == incremental
            results.append([(lid, content) for lid, content, _, _ in incremental])
        finally:
            conn.close()
    assert results[0] == results[1] and len(results[0]) == 1

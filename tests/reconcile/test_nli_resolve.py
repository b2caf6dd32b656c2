"""The nli_results pass over a real cortex.db: candidate pairs (shared concepts, concurrent clocks), cached
labels keyed by pair and model version, paired LearningContradicted events, last-writer-wins supersession
whatever the ingestion order, and a replay equal to the incremental projection."""

from __future__ import annotations

import itertools

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.reconcile.nli.base import Verdict
from nous_assets.reconcile.nli.pairs import Item, candidate_pairs, concurrent
from nous_assets.reconcile.nli.resolve import reconcile_contradictions
from nous_assets.reconcile.nli.rules import RulesClassifier
from nous_assets.settings import Thresholds
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, verify

T = Thresholds()


def extracted(lid: str, text: str, *, session: str, day: int, concepts=("web server", "port"), clock=None):
    payload = {"content": text, "extractor_version": "t-1", "concepts": list(concepts), "edges": []}
    return LearningEvent(
        "LearningExtracted", lid, payload, session, "proj", "historical_backfill", f"k-{lid}",
        valid_from=f"2026-01-{day:02d}T10:00:00Z", vector_clock=clock or {session: 1},
    )  # fmt: skip


def memory(conn, lid: str) -> dict:
    row = conn.execute(
        "SELECT reinforcement_score, valid_until, superseded_by, contradiction_count FROM memories "
        "WHERE learning_id = ?",
        (lid,),
    ).fetchone()
    return dict(zip(("score", "valid_until", "superseded_by", "contradictions"), row, strict=True))


def test_candidates_need_shared_concepts_and_concurrent_clocks():
    a = Item(1, "a", "x", "p", clock={"s1": 3})
    later = Item(2, "b", "y", "p", clock={"s1": 3, "s2": 1})  # its session had read a: sequential
    other = Item(3, "c", "z", "p", clock={"s3": 1})
    elsewhere = Item(4, "d", "w", "q", clock={"s4": 1})
    assert not concurrent(a, later) and concurrent(a, other)
    concepts = {1: {"port", "server"}, 2: {"port", "server"}, 3: {"port", "server", "tls"}, 4: {"port", "server"}}
    assert candidate_pairs([a, later, other, elsewhere], concepts, {}, overlap=0.5, cosine=0.8) == [(1, 3), (2, 3)]
    assert candidate_pairs([a, other], {1: {"port"}, 3: {"tls", "cert"}}, {}, overlap=0.5, cosine=0.8) == []


def test_a_contradiction_appends_paired_events_and_keeps_both(conn, store):
    store.append_many([
        extracted("a", "Feature previews are enabled for every branch.", session="s1", day=1),
        extracted("b", "Feature previews are disabled for every branch.", session="s2", day=2),
    ])  # fmt: skip
    project(conn)
    stats = reconcile_contradictions(conn, RulesClassifier(), T, source="fs_reconcile")
    assert (stats.candidates, stats.classified, stats.contradicted_events, stats.superseded_events) == (1, 1, 2, 0)
    row = conn.execute(
        "SELECT memory_id_a < memory_id_b, nli_label, confidence, model_version FROM nli_results"
    ).fetchone()
    assert tuple(row) == (1, "contradiction", 0.8, RulesClassifier.model_version)
    project(conn, policy=Policy.of(T))
    for lid in ("a", "b"):
        m = memory(conn, lid)
        assert m["contradictions"] == 1 and m["valid_until"] is None and abs(m["score"] - 0.5 * 0.7) < 1e-9
    # a rerun classifies nothing and appends nothing
    again = reconcile_contradictions(conn, RulesClassifier(), T, source="fs_reconcile")
    assert (again.classified, again.contradicted_events) == (0, 0)
    assert verify(conn, policy=Policy.of(T)).ok


class Flipping:
    """A classifier of another version that says the opposite: re-labels cached pairs, events stay once."""

    name = "flip"
    model_version = "flip-2"

    def classify(self, pairs):
        return [Verdict("contradiction", 0.9) for _ in pairs]


def test_a_new_model_version_relabels_the_pair_in_place(conn, store):
    store.append_many([
        extracted("a", "Run the nightly export.", session="s1", day=1, concepts=("export", "nightly")),
        extracted("b", "Archive old reports weekly.", session="s2", day=2, concepts=("export", "nightly")),
    ])  # fmt: skip
    project(conn)
    reconcile_contradictions(conn, RulesClassifier(), T, source="fs_reconcile")
    assert conn.execute("SELECT nli_label FROM nli_results").fetchone()[0] == "neutral"
    stats = reconcile_contradictions(conn, Flipping(), T, source="fs_reconcile")
    assert stats.classified == 1 and stats.contradicted_events == 2
    rows = conn.execute("SELECT nli_label, model_version FROM nli_results").fetchall()
    assert [tuple(r) for r in rows] == [("contradiction", "flip-2")]


PORTS = [(day, f"The web server listens on port {port}.") for day, port in ((3, 8000), (7, 8100), (5, 8200))]


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(order=st.permutations(range(3)), batches=st.integers(min_value=1, max_value=3))
def test_the_later_valid_value_wins_whatever_the_ingestion_order(tmp_path_factory, new_db, order, batches):
    conn = new_db(tmp_path_factory.mktemp("lww") / "cortex.db")
    store = SqliteEventStore(conn)
    chunks = [list(c) for c in (order[: len(order) // batches or 1], order[len(order) // batches or 1 :]) if c]
    for chunk in chunks:  # ingest in some order, reconciling between batches
        store.append_many([extracted(f"v{i}", PORTS[i][1], session=f"s{i}", day=PORTS[i][0]) for i in chunk])
        project(conn)
        reconcile_contradictions(conn, RulesClassifier(), T, source="fs_watch")
        project(conn)
    reconcile_contradictions(conn, RulesClassifier(), T, source="fs_watch")
    project(conn)
    current = [r[0] for r in conn.execute("SELECT learning_id FROM memories WHERE valid_until IS NULL")]
    assert current == ["v1"]  # day 7: the latest valid_from
    assert memory(conn, "v0")["valid_until"] <= "2026-01-07T10:00:00.000000Z"
    assert verify(conn, policy=Policy.of(T), scratch_dir=None).ok
    conn.close()


def test_sequential_learnings_are_not_compared(conn, store):
    store.append_many([
        extracted("a", "The web server listens on port 8000.", session="s1", day=1, clock={"s1": 1}),
        extracted("b", "The web server listens on port 9000.", session="s1", day=1, clock={"s1": 2}),
    ])  # fmt: skip
    project(conn)
    stats = reconcile_contradictions(conn, RulesClassifier(), T, source="fs_reconcile")
    assert (stats.candidates, stats.classified) == (0, 0)
    assert conn.execute("SELECT count(*) FROM nli_results").fetchone()[0] == 0


def test_pairs_across_many_memories_are_classified_once_in_batches(conn, store):
    events = [
        extracted(f"m{i}", f"The {name} service listens on port {port}.", session=f"s{i}", day=1 + i % 9,
                  concepts=(name, "port"))
        for i, (name, port) in enumerate(itertools.product(("auth", "billing", "search"), (7001, 7002, 7003)))
    ]  # fmt: skip
    store.append_many(events)
    project(conn)
    seen: list[tuple[int, int]] = []
    stats = reconcile_contradictions(conn, RulesClassifier(), T, source="fs_reconcile", batch_size=2,
                                     progress=lambda done, total: seen.append((done, total)))  # fmt: skip
    assert stats.candidates == 9 and seen[-1] == (9, 9)  # 3 pairs per service
    assert stats.superseded_events == 9 and stats.contradicted_events == 0
    project(conn)
    current = conn.execute("SELECT count(*) FROM memories WHERE valid_until IS NULL").fetchone()[0]
    assert current == 3  # one port per service

"""Seven-dimension scoring, fusion (RRF, MMR), current-truth rules, and retrieve() end to end."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from nous_assets.retrieve import candidates as candidates_module
from nous_assets.retrieve.candidates import gather, prune_common_tokens
from nous_assets.retrieve.fusion import VECTOR_BASELINE, competition_ranks, mmr, rrf, similarity_from
from nous_assets.retrieve.query import Query, concepts_from_text, fts_match_expression
from nous_assets.retrieve.scoring import (
    MIN_VECTOR_COSINE,
    Candidate,
    Recurrence,
    recency_stamp,
    recurrence_modifier,
    s_recency,
    s_reinforce,
    s_temporal,
    s_text,
    score,
)
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import RetrieveSettings, ScoringWeights, Settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project

NOW = "2026-03-01T00:00:00.000000Z"
DAY_AGO = "2026-02-28T00:00:00.000000Z"
MONTH_AGO = "2026-01-30T00:00:00.000000Z"
YEAR_AGO = "2025-03-01T00:00:00.000000Z"


def make_settings(mode: str = "weighted", **retrieve) -> Settings:
    base = Settings(Path("/nonexistent"), Path("/nonexistent"), Path("/nonexistent/db"), Path("/nonexistent/a"), "*")
    return dataclasses.replace(base, retrieve=dataclasses.replace(RetrieveSettings(), mode=mode, **retrieve))


def cand(memory_id: int, **kw) -> Candidate:
    fields = {
        "content": "use uv for python packaging",
        "created_at": MONTH_AGO,
        "concepts": frozenset({"python", "uv"}),
        "bm25": -2.0,
        "reinforcement_score": 0.5,
    }
    fields.update(kw)
    return Candidate(memory_id, **fields)


QUERY = Query(text="python packaging", concepts={"python", "uv"}, now=NOW)

# (dimension, winner overrides, loser overrides, score kwargs)
DIMENSION_CASES = [
    ("text", {"bm25": -4.0}, {"bm25": -1.0}, {}),
    ("concept", {"concepts": frozenset({"python", "uv"})}, {"concepts": frozenset({"python", "rust"})}, {}),
    ("vector", {}, {}, {"vector_scores": {1: 0.9, 2: 0.2}}),
    ("graph", {"graph": 0.5}, {"graph": 0.0}, {}),
    ("reinforce", {"reinforcement_score": 0.9}, {"reinforcement_score": 0.3}, {}),
    ("temporal", {"temporal_confidence": "high"}, {"temporal_confidence": "low"}, {}),
    ("recency", {"accessed_at": DAY_AGO}, {"accessed_at": YEAR_AGO}, {}),
]


@pytest.mark.parametrize("mode", ["weighted", "rrf"])
@pytest.mark.parametrize(("dimension", "win", "lose", "extra"), DIMENSION_CASES, ids=[c[0] for c in DIMENSION_CASES])
def test_each_dimension_alone_decides_the_order(mode, dimension, win, lose, extra):
    settings = make_settings(mode)
    # identical twins tie; the tie-break (newer id first) favours id 2 ...
    tied = score([cand(1), cand(2)], QUERY, settings)
    assert tied[0].score == pytest.approx(tied[1].score) and tied[0].memory_id == 2
    # ... so id 1 winning proves the dimension moved it
    ranked = score([cand(1, **win), cand(2, **lose)], QUERY, settings, **extra)
    assert [r.memory_id for r in ranked] == [1, 2]
    assert ranked[0].breakdown[f"s_{dimension}"] > ranked[1].breakdown[f"s_{dimension}"]
    for key in ("s_text", "w_text", "s_recency", "w_recency", "contradiction"):
        assert key in ranked[0].breakdown


def test_reinforce_recurrence_modifier_reorders_equal_scores():
    boosted = cand(1, recurrence=Recurrence(sessions=4, injections=3, helpful=3, unhelpful=0))
    penalised = cand(2, recurrence=Recurrence(sessions=4, injections=3, helpful=0, unhelpful=3))
    ranked = score([penalised, boosted, cand(3)], QUERY, make_settings())
    assert [r.memory_id for r in ranked] == [1, 3, 2]
    assert ranked[0].breakdown["s_reinforce"] == pytest.approx(0.65)
    assert ranked[2].breakdown["s_reinforce"] == pytest.approx(0.35)


def test_weighted_score_is_the_configured_weighted_sum():
    weights = ScoringWeights(text=1.0, concept=0, vector=0, graph=0, reinforce=0, temporal=0, recency=0)
    settings = make_settings(weights=weights)
    ranked = score([cand(1, bm25=-3.0), cand(2, bm25=-1.5)], QUERY, settings)
    assert [r.score for r in ranked] == pytest.approx([1.0, 0.5])
    default = score([cand(1)], QUERY, make_settings())[0]
    assert default.score == pytest.approx(sum(v for k, v in default.breakdown.items() if k.startswith("w_")))


def test_dimension_functions():
    assert s_text(-3.0, 3.0) == 1.0 and s_text(-1.5, 3.0) == 0.5 and s_text(None, 3.0) == 0.0
    assert s_temporal(None, MONTH_AGO, "high", now=NOW) == 0.2  # expired beats everything
    assert s_temporal(DAY_AGO, None, "low", now=NOW, last_activity=MONTH_AGO) == 1.0  # fresh
    assert s_temporal(YEAR_AGO, None, "low", now=NOW, last_activity=MONTH_AGO) == 0.5
    assert s_temporal(YEAR_AGO, None, "medium", now=NOW, last_activity=MONTH_AGO) == 0.8
    assert s_temporal(None, None, "medium", now=NOW) == 0.8
    assert s_recency(None, NOW, now=NOW) == 1.0
    assert s_recency(None, "2026-01-30T00:00:00Z", now=NOW, half_life_days=30) == pytest.approx(0.5)
    assert s_recency(MONTH_AGO, YEAR_AGO, now=NOW) == pytest.approx(0.5)  # accessed_at wins
    assert s_recency(None, "2027-01-01T00:00:00Z", now=NOW) == 1.0
    assert s_reinforce(1.4) == 1.0 and s_reinforce(-0.3) == 0.0
    assert s_reinforce(-0.3, Recurrence(3, 2, 2, 0)) == pytest.approx(0.15)
    assert recurrence_modifier(Recurrence(2, 5, 5, 0)) == 0.0  # low recurrence
    assert recurrence_modifier(Recurrence(5, 0, 0, 0)) == 0.0  # never injected: not the text's fault
    assert recurrence_modifier(Recurrence(3, 4, 1, 3)) == -0.15


def test_vector_dimension_from_vectors_and_query_vector():
    q = dataclasses.replace(QUERY, query_vector=np.array([1.0, 0.0], dtype=np.float32))
    vectors = {1: np.array([1.0, 0.1], dtype=np.float32), 2: np.array([0.0, 1.0], dtype=np.float32)}
    ranked = score([cand(1), cand(2)], q, make_settings(), vectors=vectors)
    assert ranked[0].memory_id == 1 and ranked[1].breakdown["s_vector"] == 0.0
    # no vectors at all: s_vector is 0 for everyone, nothing breaks
    assert all(r.breakdown["s_vector"] == 0.0 for r in score([cand(1), cand(2)], QUERY, make_settings()))


def test_current_truth_excludes_superseded_and_expired():
    live = cand(1)
    expired = cand(2, valid_until=MONTH_AGO)
    superseded = cand(3, superseded_by="L1", valid_until=DAY_AGO)
    future_end = cand(4, valid_until="2026-06-01T00:00:00.000000Z")
    all_c = [live, expired, superseded, future_end]
    assert {r.memory_id for r in score(all_c, QUERY, make_settings())} == {1, 4}
    history = dataclasses.replace(QUERY, include_expired=True)
    kept = {r.memory_id: r for r in score(all_c, history, make_settings())}
    assert kept.keys() == {1, 2, 3, 4}
    assert kept[2].breakdown["s_temporal"] == kept[3].breakdown["s_temporal"] == 0.2
    # as_at in the past: what was true then (the expired one was; one not yet valid was not)
    as_at = Query(text="x", concepts={"python"}, now=NOW, as_at="2026-01-15T00:00:00Z")
    later = cand(5, valid_from="2026-02-01T00:00:00.000000Z")
    assert {r.memory_id for r in score([*all_c, later], as_at, make_settings())} == {1, 2, 3, 4}


def test_contradiction_fast_path_needs_concurrent_clocks_and_confidence():
    a = cand(1, vector_clock_json='{"s1":1}')
    b = cand(2, vector_clock_json='{"s2":1}')
    c = cand(3, vector_clock_json='{"s1":2}')  # causally after a: a sequential update
    settings = make_settings()
    base = {r.memory_id: r.score for r in score([a, b, c], QUERY, settings)}
    nli = {(1, 2): ("contradiction", 0.8), (1, 3): ("contradiction", 0.9), (2, 3): ("contradiction", 0.5)}
    got = {r.memory_id: r for r in score([a, b, c], QUERY, settings, contradictions=nli)}
    assert got[1].score == pytest.approx(base[1] * 0.7) and got[2].score == pytest.approx(base[2] * 0.7)
    assert got[3].score == pytest.approx(base[3]) and got[3].breakdown["contradiction"] == 1.0
    neutral = {(1, 2): ("neutral", 0.99)}
    assert {r.memory_id: r.score for r in score([a, b], QUERY, settings, contradictions=neutral)} == pytest.approx(
        {1: base[1], 2: base[2]}
    )


def test_rrf():
    fused = rrf([[1, 2, 3], [3, 1]], k=60)
    assert fused[1] == pytest.approx(1 / 61 + 1 / 62)
    assert fused[3] == pytest.approx(1 / 63 + 1 / 61)
    assert fused[2] == pytest.approx(1 / 62)
    assert sorted(fused, key=lambda i: -fused[i]) == [1, 3, 2]
    assert rrf([[1], [2]], weights=[2.0, 1.0])[1] == pytest.approx(2 / 61)
    assert rrf([]) == {}
    assert competition_ranks({1: 0.8, 2: 0.8, 3: 0.5, 4: 0.9}) == {4: 1, 1: 2, 2: 2, 3: 4}


def test_mmr():
    sims = {frozenset({1, 2}): 1.0}

    def similarity(a, b):
        return sims.get(frozenset({a, b}), 0.0)

    candidates = [(1, 1.0), (2, 0.95), (3, 0.5)]
    assert mmr(candidates, similarity, lambda_=1.0, top_k=3) == [1, 2, 3]  # pure relevance
    assert mmr(candidates, similarity, lambda_=0.5, top_k=3) == [1, 3, 2]  # the duplicate waits
    assert mmr(candidates, similarity, lambda_=0.5, top_k=2) == [1, 3]
    assert mmr([], similarity) == [] and mmr(candidates, similarity, top_k=0) == []
    # scale-free: RRF-sized relevance behaves like weighted-sum-sized relevance
    tiny = [(i, r / 30) for i, r in candidates]
    assert mmr(tiny, similarity, lambda_=0.5, top_k=3) == [1, 3, 2]


def test_similarity_prefers_vectors_then_concepts():
    sim = similarity_from({1: np.array([1.0, 0.0]), 2: np.array([1.0, 0.0])}, {1: {"a"}, 2: {"b"}, 3: {"a", "b"}})
    assert sim(1, 2) == pytest.approx(1.0)
    assert sim(1, 3) == pytest.approx(0.5)  # no vector for 3: Jaccard
    assert similarity_from(None, {1: set(), 2: set()})(1, 2) == 0.0


def test_vector_similarity_counts_only_what_lies_above_unrelated_memories():
    base = np.array([1.0, 0.0])
    at = {1: base, 2: np.array([VECTOR_BASELINE, (1 - VECTOR_BASELINE**2) ** 0.5]), 3: np.array([0.6, 0.8])}
    sim = similarity_from(at, {})
    assert sim(1, 2) == pytest.approx(0.0)  # as alike as two unrelated memories of a project: no penalty
    assert sim(1, 3) == pytest.approx((0.6 - VECTOR_BASELINE) / (1 - VECTOR_BASELINE))
    assert similarity_from({1: base, 2: -base}, {})(1, 2) == 0.0


def test_fts_expression_and_query_concepts():
    assert fts_match_expression('how do "we" (fix) * the NEAR pytest AND fixture?') == (
        '"fix" OR "near" OR "pytest" OR "fixture"'
    )
    assert fts_match_expression("the and of") is None
    assert fts_match_expression("") is None and fts_match_expression("*** ((( ") is None
    assert fts_match_expression("café 日本語") == '"café" OR "日本語"'
    assert {"uv", "python"} <= concepts_from_text("How do we package Python with uv?")
    assert concepts_from_text("   ") == frozenset()


@hyp_settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(max_size=300))
def test_fts_expression_never_breaks_fts5(conn, text):
    expression = fts_match_expression(text)
    if expression is not None:
        conn.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (expression,)).fetchall()


# -- end to end over a real cortex.db -------------------------------------------------------------


def _extracted(lid, content, project, *, concepts, kind="fact", scope="project", session="s1", at=MONTH_AGO, **kw):
    payload = {
        "content": content,
        "extractor_version": "test-1",
        "concepts": concepts,
        "edges": kw.pop("edges", []),
        "kind": kind,
        "type": "learning",
        "scope": scope,
    }
    return LearningEvent(
        "LearningExtracted", lid, payload, session, project, "historical_backfill", f"x:{lid}:{session}",
        transaction_time=at, valid_from=at, **kw,
    )  # fmt: skip


ALPHA = [
    ("A1", "Use uv instead of pip to manage Python packaging and virtualenvs in this repo",
     ["uv", "python", "packaging"], "preference"),
    ("A0", "Use pip-tools to pin Python packaging dependencies", ["pip-tools", "python", "packaging"], "decision"),
    ("A2", "Run pytest with -x and --ff to stop at the first failure", ["pytest"], "command"),
    ("A3", "Rebase feature branches onto main before opening a pull request", ["git", "rebase"], "preference"),
    ("A4", "docker compose up -d starts postgres and redis for local development", ["docker", "postgres"], "command"),
    ("A5", "The API returns 429 when the rate limiter is exceeded", ["api", "rate limiting"], "fact"),
    ("A6", "Alembic migrations live in db/migrations and run on deploy", ["alembic", "migrations"], "fact"),
    ("A7", "Use structlog for logging, never print", ["structlog", "logging"], "preference"),
    ("A8", "The frontend is built with Vite and React 18", ["vite", "react"], "fact"),
    ("A9", "Fixed flaky test by freezing time with freezegun", ["freezegun", "pytest"], "error_fix"),
    ("A10", "Environment variables are loaded from .env via pydantic-settings", ["pydantic", "config"],
     "configuration"),
    ("A11", "CI runs on GitHub Actions with a matrix of Python 3.11 and 3.12", ["ci", "github actions"], "fact"),
    ("A12", "Prefer dataclasses over dicts for internal records", ["dataclasses"], "preference"),
    ("A13", "The billing service owns the invoices table", ["billing", "invoices"], "fact"),
]  # fmt: skip
BETA = [
    ("B1", "Use poetry for Python packaging in the beta service", ["poetry", "python", "packaging"], "decision"),
    ("B2", "Python packaging for beta is published to the internal index", ["python", "packaging"], "fact"),
    ("B3", "Run the Go linter golangci-lint before pushing", ["golangci-lint", "go"], "command"),
    ("B4", "Kafka topics are created by terraform", ["kafka", "terraform"], "fact"),
    ("B5", "The mobile app uses Expo", ["expo", "react native"], "fact"),
    ("B6", "Use zap for logging in Go services", ["zap", "logging"], "preference"),
    ("B7", "Staging database is refreshed nightly", ["staging", "database"], "fact"),
    ("B8", "gRPC stubs are generated with buf", ["grpc", "buf"], "command"),
    ("B9", "Feature flags come from LaunchDarkly", ["feature flags"], "fact"),
    ("B10", "Never run migrations manually on production", ["migrations", "production"], "correction"),
    ("B11", "Helm charts live in deploy/charts", ["helm", "kubernetes"], "fact"),
    ("B12", "Load tests use k6", ["k6", "load testing"], "command"),
    ("B13", "Python virtualenv packaging with pip wheels is cached in CI", ["python", "packaging", "pip"], "fact"),
]  # fmt: skip
GLOBAL = [
    ("G1", "Prefer ruff over flake8 for Python linting and formatting", ["ruff", "python", "linting"], "preference"),
    ("G2", "The user prefers concise commit messages in imperative mood", ["git", "commit messages"], "preference"),
]  # fmt: skip


@pytest.fixture
def cortex(conn, store):
    events = [_extracted(lid, text, "alpha", concepts=c, kind=k) for lid, text, c, k in ALPHA]
    events += [_extracted(lid, text, "beta", concepts=c, kind=k, session="s9") for lid, text, c, k in BETA]
    events += [_extracted(lid, text, "beta", concepts=c, kind=k, scope="global") for lid, text, c, k in GLOBAL]
    # A1 re-learned in more sessions; A0 superseded by it
    for session in ("s2", "s3"):
        events.append(_extracted("A1", ALPHA[0][1], "alpha", concepts=["uv"], kind="preference", session=session))
    events.append(
        LearningEvent("LearningSuperseded", "A0", {"superseded_by": "A1"}, "s3", "alpha", "user_review", "sup:A0",
                      transaction_time=DAY_AGO)
    )  # fmt: skip
    store.append_many(events)
    project(conn)
    return conn


def test_retrieve_ranks_the_right_memory_first_with_project_isolation(cortex):
    lid = {r[0]: r[1] for r in cortex.execute("SELECT learning_id, id FROM memories")}
    by_id = {v: k for k, v in lid.items()}
    query = Query.from_text("how should I manage python packaging and dependencies?", project_id="alpha", now=NOW)
    results = retrieve(cortex, query, make_settings(), k=8, explain=True)
    assert results and by_id[results[0].memory_id] == "A1"
    top = results[0]
    assert top.content.startswith("Use uv") and top.kind == "preference" and "uv" in top.concepts
    for key in ("s_text", "s_concept", "s_vector", "s_graph", "s_reinforce", "s_temporal", "s_recency", "rank"):
        assert key in top.breakdown
    assert top.breakdown["s_text"] == 1.0 and top.breakdown["s_vector"] == 0.0
    got = {by_id[r.memory_id] for r in results}
    assert not got & {lid for lid, *_ in BETA}, "beta's project memories leaked into alpha"
    assert "A0" not in got, "a superseded memory was returned as current truth"
    assert all(r.project_id == "alpha" or r.scope == "global" for r in results)
    assert len({r.memory_id for r in results}) == len(results) <= 8

    rrf_results = retrieve(cortex, query, make_settings("rrf"), k=8, explain=True)
    assert by_id[rrf_results[0].memory_id] == "A1"
    history = retrieve(cortex, dataclasses.replace(query, include_expired=True), make_settings(), k=20)
    assert "A0" in {by_id[r.memory_id] for r in history}
    assert retrieve(cortex, query, make_settings(), k=3)[0].breakdown == {}  # explain off


def test_an_unrelated_query_finds_nothing_an_empty_one_gets_the_project_priors(cortex):
    """Priors alone never make a memory relevant to a query; with no query at all they are all there is."""
    assert retrieve(cortex, Query.from_text("zzzz qqqq", project_id="beta", now=NOW), make_settings(), k=5) == []
    results = retrieve(cortex, Query.from_text("", project_id="beta", now=NOW), make_settings(), k=5)
    assert len(results) == 5
    assert all(r.project_id == "beta" for r in results)
    unknown = retrieve(cortex, Query.from_text("", project_id="nope", now=NOW), make_settings())
    assert {r.scope for r in unknown} == {"global"}


def test_retrieve_graph_neighbours_and_vector_fallback(cortex):
    lid = {r[0]: r[1] for r in cortex.execute("SELECT learning_id, id FROM memories")}
    cortex.execute(
        "INSERT INTO edges(source_id, target_id, rel_type, weight, origin, created_at) "
        "VALUES (?, ?, 'relates_to', 0.9, 'derived', ?)",
        (lid["A2"], lid["A9"], NOW),
    )
    query = Query.from_text("", project_id="alpha", now=NOW, active_ids=(lid["A2"],))
    candidates = {c.id: c for c in gather(cortex, query, make_settings())}
    assert candidates[lid["A9"]].graph == pytest.approx(0.9) and "graph" in candidates[lid["A9"]].sources

    class BrokenEmbedder:
        name, model, dimensions = "local", "broken", 3

        def embed(self, texts):
            raise RuntimeError("model not installed")

    q = Query.from_text("python packaging uv", project_id="alpha", now=NOW)
    plain = retrieve(cortex, q, make_settings(), k=4)
    degraded = retrieve(cortex, q, make_settings(), k=4, embedder=BrokenEmbedder())
    assert [r.memory_id for r in degraded] == [r.memory_id for r in plain]


def test_retrieve_survives_hostile_query_text(cortex):
    for text in ['"', "(((", "* OR AND NOT", 'NEAR("a" "b")', "col:val", "\x00\u200b", "ﬁ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 ✓"]:
        retrieve(cortex, Query.from_text(text, project_id="alpha", now=NOW), make_settings())


def test_common_tokens_are_pruned_but_the_rarest_is_kept():
    assert prune_common_tokens({"run": 9000, "pytest": 40, "docker": 300}, 5000) == ["pytest", "docker"]
    assert prune_common_tokens({"the": 9000, "python": 7000}, 5000) == ["python"]
    assert prune_common_tokens({}, 5000) == []


def test_fts_failure_falls_back_to_like_search(cortex, monkeypatch):
    def broken(*args, **kwargs):
        raise candidates_module.DatabaseError("fts5: corrupt index")

    monkeypatch.setattr(candidates_module, "_fts", broken)
    query = Query.from_text("uv virtualenvs", project_id="alpha", now=NOW)
    found = {c.content: c for c in gather(cortex, query, make_settings()) if "fts" in c.sources}
    assert list(found) == [ALPHA[0][1]]
    assert found[ALPHA[0][1]].bm25 == -2.0  # both tokens contained


# -- search that explains itself: score order, relevance floor, when a memory was learned -----------

TODAY = "2026-11-20T12:00:00.000000Z"
LEARNED_2025 = "2025-03-01T09:00:00.000000Z"


def test_results_are_listed_in_score_order_after_mmr_picked_them(conn, store):
    """MMR picks the diverse set (the near-duplicate only gets in third), the list is best score first."""
    gamma = [
        ("X1", "pytest fixtures scope: use session scope for expensive fixtures", ["pytest", "fixtures", "scope"]),
        ("X2", "pytest fixtures scope: prefer session scope for expensive fixtures", ["pytest", "fixtures", "scope"]),
        ("X3", "Run the pytest suite with -n 2 on CI", ["pytest", "xdist"]),
    ]
    store.append_many([_extracted(lid, text, "gamma", concepts=c) for lid, text, c in gamma])
    project(conn)
    lid = {r[0]: r[1] for r in conn.execute("SELECT id, learning_id FROM memories")}
    query = Query.from_text("pytest fixtures scope", project_id="gamma", now=NOW)
    settings = make_settings(mmr_lambda=0.5)
    found = gather(conn, query, settings)
    pool = score(found, query, settings)
    similarity = similarity_from(None, {c.id: c.concepts for c in found})
    picked = mmr([(s.memory_id, s.score) for s in pool], similarity, 0.5, 3)
    first, second = (lid[i] for i in (picked[0], picked[2]))
    assert {first, second} == {"X1", "X2"} and lid[picked[1]] == "X3"  # MMR's own order: the duplicate waits

    results = retrieve(conn, query, settings, k=3, explain=True)
    assert [lid[r.memory_id] for r in results] == [first, second, "X3"]
    assert [r.score for r in results] == sorted((r.score for r in results), reverse=True)
    assert [r.breakdown["rank"] for r in results] == [1.0, 2.0, 3.0]
    two = retrieve(conn, query, settings, k=2, explain=True)
    assert [lid[r.memory_id] for r in two] == [first, "X3"]  # diversity still decides the cut
    assert two[1].breakdown["rank"] == 3.0  # the gap shows MMR passed over the near-duplicate


def test_priors_cannot_lift_an_unrelated_memory_into_the_results(cortex):
    lid = {r[0]: r[1] for r in cortex.execute("SELECT learning_id, id FROM memories")}
    # A3 gets every prior at its best: top reinforcement, fresh, high confidence
    cortex.execute(
        "UPDATE memories SET reinforcement_score = 1.0, accessed_at = ?, temporal_confidence = 'high' WHERE id = ?",
        (NOW, lid["A3"]),
    )
    query = Query.from_text("what does the API return when the rate limiter is exceeded", project_id="alpha", now=NOW)
    results = retrieve(cortex, query, make_settings(), k=12, explain=True)
    by_id = {v: k for k, v in lid.items()}
    assert results and by_id[results[0].memory_id] == "A5"
    assert "A3" not in {by_id[r.memory_id] for r in results}  # ~0.4 of priors, no evidence: out
    for r in results:
        b = r.breakdown
        assert b["s_text"] > 0 or b["s_concept"] > 0 or b["s_graph"] > 0 or b["s_vector"] >= MIN_VECTOR_COSINE
    # asked about it, the same memory is back, its priors now ranking it among relevant ones
    about = retrieve(cortex, Query.from_text("rebase branches", project_id="alpha", now=NOW), make_settings(), k=3)
    assert by_id[about[0].memory_id] == "A3"


@pytest.mark.parametrize(
    ("cosine", "kept"), [(MIN_VECTOR_COSINE - 0.05, False), (MIN_VECTOR_COSINE, True), (0.6, True)]
)
def test_vector_evidence_needs_the_calibrated_cosine(cosine, kept):
    near = cand(1, bm25=None, concepts=frozenset({"unrelated"}), reinforcement_score=1.0)
    text = cand(2, concepts=frozenset({"unrelated"}))
    query = dataclasses.replace(QUERY, query_vector=np.array([1.0, 0.0], dtype=np.float32))
    ranked = score([near, text], query, make_settings(), vector_scores={1: cosine, 2: 0.0})
    assert {r.memory_id for r in ranked} == ({1, 2} if kept else {2})
    # a query with no signal at all (empty text, no concepts or vector): priors rank everything
    bare = score([near, cand(2, bm25=None, concepts=frozenset())], Query(text="", now=NOW), make_settings())
    assert [r.memory_id for r in bare] == [1, 2]


def test_recency_and_temporal_use_when_the_memory_was_learned():
    learned_last_year = cand(1, valid_from=LEARNED_2025, created_at=TODAY)  # backfilled today
    learned_today = cand(2, valid_from=TODAY, created_at=TODAY)
    query = Query(text="python packaging", concepts={"python", "uv"}, now="2026-11-21T00:00:00Z",
                  last_activity="2026-01-01T00:00:00Z")  # fmt: skip
    ranked = {r.memory_id: r.breakdown for r in score([learned_last_year, learned_today], query, make_settings())}
    assert ranked[1]["s_recency"] < 0.001 and ranked[2]["s_recency"] > 0.97
    assert ranked[1]["s_temporal"] == 0.8 and ranked[2]["s_temporal"] == 1.0  # fresh: valid after last activity
    # valid_from unknown: ingestion time stands in; a real access later than learning counts
    assert s_recency(None, TODAY, now=TODAY) == 1.0
    assert s_recency(TODAY, LEARNED_2025, now=TODAY, valid_from=LEARNED_2025) == 1.0
    assert recency_stamp(None, LEARNED_2025, TODAY) == LEARNED_2025
    assert recency_stamp("2025-06-01T00:00:00.000000Z", LEARNED_2025, TODAY) == "2025-06-01T00:00:00.000000Z"
    assert s_temporal(None, None, "medium", now=TODAY, last_activity="2026-01-01T00:00:00Z", created_at=TODAY) == 1.0


def test_a_project_packet_counts_the_project_as_evidence_for_its_own_memories():
    """SessionStart packets query with file and branch words: the project's memories need not match them."""
    own = cand(1, bm25=None, concepts=frozenset({"deploy"}), project_id="alpha", scope="project")
    foreign_global = cand(2, bm25=None, concepts=frozenset({"deploy"}), project_id="beta", scope="global")
    other_project = cand(3, bm25=None, concepts=frozenset({"deploy"}), project_id="beta", scope="project")
    hint = Query(text="scan parser", concepts={"scan"}, project_id="alpha", now=NOW)
    packet = dataclasses.replace(hint, project_evidence=True)
    assert score([own, foreign_global, other_project], hint, make_settings()) == []
    assert [r.memory_id for r in score([own, foreign_global, other_project], packet, make_settings())] == [1]

"""`nous bench search`: ``retrieve()`` latency at 10,000 and 100,000 memories plus as many transcript chunks.

Two modes per size: text-only (FTS + concepts + graph + priors over memories and chunks, no vectors) and
hybrid with vectors (memory and chunk KNN too). Queries include episodes, as ``nous search`` and the MCP
``recall`` tool do. Embedding 200,000 texts with MiniLM on this CPU would take most of an hour, so the hybrid
mode stores random unit vectors (and a random query vector) in the real sqlite-vec tables: what is measured
is the retrieval path — KNN over N vectors plus scoring — not embedding quality.

Besides p50/p95 per mode, each size reports where the time goes (a second pass over a share of the queries
with the stages' functions wrapped in timers: mean wall milliseconds per query per stage) and the process's
peak RSS after that size (``resource.getrusage``, which only ever grows: sizes run smallest first).
"""

from __future__ import annotations

import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nous_assets.settings import Settings

# stage -> (module, attribute) timed by wrapping that attribute for the breakdown run; chunk_* are parts of
# episodes, the rest are the steps retrieve() takes itself (other = what none of them covers)
STAGES = {
    "memory_knn": ("nous_assets.retrieve.search", "_vector_hits"),
    "memory_candidates": ("nous_assets.retrieve.search", "gather"),
    "episodes": ("nous_assets.retrieve.episodic", "chunk_candidates"),
    "chunk_knn": ("nous_assets.embed.chunk_embedding", "search_chunks"),
    "chunk_fts": ("nous_assets.store.ingest.transcript_chunks", "text_matches"),
    "chunk_concepts": ("nous_assets.retrieve.episodic", "concepts_from_text"),
    "vectors_load": ("nous_assets.retrieve.search", "_vectors_for"),
    "contradictions": ("nous_assets.retrieve.search", "load_contradictions"),
    "score": ("nous_assets.retrieve.search", "score"),
    "mmr": ("nous_assets.retrieve.search", "mmr"),
}
_TOP_LEVEL = ("memory_knn", "memory_candidates", "episodes", "vectors_load", "contradictions", "score", "mmr")
CHUNK_LINES = [
    "how do I get {a} to work with {b}? it keeps failing in CI",
    "I switched {a} to {b} and now {c} is slow again",
    "ran `{a}` after updating {b}; the {c} step passes now",
    "can you check why {a} ignores the {b} settings?",
    "the fix was to pin {a} and restart {b}",
]


def _fill_chunks(conn, count: int, projects: int, seed: int) -> None:
    """``count`` transcript chunks spread over the corpus' projects, in their FTS index and with their concepts."""
    from nous_assets.evaluate.corpus import TOPICS, project_cwd
    from nous_assets.retrieve.episodic import index_chunk_concepts
    from nous_assets.store.ingest import transcript_chunks
    from resolver.project import project_id_from_cwd

    rng = random.Random(seed)
    rows = []
    for i in range(count):
        p = i % projects
        words = rng.sample(TOPICS[list(TOPICS)[p % len(TOPICS)]], 3)
        text = rng.choice(CHUNK_LINES).format(a=words[0], b=words[1], c=words[2])
        stamp = f"2026-01-{1 + i % 28:02d}T10:00:00.000Z"
        rows.append(
            (
                f"bench-chunk-{i}",
                project_id_from_cwd(project_cwd(p)),
                f"bench-session-{p}-{i // 50}",
                stamp[:10],
                "user" if i % 2 else "assistant",
                stamp,
                text,
                "/bench/t.jsonl",
                "[0]",
                "[]",
            )
        )
    for start in range(0, len(rows), 5000):
        transcript_chunks.upsert_chunk_rows(conn, rows[start : start + 5000])
    index_chunk_concepts(conn)  # as the embeddings asset does for captured chunks


def _random_units(rng: np.random.Generator, count: int, dims: int) -> np.ndarray:
    mat = rng.standard_normal((count, dims)).astype(np.float32)
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def _fill_vectors(conn, dims: int, seed: int) -> None:
    from nous_assets.embed.chunk_embedding import ensure_chunk_table
    from nous_assets.embed.memory_embedding import ensure_vector_table
    from nous_assets.store.db import atomic
    from nous_assets.store.search import chunk_vectors, memory_search, vectors

    model, stamp = "bench-random", "2026-01-01T00:00:00.000000Z"
    ensure_vector_table(conn, dims, model=model)
    ensure_chunk_table(conn, dims)
    rng = np.random.default_rng(seed)
    ids = memory_search.all_ids(conn)
    with atomic(conn):
        for start in range(0, len(ids), 5000):
            chunk = ids[start : start + 5000]
            blobs = {i: v.tobytes() for i, v in zip(chunk, _random_units(rng, len(chunk), dims), strict=True)}
            vectors.replace(conn, blobs, dict.fromkeys(chunk, "x"), model, dims, stamp)
    chunk_ids = [int(r[0]) for r in conn.execute("SELECT id FROM transcript_chunks ORDER BY id")]
    with atomic(conn):
        for start in range(0, len(chunk_ids), 5000):
            part = chunk_ids[start : start + 5000]
            for cid, v in zip(part, _random_units(rng, len(part), dims), strict=True):
                chunk_vectors.put(conn, cid, v.tobytes(), model, dims, "x", stamp)


def _queries(conn, settings, queries: list[tuple[str, str]], dims: int | None):
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve

    rng = np.random.default_rng(7)
    for text, project in queries:
        vector = _random_units(rng, 1, dims)[0] if dims else None
        query = Query.from_text(text, project_id=project, query_vector=vector)
        yield lambda q=query: retrieve(conn, q, settings, k=10, include_episodes=True)


def _time_queries(conn, settings, queries: list[tuple[str, str]], dims: int | None) -> dict:
    times = []
    for run in _queries(conn, settings, queries, dims):
        t = time.perf_counter()
        run()
        times.append((time.perf_counter() - t) * 1000)
    ordered = sorted(times)
    return {
        "queries": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(max(times), 1),
    }


def _stage_breakdown(conn, settings, queries: list[tuple[str, str]], dims: int | None) -> dict[str, float]:
    """Wall milliseconds per query in each of :data:`STAGES`, timed by wrapping those functions.

    A separate pass from the percentiles (the wrappers cost about a microsecond a call); ``total`` is the
    whole ``retrieve()`` call and ``other`` what none of the top-level stages covers.
    """
    import importlib

    spent = dict.fromkeys(STAGES, 0.0)
    originals = []

    def timed(stage: str, function):
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            try:
                return function(*args, **kwargs)
            finally:
                spent[stage] += time.perf_counter() - started

        return wrapper

    for stage, (module_name, attribute) in STAGES.items():
        module = importlib.import_module(module_name)
        originals.append((module, attribute, getattr(module, attribute)))
        setattr(module, attribute, timed(stage, getattr(module, attribute)))
    total = 0.0
    try:
        for run in _queries(conn, settings, queries, dims):
            started = time.perf_counter()
            run()
            total += time.perf_counter() - started
    finally:
        for module, attribute, original in originals:
            setattr(module, attribute, original)
    per_query = {stage: round(seconds * 1000 / len(queries), 2) for stage, seconds in spent.items()}
    per_query["total"] = round(total * 1000 / len(queries), 2)
    per_query["other"] = round(per_query["total"] - sum(per_query[s] for s in _TOP_LEVEL), 2)
    return per_query


def _peak_rss_mb() -> float:
    """Peak resident set size of this process so far (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return round(peak / (1024 * 1024 if sys.platform == "darwin" else 1024), 1)


def run(
    out: Path, settings: Settings, *, sizes: list[int] | None = None, queries: int = 100, workdir: Path | None = None
) -> dict:
    from nous_assets.evaluate.corpus import TOPICS, build_corpus, project_cwd
    from resolver.project import project_id_from_cwd

    workdir = workdir or Path(tempfile.mkdtemp(prefix="nous-bench-search-"))
    rng = random.Random(3)
    words = [w for ws in TOPICS.values() for w in ws]
    report: dict = {
        "benchmark": "search",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "corpus": "N memories + N transcript chunks (random unit vectors), 100 projects; queries include episodes",
        "sizes": {},
    }
    for size in sorted(sizes or [10_000, 100_000]):
        t = time.perf_counter()
        conn = build_corpus(workdir / f"search-{size}.db", size)
        _fill_chunks(conn, size, 100, seed=size)
        print(f"corpus {size} + {size} chunks: built in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        qs = [
            (" ".join(rng.sample(words, 3)), project_id_from_cwd(project_cwd(rng.randrange(100))))
            for _ in range(queries)
        ]
        profiled = qs[: max(1, queries // 2)]
        text_only = _time_queries(conn, settings, qs, None)
        text_only["stages_ms"] = _stage_breakdown(conn, settings, profiled, None)
        t = time.perf_counter()
        _fill_vectors(conn, 384, seed=size)
        print(f"vectors for {size} + {size}: {time.perf_counter() - t:.1f}s", file=sys.stderr)
        hybrid = _time_queries(conn, settings, qs, 384)
        hybrid["stages_ms"] = _stage_breakdown(conn, settings, profiled, 384)
        conn.close()
        report["sizes"][str(size)] = {
            "chunks": size,
            "text_only": text_only,
            "hybrid_vectors": hybrid,
            "peak_rss_mb": _peak_rss_mb(),
            "load_average": [round(x, 2) for x in os.getloadavg()],
        }
        print(
            f"{size:>7} memories + {size} chunks: text-only p50={text_only['p50_ms']}ms p95={text_only['p95_ms']}ms; "
            f"hybrid p50={hybrid['p50_ms']}ms p95={hybrid['p95_ms']}ms; peak RSS {_peak_rss_mb()} MB; "
            f"load {os.getloadavg()[0]:.2f}"
        )
        print(f"  stages hybrid (ms/query): {json.dumps(hybrid['stages_ms'])}")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"saved {out}")
    return report

"""`nous bench search`: ``retrieve()`` latency at 10,000 and 100,000 memories.

Two modes per size: text-only (FTS + concepts + graph + priors, no vectors) and hybrid with vectors.
Embedding 100,000 memories with MiniLM on this CPU would take most of an hour, so the hybrid mode
stores random unit vectors (and a random query vector) in the real sqlite-vec table: what is
measured is the retrieval path — KNN over N vectors plus scoring — not embedding quality.
"""

from __future__ import annotations

import json
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from nous_assets.settings import Settings


def _fill_vectors(conn, dims: int, seed: int) -> None:
    from nous_assets.embed.memory_embedding import ensure_vector_table
    from nous_assets.store import memory_search, vectors
    from nous_assets.store.db import atomic

    ensure_vector_table(conn, dims, model="bench-random")
    rng = np.random.default_rng(seed)
    ids = memory_search.all_ids(conn)
    with atomic(conn):
        for start in range(0, len(ids), 5000):
            chunk = ids[start : start + 5000]
            mat = rng.standard_normal((len(chunk), dims)).astype(np.float32)
            mat /= np.linalg.norm(mat, axis=1, keepdims=True)
            blobs = {i: v.tobytes() for i, v in zip(chunk, mat, strict=True)}
            vectors.replace(conn, blobs, dict.fromkeys(chunk, "x"), "bench-random", dims, "2026-01-01T00:00:00.000000Z")


def _time_queries(conn, settings, queries: list[tuple[str, str]], dims: int | None) -> dict:
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve

    rng = np.random.default_rng(7)
    times = []
    for text, project in queries:
        vector = None
        if dims:
            vector = rng.standard_normal(dims).astype(np.float32)
            vector /= np.linalg.norm(vector)
        t = time.perf_counter()
        retrieve(conn, Query.from_text(text, project_id=project, query_vector=vector), settings, k=10)
        times.append((time.perf_counter() - t) * 1000)
    ordered = sorted(times)
    return {
        "queries": len(times),
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(ordered[int(0.95 * (len(ordered) - 1))], 1),
        "max_ms": round(max(times), 1),
    }


def run(
    out: Path, settings: Settings, *, sizes: list[int] | None = None, queries: int = 100, workdir: Path | None = None
) -> dict:
    from nous_assets.evaluate.corpus import TOPICS, build_corpus, project_cwd
    from resolver.project import project_id_from_cwd

    workdir = workdir or Path(tempfile.mkdtemp(prefix="nous-bench-search-"))
    rng = random.Random(3)
    words = [w for ws in TOPICS.values() for w in ws]
    report: dict = {"benchmark": "search", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "sizes": {}}
    for size in sizes or [10_000, 100_000]:
        t = time.perf_counter()
        conn = build_corpus(workdir / f"search-{size}.db", size)
        print(f"corpus {size}: built in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        qs = [
            (" ".join(rng.sample(words, 3)), project_id_from_cwd(project_cwd(rng.randrange(100))))
            for _ in range(queries)
        ]
        text_only = _time_queries(conn, settings, qs, None)
        _fill_vectors(conn, 384, seed=size)
        hybrid = _time_queries(conn, settings, qs, 384)
        conn.close()
        report["sizes"][str(size)] = {"text_only": text_only, "hybrid_vectors": hybrid}
        print(
            f"{size:>7} memories: text-only p50={text_only['p50_ms']}ms p95={text_only['p95_ms']}ms; "
            f"hybrid p50={hybrid['p50_ms']}ms p95={hybrid['p95_ms']}ms"
        )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"saved {out}")
    return report

"""Backend benchmark: the same workload through the provider protocols on SQLite and on PostgreSQL.

For each backend: batched appends, incremental projection, a full rebuild, full-text search and cosine KNN
(384-dimensional vectors) with their p50/p95, and on PostgreSQL the KNN recall@10 of the HNSW index
against exact search, with other tenants' rows in the same tables. PostgreSQL is the embedded server
(started here, on 127.0.0.1, deleted at the end) unless ``--dsn`` names one. Prints each figure as it is
measured and saves them all to ``benchmarks/results/backends-<time>.json``.

    python benchmarks/bench_backends.py [--events 20000] [--tenants 3] [--dsn postgresql://…]
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import tempfile
import time
import uuid
from pathlib import Path

import numpy as np
from bench_store import WORDS, EventGenerator

from nous_assets.store.backend import Backend, postgres_backend, sqlite_backend
from nous_assets.store.db import open_db

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support: dev-only helpers shared with the tests, not in the wheel
BATCH = 500
DIMS = 384
QUERIES = 50


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)) * 1000, 2)


def _timed(fn, *args, **kwargs) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def fill(b: Backend, n: int, seed: int) -> dict:
    """Append ``n`` events in batches, project, rebuild; returns the figures."""
    events = EventGenerator(f"t{seed}", seed=seed).take(n)
    _, append_s = _timed(lambda: [b.events.append_many(events[i : i + BATCH]) for i in range(0, n, BATCH)])
    stats, project_s = _timed(b.projection.project)
    _, rebuild_s = _timed(b.projection.rebuild)
    return {
        "events": n,
        "append_events_per_s": round(n / append_s),
        "project_events_per_s": round(stats.events / project_s),
        "rebuild_s": round(rebuild_s, 2),
        "memories": len(b.projection.snapshot()["memories"]),
    }


def search(b: Backend, rng: np.random.Generator) -> dict:
    """Full-text and vector search latency; vectors for every memory of the tenant."""
    ids = [row[0] for row in b.projection.snapshot()["memories"]]
    vecs = rng.normal(size=(len(ids), DIMS)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    stamp = "2026-01-01T00:00:00.000000Z"
    _, upsert_s = _timed(lambda: [
        b.vectors.upsert({i: v for i, v in zip(ids[s : s + BATCH], vecs[s : s + BATCH], strict=True)}, model="bench",
                         content_hashes=dict.fromkeys(ids[s : s + BATCH], "h"), at=stamp)
        for s in range(0, len(ids), BATCH)
    ])  # fmt: skip
    fts, knn, recall = [], [], []
    for _ in range(QUERIES):
        words = " ".join(rng.choice(WORDS, size=2))
        fts.append(_timed(b.projection.search_text, words, 10)[1])
        q = rng.normal(size=DIMS).astype(np.float32)
        hits, seconds = _timed(b.vectors.search, q, 10, model="bench")
        knn.append(seconds)
        exact = {ids[i] for i in np.argsort(-(vecs @ (q / np.linalg.norm(q))))[:10]}
        recall.append(len(exact & {h for h, _ in hits}) / 10)
    return {
        "vectors": len(ids),
        "vector_upsert_per_s": round(len(ids) / upsert_s),
        "fts_p50_ms": _pct(fts, 50),
        "fts_p95_ms": _pct(fts, 95),
        "knn_p50_ms": _pct(knn, 50),
        "knn_p95_ms": _pct(knn, 95),
        "knn_recall_at_10": round(statistics.mean(recall), 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000, help="events per tenant")
    parser.add_argument("--tenants", type=int, default=3, help="PostgreSQL tenants sharing the tables")
    parser.add_argument("--dsn", help="an existing PostgreSQL (default: start the embedded one)")
    args = parser.parse_args()
    results: dict = {"machine": platform.machine(), "python": platform.python_version(), "events": args.events}
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="nous-bench-") as tmp:
        lite = sqlite_backend(open_db(Path(tmp) / "cortex.db", create=True))
        results["sqlite"] = {**fill(lite, args.events, 0), **search(lite, rng)}
        lite.close()
        print("sqlite", json.dumps(results["sqlite"]), flush=True)

    server = None
    dsn = args.dsn
    if dsn is None:
        from tests.support import embedded_pg as embedded

        started = time.perf_counter()
        server = embedded.start()
        results["embedded_start_s"] = round(time.perf_counter() - started, 2)
        dsn = server.dsn()
    try:
        from nous_assets.store.pg.db import open_pg

        run = uuid.uuid4().hex[:8]
        for t in range(args.tenants):
            b = postgres_backend(open_pg(dsn), f"bench-{run}-{t}")
            figures = {**fill(b, args.events, t), **search(b, rng)}
            b.close()
            results[f"postgres_tenant_{t}"] = figures
            print(f"postgres tenant {t}", json.dumps(figures), flush=True)
    finally:
        if server is not None:
            server.stop()
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"backends-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()

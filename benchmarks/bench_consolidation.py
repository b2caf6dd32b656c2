"""Consolidation at scale (issue 24): ``consolidate`` over N memories of one project in a real cortex.db.

The store is built the honest way: valid ``LearningExtracted`` events appended through the event store,
projected, then 384-dimensional vectors written through the store's vector writer. The vectors are SYNTHETIC
(MiniLM embeds ~30 texts/s here: 10,000 would take six minutes and measure the model, not consolidation):
a few hundred topic centres, each memory its topic's centre plus noise, unit length; one memory in five is a
re-telling of another (cosine about 0.9), the groups consolidation should find. Texts are generated with code
spans and paths so the citation signals have work to do.

Prints the build, the first consolidation (forming every observation), the second (nothing new: the keys
make it a no-op) and the peak resident memory of the process, and saves them to
``benchmarks/results/consolidation-<time>.json``.

    python benchmarks/bench_consolidation.py [--memories 10000]
"""

from __future__ import annotations

import argparse
import platform
import random
import resource
import tempfile
import time
from pathlib import Path

import numpy as np
from results_file import save

from nous_assets.consolidate.run import consolidate
from nous_assets.store.db import atomic, open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.search import vectors
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

DIMENSIONS = 384
TOOLS = ["mix test", "mix format", "uv run pytest", "npm run build", "cargo test", "make lint", "just deploy"]
FILES = ["src/app.py", "lib/web/router.ex", "config/dev.exs", "package.json", "docs/setup.md", "Makefile"]


def _text(rng: random.Random, topic: int) -> str:
    tool, path = TOOLS[topic % len(TOOLS)], FILES[(topic // 7) % len(FILES)]
    words = " ".join(rng.choice(["cache", "retry", "token", "schema", "queue", "worker", "port"]) for _ in range(6))
    return f"Topic {topic}: run `{tool}` after editing {path}; {words}."


def build(conn, n: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    gen = np.random.default_rng(seed)
    topics = max(1, n // 25)
    centres = gen.normal(size=(topics, DIMENSIONS)).astype(np.float32)
    events, vecs = [], []
    for i in range(n):
        topic = rng.randrange(topics)
        retelling = i > 0 and rng.random() < 0.2
        base = vecs[rng.randrange(len(vecs))] if retelling else centres[topic] + gen.normal(scale=1.0, size=DIMENSIONS)
        vec = base + gen.normal(scale=0.25 if retelling else 0.0, size=DIMENSIONS)
        vecs.append((vec / np.linalg.norm(vec)).astype(np.float32))
        payload = {"content": _text(rng, topic) + f" #{i}", "extractor_version": "bench", "concepts": [f"t{topic}"],
                   "edges": [], "kind": "gotcha", "status": "verified", "provenance": {"uuids": [f"u{i}"]}}  # fmt: skip
        events.append(LearningEvent("LearningExtracted", f"L{i:06d}", payload, f"s{i % 97}", "bench", "fs_watch",
                                    f"bench:{i}"))  # fmt: skip
    store = SqliteEventStore(conn)
    for start in range(0, n, 2000):
        store.append_many(events[start : start + 2000])
    project(conn)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY learning_id")]
    with atomic(conn):
        vectors.recreate_table(conn, DIMENSIONS, exists=vectors.table_sql(conn) is not None)
        vectors.replace(conn, {mid: v.tobytes() for mid, v in zip(ids, vecs, strict=True)},
                        dict.fromkeys(ids, "bench"), "bench-synthetic", DIMENSIONS, "2026-01-01T00:00:00Z")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    args = parser.parse_args()
    out: dict = {"machine": platform.machine(), "python": platform.python_version(), "memories": args.memories}
    with tempfile.TemporaryDirectory(prefix="nous-bench-consolidation-") as tmp:
        conn = open_db(Path(tmp) / "cortex.db", create=True)
        t = time.perf_counter()
        build(conn, args.memories)
        out["build_s"] = round(time.perf_counter() - t, 2)
        print(f"built {args.memories} memories with vectors in {out['build_s']} s", flush=True)
        for run in ("first", "second"):
            t = time.perf_counter()
            stats = consolidate(conn, source="fs_watch")
            out[f"{run}_s"] = round(time.perf_counter() - t, 2)
            out[f"{run}_events"] = stats.events_written
            topics = sum(len(t) for t in stats.topics.values())
            print(f"{run} consolidation: {out[f'{run}_s']} s, {stats.observations} observations of "
                  f"{stats.clustered} memories, {stats.events_written} events, compression {stats.compression}, "
                  f"{topics} topics")
        out.update(observations=stats.observations, clustered=stats.clustered, compression=stats.compression,
                   topics=topics)
        conn.close()
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    print(f"peak resident memory {out['peak_rss_mb']} MB")
    save(out, "consolidation")


if __name__ == "__main__":
    main()

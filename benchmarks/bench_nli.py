"""NLI benchmark: the ``rules`` classifier's precision/recall on the labelled set, and ``nli_results`` over
10,000 memories (seconds, peak RSS).

Prints each figure as it is measured and saves them all to ``benchmarks/results/nli-<time>.json``. The
10,000-memory phase runs in its own process so its peak RSS is its own: it builds a cortex.db with that many
memories (events appended and projected, concepts from a shared vocabulary, clustered unit vectors so some
pairs lie close, one session per memory so the clocks are concurrent), then times one
``reconcile_contradictions`` pass (candidate pairs, classification, cache, events) and a second, idle pass.

    python benchmarks/bench_nli.py [--memories 10000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests/support: dev-only helpers shared with the tests, not in the wheel
PAIRS = ROOT / "tests" / "data" / "nli_pairs.jsonl"
TOPICS = [f"topic{i}" for i in range(400)]
TOOLS = "pnpm npm yarn poetry hatch uv pip cargo go make docker podman".split()


def _statement(rng: random.Random, i: int) -> str:
    """A learning-like sentence; about one in five restates a value of a shared slot with another value."""
    topic = rng.choice(TOPICS)
    roll = rng.random()
    if roll < 0.1:
        return f"The {topic} service listens on port {rng.choice([3000, 4000, 5000, 8080])}."
    if roll < 0.2:
        return f"Use {rng.choice(TOOLS)} to build the {topic} package."
    tool, size = rng.choice(TOOLS), rng.randint(1, 99)
    return f"The {topic} module handles case {i} with {tool} and keeps a cache of {size} items."


def build(db_path: Path, n: int, seed: int = 11) -> None:
    import numpy as np

    from nous_assets.store.db import atomic, open_db
    from nous_assets.store.log.events import LearningEvent
    from nous_assets.store.search import vectors
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.sqlite.projection import project

    rng = random.Random(seed)
    conn = open_db(db_path, create=True)
    events = []
    for i in range(n):
        text = _statement(rng, i)
        topic = next(w.strip(".") for w in text.split() if w.startswith("topic"))
        payload = {"content": text, "extractor_version": "bench-1", "concepts": [topic, rng.choice(TOOLS)], "edges": []}
        events.append(
            LearningEvent("LearningExtracted", f"L{i}", payload, f"s{i}", f"proj-{i % 5}", "historical_backfill",
                          f"k{i}", valid_from=f"2025-01-{1 + i % 28:02d}T00:00:00Z", vector_clock={f"s{i}": 1})
        )  # fmt: skip
    store = SqliteEventStore(conn)
    for start in range(0, n, 5000):
        store.append_many(events[start : start + 5000])
    project(conn)
    dims = 384
    centers = np.random.default_rng(seed).standard_normal((len(TOPICS), dims)).astype(np.float32)
    noise = np.random.default_rng(seed + 1)
    blobs, hashes = {}, {}
    for mid, content in conn.execute("SELECT id, content FROM memories"):
        topic = int(next(w.strip(".") for w in content.split() if w.startswith("topic"))[5:])
        vec = centers[topic] + 0.6 * noise.standard_normal(dims).astype(np.float32)
        blobs[int(mid)] = (vec / np.linalg.norm(vec)).astype(np.float32).tobytes()
        hashes[int(mid)] = str(mid)
    with atomic(conn):
        vectors.recreate_table(conn, dims, exists=vectors.table_sql(conn) is not None)
        vectors.replace(conn, blobs, hashes, "bench", dims, "2025-01-01T00:00:00Z")
    conn.close()


def measure(db_path: Path) -> dict:
    """One timed pass and one idle pass of the nli_results work, in this process (peak RSS is ours)."""
    from nous_assets.reconcile.nli.resolve import reconcile_contradictions
    from nous_assets.reconcile.nli.rules import RulesClassifier
    from nous_assets.settings import Thresholds
    from nous_assets.store.db import open_db

    conn = open_db(db_path)
    t0 = time.perf_counter()
    stats = reconcile_contradictions(conn, RulesClassifier(), Thresholds(), source="fs_reconcile")
    first = time.perf_counter() - t0
    t0 = time.perf_counter()
    again = reconcile_contradictions(conn, RulesClassifier(), Thresholds(), source="fs_reconcile")
    second = time.perf_counter() - t0
    return {
        "nli_memories": stats.memories,
        "nli_candidate_pairs": stats.candidates,
        "nli_pairs_classified": stats.classified,
        "nli_contradictions": stats.contradictions,
        "nli_events_appended": stats.contradicted_events + stats.superseded_events,
        "nli_seconds": round(first, 2),
        "nli_rerun_pairs_classified": again.classified,
        "nli_rerun_seconds": round(second, 2),
        "nli_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def labelled() -> dict:
    from nous_assets.reconcile.nli.rules import RulesClassifier
    from tests.support.nli_eval import load_pairs, score

    rows = load_pairs(PAIRS)
    out = {}
    for name, subset in (("all", rows), *((s, [r for r in rows if r.get("split") == s]) for s in ("dev", "holdout"))):
        result = score(RulesClassifier(), subset)
        out[f"rules_{name}"] = {k: v for k, v in result.items() if k != "errors"}
    real = [r for r in rows if r.get("origin") == "transcript"]
    out["rules_transcript_pairs"] = {k: v for k, v in score(RulesClassifier(), real).items() if k != "errors"}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path, default=None)
    parser.add_argument("--phase", choices=["build", "measure"], help=argparse.SUPPRESS)
    parser.add_argument("--db", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase == "build":
        build(args.db, args.memories)
        return
    if args.phase == "measure":
        print(json.dumps(measure(args.db)))
        return

    results: dict = {"machine": platform.platform(), "python": platform.python_version()}
    results.update(labelled())
    for name in ("rules_all", "rules_dev", "rules_holdout", "rules_transcript_pairs"):
        r = results[name]
        print(f"{name:28} pairs {r['pairs']:4}  precision {r['precision']:.3f}  recall {r['recall']:.3f}  "
              f"(tp {r['tp']}, fp {r['fp']}, fn {r['fn']})")  # fmt: skip
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        db = Path(tmp) / "cortex.db"
        me = [sys.executable, __file__, "--db", str(db), "--memories", str(args.memories)]
        t0 = time.perf_counter()
        subprocess.run([*me, "--phase", "build"], check=True)
        results["build_seconds"] = round(time.perf_counter() - t0, 1)
        out = subprocess.run([*me, "--phase", "measure"], check=True, capture_output=True, text=True).stdout
        results.update(json.loads(out.strip().splitlines()[-1]))
    for key in sorted(k for k in results if k.startswith("nli_")):
        print(f"{key:28} {results[key]}")
    dest = ROOT / "benchmarks" / "results" / f"nli-{time.strftime('%Y%m%dT%H%M%S')}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(results, indent=2, sort_keys=True))
    print(f"saved {dest}")


if __name__ == "__main__":
    main()

"""Observers and reducer benchmark: one ``observe_and_reduce`` pass over N memories (default 10,000).

Builds a real cortex.db with N memories (a third of them corrections or preferences, a fifth gotchas;
each learned in 1-4 sessions through re-learning reinforcements), a contradiction in every tenth pair of a
domain, and times the first pass (every candidate new), a second pass (nothing changes: nothing written)
and ``nous review``'s item listing. Prints each figure and saves them to
``benchmarks/results/interventions-<time>.json``.

    python benchmarks/bench_interventions.py [--memories 10000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import tempfile
import time
from pathlib import Path

KINDS = ["correction", "preference", "gotcha", "configuration", "architecture", "workflow"]
DOMAINS = ["database", "frontend", "testing", "build", "git"]


def build(db: Path, n: int) -> None:
    from nous_assets.store.db import atomic, open_db
    from nous_assets.store.log.events import LearningEvent
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.sqlite.projection import project

    rng = random.Random(7)
    conn = open_db(db, create=True)
    store = SqliteEventStore(conn)
    events = []
    for i in range(n):
        lid = f"l{i}"
        kind = KINDS[i % len(KINDS)]
        payload = {"content": f"memory {i} about {DOMAINS[i % 5]} item {rng.random():.6f}", "extractor_version": "b",
                   "concepts": [], "edges": [], "kind": kind, "domain": DOMAINS[i % 5]}  # fmt: skip
        project_id = f"p{i % 20}"
        events.append(LearningEvent("LearningExtracted", lid, payload, f"s{i}", project_id, "historical_backfill",
                                    f"x{i}", valid_from="2026-03-01T10:00:00Z"))  # fmt: skip
        for k in range(rng.choice([0, 0, 1, 2, 3])):
            events.append(LearningEvent("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "relearned"},
                                        f"s{i}-{k}", project_id, "historical_backfill", f"r{i}-{k}",
                                        valid_from=f"2026-03-0{2 + k}T10:00:00Z"))  # fmt: skip
    store.append_many(events)
    project(conn)
    with atomic(conn):
        ids = [r[0] for r in conn.execute("SELECT id FROM memories ORDER BY id")]
        for a, b in zip(ids[::20], ids[5::20], strict=False):  # same domain (i % 5), same project every 20
            conn.execute("INSERT OR IGNORE INTO nli_results(memory_id_a, memory_id_b, nli_label, confidence, "
                         "model_version, updated_at) VALUES (?, ?, 'contradiction', 0.9, 'bench', '2026-03-05')",
                         (min(a, b), max(a, b)))  # fmt: skip
    conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--workdir", type=Path)
    args = parser.parse_args()
    from nous_assets.observe.run import observe_and_reduce
    from nous_assets.safety.review_items import review_items
    from nous_assets.settings import Thresholds
    from nous_assets.store.db import open_db
    from nous_assets.timeutil import now_iso

    work = args.workdir or Path(tempfile.mkdtemp(prefix="nous-bench-interventions-"))
    db = work / "cortex.db"
    t = time.perf_counter()
    build(db, args.memories)
    figures = {"memories": args.memories, "build_seconds": round(time.perf_counter() - t, 2)}
    conn = open_db(db)
    thresholds = Thresholds()
    t = time.perf_counter()
    first = observe_and_reduce(conn, thresholds)
    figures["first_pass_seconds"] = round(time.perf_counter() - t, 3)
    figures["candidates"] = first.candidates_new
    figures["approved"] = first.reduced.approved
    figures["findings_by_reason"] = first.findings
    t = time.perf_counter()
    second = observe_and_reduce(conn, thresholds)
    figures["second_pass_seconds"] = round(time.perf_counter() - t, 3)
    figures["second_pass_new_candidates"] = second.candidates_new
    t = time.perf_counter()
    items = review_items(conn, thresholds, now_iso())
    figures["review_listing_seconds"] = round(time.perf_counter() - t, 3)
    figures["review_items"] = {k: len(v) for k, v in items.items()}
    conn.close()
    figures["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    figures["machine"] = f"{platform.machine()} {platform.python_version()}"
    for key, value in figures.items():
        print(f"{key}: {value}")
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"interventions-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(figures, indent=2))
    print(f"saved {path}")


if __name__ == "__main__":
    main()

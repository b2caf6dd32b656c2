"""Storage benchmark: append throughput, full replay of 1M events, incremental projection on top.

Prints each figure as it is measured and saves them all to ``benchmarks/results/store-<time>.json``.
Each phase runs in its own process so its peak RSS is its own.

    python benchmarks/bench_store.py [--events 1000000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import save

from nous_assets.store.db import open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, rebuild

WORDS = (
    "sqlite python react hooks docker compose pytest fixture migration schema index query cache "
    "vector embedding dagster sensor partition backfill parser transcript hook latency budget redaction token "
    "secret config settings cli flag branch commit rebase merge lint ruff typing protocol"
).split()


class EventGenerator:
    """A realistic, reproducible mix: half extractions, half lifecycle events on earlier learnings."""

    def __init__(self, prefix: str = "b", seed: int = 7, known: list[str] | None = None) -> None:
        self.rng = random.Random(seed)
        self.prefix = prefix
        self.extracted: list[str] = list(known or [])
        self.i = 0

    def take(self, n: int) -> list[LearningEvent]:
        rng, out = self.rng, []
        while len(out) < n:
            i = self.i
            self.i += 1
            project, session = f"proj-{i % 100}", f"sess-{(i // 200) % 5000}"
            key = f"{self.prefix}-k{i}"
            roll = rng.random()
            if roll < 0.5 or len(self.extracted) < 10:
                lid = f"{self.prefix}-L{i}"
                edges = []
                if self.extracted and rng.random() < 0.3:
                    edges.append({"target": rng.choice(self.extracted), "rel_type": "relates_to", "weight": 0.5})
                payload = {
                    "content": " ".join(rng.choices(WORDS, k=18)),
                    "extractor_version": "bench-1",
                    "concepts": rng.sample(WORDS, 5),
                    "edges": edges,
                }
                out.append(
                    LearningEvent(
                        "LearningExtracted",
                        lid,
                        payload,
                        session,
                        project,
                        "historical_backfill",
                        key,
                        valid_from="2026-01-01",
                        vector_clock={session: i + 1},
                    )
                )
                self.extracted.append(lid)
                continue
            lid, other = rng.choice(self.extracted), rng.choice(self.extracted)
            if roll < 0.70:
                kind, payload = "LearningReinforced", {"reinforcement_delta": 0.1}
            elif roll < 0.85:
                kind, payload = "LearningWeakened", {"reinforcement_delta": -0.2}
            elif roll < 0.90:
                kind, payload = "LearningValidated", {}
            elif roll < 0.94:
                kind, payload = "LearningContradicted", {"contradicted_with": other, "contradiction_multiplier": 0.7}
            elif roll < 0.98:
                kind, payload = "LearningSuperseded", {"superseded_by": other}
            else:
                kind, payload = "LearningArchived", {"reason": "bench"}
            if other == lid and kind in ("LearningContradicted", "LearningSuperseded"):
                continue
            out.append(LearningEvent(kind, lid, payload, session, project, "user_review", key))
        return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def phase_append(db: str, n_single: int, n_batched: int, batch: int) -> dict:
    conn = open_db(db, create=True)
    store = SqliteEventStore(conn)
    singles = EventGenerator("single").take(n_single)
    t = time.perf_counter()
    for ev in singles:
        store.append(ev)
    single_s = time.perf_counter() - t
    batched = EventGenerator("batch").take(n_batched)
    t = time.perf_counter()
    for i in range(0, len(batched), batch):
        store.append_many(batched[i : i + batch])
    batched_s = time.perf_counter() - t
    t = time.perf_counter()
    dupes = store.append_many(batched[:batch])
    dup_s = time.perf_counter() - t
    assert not any(r.created for r in dupes)
    return {
        "append_single_events": len(singles),
        "append_single_events_per_s": round(len(singles) / single_s),
        "append_batched_events": len(batched),
        "append_batch_size": batch,
        "append_batched_events_per_s": round(len(batched) / batched_s),
        "append_duplicate_batch_events_per_s": round(batch / dup_s),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }


def phase_load(db: str, n: int, batch: int) -> dict:
    conn = open_db(db, create=True)
    store = SqliteEventStore(conn)
    t = time.perf_counter()
    chunk, gen = 100_000, EventGenerator()
    for start in range(0, n, chunk):
        events = gen.take(min(chunk, n - start))
        for i in range(0, len(events), batch):
            store.append_many(events[i : i + batch])
        print(f"  loaded {start + len(events):,} events", file=sys.stderr, flush=True)
    seconds = time.perf_counter() - t
    total = store.last_event_id()
    return {"load_events": total, "load_seconds": round(seconds, 1), "load_events_per_s": round(total / seconds)}


def phase_replay(db: str) -> dict:
    conn = open_db(db)
    t = time.perf_counter()
    stats = rebuild(conn)
    seconds = time.perf_counter() - t
    memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    return {
        "replay_events": stats.events,
        "replay_seconds": round(seconds, 2),
        "replay_events_per_s": round(stats.events / seconds),
        "replay_memories": memories,
        "replay_peak_rss_mb": round(peak_rss_mb(), 1),
    }


def phase_incremental(db: str, n: int) -> dict:
    conn = open_db(db)
    store = SqliteEventStore(conn)
    base = store.last_event_id()
    known = [r[0] for r in conn.execute("SELECT learning_id FROM memories ORDER BY random() LIMIT 10000")]
    store.append_many(EventGenerator("inc", seed=11, known=known).take(n))
    t = time.perf_counter()
    stats = project(conn)
    seconds = time.perf_counter() - t
    return {
        "incremental_events": stats.events,
        "incremental_on_top_of": base,
        "incremental_seconds": round(seconds, 3),
        "incremental_peak_rss_mb": round(peak_rss_mb(), 1),
    }


def run_phase(name: str, *args: str, script: str = __file__) -> dict:
    """Run one phase of ``script`` in a fresh process (so its peak RSS is its own); its last stdout line is JSON."""
    out = subprocess.run([sys.executable, script, "--phase", name, *args], capture_output=True, text=True)
    sys.stderr.write(out.stderr)
    if out.returncode != 0:
        raise SystemExit(f"phase {name} failed")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events for the replay benchmark")
    parser.add_argument("--incremental", type=int, default=1000, help="new events projected on top")
    parser.add_argument("--workdir", help="where to put the benchmark databases (default: a temp dir)")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.phase:
        fn = {"append": phase_append, "load": phase_load, "replay": phase_replay, "incremental": phase_incremental}
        typed = [int(a) if a.isdigit() else a for a in ns.args]
        print(json.dumps(fn[ns.phase](*typed)))
        return

    workdir = Path(ns.workdir or tempfile.mkdtemp(prefix="nous-bench-"))
    workdir.mkdir(parents=True, exist_ok=True)
    results: dict = {
        "benchmark": "store",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()},
    }
    steps = [
        ("append", str(workdir / "append.db"), "5000", "100000", "1000"),
        ("load", str(workdir / "big.db"), str(ns.events), "5000"),
        ("replay", str(workdir / "big.db")),
        ("incremental", str(workdir / "big.db"), str(ns.incremental)),
    ]
    for name, *args in steps:
        print(f"== {name}", file=sys.stderr, flush=True)
        figures = run_phase(name, *args)
        results[name] = figures
        for key, value in figures.items():
            print(f"{key:40} {value}")
    save(results, "store")


if __name__ == "__main__":
    main()

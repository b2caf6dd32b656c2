"""Re-learning benchmark: detection (tiers 1 and 2, decision matrix) over 10,000 memories, then retention.

Three phases in one process, on a fresh ``cortex.db`` (real SQLite, FTS5, the real worker path
``append_learnings``: project, compare, append, under one write lock per batch):

1. **load** — 10,000 distinct learnings arrive in sessions of 20; each is compared with what is held so far.
2. **relearn** — 2,000 more arrive over the 10,000 held: a quarter restate a memory in another order (tier 1),
   a quarter inflect its words (tier 2), a quarter change a third of its words (a near-miss or new), a
   quarter are new. Prints seconds, learnings per second and what each tier decided.
3. **retention** — decay, archival and rotation over every memory a year later.

Prints each figure as it is measured and saves them to ``benchmarks/results/relearn-<time>.json``.

    python benchmarks/bench_relearn.py [--memories 10000] [--incoming 2000] [--workdir DIR]
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import resource
import string
import tempfile
import time
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.worker import DrainStats, append_learnings
from nous_assets.reinforce.retention import apply_retention
from nous_assets.settings import Thresholds
from nous_assets.store.db import open_db
from nous_assets.store.reads import recurrence
from nous_assets.store.sqlite.projection import project

BATCH = 20
SUFFIXES = ("s", "ed", "ing")


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def vocabulary(rng: random.Random, size: int = 4000) -> list[str]:
    """Made-up words of 5 to 9 letters: no natural-language data set, nothing tuned to one."""
    return sorted({"".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 9))) for _ in range(size)})


def record(content: str, n: int) -> dict:
    anchor = f"u{n}"
    return {
        "content": content, "type": "learning", "kind": "convention", "domain": "bench", "scope": "project",
        "concepts": content.split()[:3], "edges": [], "valid_from": None, "valid_until": None,
        "temporal_confidence": "medium", "anchor_uuid": anchor, "weakens": None,
        "provenance": {"session_id": "s", "source_path": "/bench.jsonl", "uuids": [anchor], "line_offsets": [0]},
    }  # fmt: skip


def variant(rng: random.Random, text: str, kind: str, words: list[str]) -> str:
    tokens = text.split()
    if kind == "reorder":
        rng.shuffle(tokens)
    elif kind == "inflect":
        for i in rng.sample(range(len(tokens)), k=len(tokens) // 3):
            tokens[i] += rng.choice(SUFFIXES)
    elif kind == "change":
        for i in rng.sample(range(len(tokens)), k=len(tokens) // 3):
            tokens[i] = rng.choice(words)
    else:
        tokens = rng.choices(words, k=len(tokens))
    return " ".join(tokens)


def feed(conn, texts: list[str], prefix: str, start: int) -> tuple[float, DrainStats]:
    stats = DrainStats()
    began = time.perf_counter()
    for b in range(0, len(texts), BATCH):
        batch = SessionBatch("bench", f"{prefix}-{b // BATCH}", "2026-01-10", ())
        records = [record(t, start + b + i) for i, t in enumerate(texts[b : b + BATCH])]
        append_learnings(conn, batch, records, extractor_version="bench-1", source="historical_backfill",
                         thresholds=Thresholds(), stats=stats)  # fmt: skip
    return time.perf_counter() - began, stats


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--incoming", type=int, default=2_000)
    parser.add_argument("--workdir", type=Path, default=None)
    ns = parser.parse_args()
    rng = random.Random(11)
    words = vocabulary(rng)
    work = ns.workdir or Path(tempfile.mkdtemp(prefix="nous-bench-relearn-"))
    work.mkdir(parents=True, exist_ok=True)
    db = work / "cortex.db"
    if db.exists():
        db.unlink()
    conn = open_db(db, create=True)
    results: dict = {"machine": platform.platform(), "python": platform.python_version(),
                     "memories": ns.memories, "incoming": ns.incoming}  # fmt: skip

    held = [" ".join(rng.choices(words, k=rng.randint(8, 14))) for _ in range(ns.memories)]
    seconds, stats = feed(conn, held, "load", 0)
    project(conn)
    results["load"] = {"seconds": round(seconds, 2), "per_second": round(ns.memories / seconds, 1),
                       "memories_after": conn.execute("SELECT count(*) FROM memories").fetchone()[0],
                       "relearned": stats.relearned}  # fmt: skip
    print(f"load: {ns.memories} learnings into an empty store in {seconds:.1f} s ({results['load']})", flush=True)

    kinds = ["reorder", "inflect", "change", "new"]
    planned = [(kinds[i % 4], rng.choice(held)) for i in range(ns.incoming)]
    incoming = [variant(rng, text, kind, words) for kind, text in planned]
    seconds, stats = feed(conn, incoming, "relearn", ns.memories)
    flags = [f for f in recurrence.relearn_flags(conn) if f["session_id"].startswith("relearn-")]
    results["relearn"] = {
        "seconds": round(seconds, 2),
        "per_second": round(ns.incoming / seconds, 1),
        "reinforced": stats.relearned,
        "new": stats.learnings,
        "tiers": dict(Counter(f"tier{f['tier']}:{f['decision']}" for f in flags)),
        "peak_rss_mb": round(peak_rss_mb(), 1),
    }
    results["relearn"]["planned"] = dict(Counter(kind for kind, _ in planned))
    print(f"relearn: {ns.incoming} learnings over {ns.memories} memories in {seconds:.1f} s: {results['relearn']}",
          flush=True)  # fmt: skip

    began = time.perf_counter()
    retention = apply_retention(conn, datetime.now(UTC).replace(year=datetime.now(UTC).year + 1), Thresholds())
    seconds = time.perf_counter() - began
    results["retention"] = {"seconds": round(seconds, 2), "memories": retention.memories,
                            "decay_events": retention.decayed, "archived_below": retention.archived_below,
                            "archived_rotation": retention.archived_rotation}  # fmt: skip
    print(f"retention: {results['retention']}", flush=True)
    results["peak_rss_mb"] = round(peak_rss_mb(), 1)
    conn.close()
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    path = out / f"relearn-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"peak RSS {results['peak_rss_mb']} MB; saved {path}")


if __name__ == "__main__":
    main()

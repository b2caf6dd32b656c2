"""Search latency with issue 23's part-R levers off and on, alternated on the same corpora in one process.

``python benchmarks/bench_search_levers.py --workdir DIR`` where DIR holds the ``search-10000.db`` /
``search-100000.db`` corpora a ``nous bench search --workdir DIR`` run built (vectors included). The same queries
as that benchmark (seeded alike) run text-only and hybrid, ``--rounds`` times each way, alternating "before" (the
wall clock, chunks ageing, no speaker lever, no entity hop, no reply lending) and "after" (the code's defaults), so
machine load hits both alike. Prints p50/p95 per size, mode and configuration and saves them under
``benchmarks/results/``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from pathlib import Path

from nous_assets.retrieve import episodic, scoring

RESULTS = Path(__file__).parent / "results"
BEFORE = {"CORPUS_CLOCK": False, "EPISODE_RECENCY": True, "SPEAKER_BOOST": 0.0, "HOP_WEIGHT": 0.0,
          "RESOLUTION_BOOST": 0.0, "REPLY_WEIGHT": 0.0}
AFTER = {name: getattr(scoring if hasattr(scoring, name) else episodic, name) for name in BEFORE}


def _apply(values: dict) -> None:
    for name, value in values.items():
        setattr(scoring if hasattr(scoring, name) else episodic, name, value)


def main(argv: list[str] | None = None) -> int:
    from nous_assets.evaluate.corpus import TOPICS, project_cwd
    from nous_assets.evaluate.search import _time_queries
    from nous_assets.settings import load_settings
    from nous_assets.store.db import open_db
    from resolver.project import project_id_from_cwd

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workdir", type=Path, required=True)
    p.add_argument("--queries", type=int, default=100)
    p.add_argument("--rounds", type=int, default=2)
    args = p.parse_args(argv)
    settings = load_settings()
    rng = random.Random(3)  # as nous bench search draws them: 10k's queries first, then 100k's
    words = [w for ws in TOPICS.values() for w in ws]
    report: dict = {"benchmark": "search-levers", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                    "before": BEFORE, "after": AFTER, "sizes": {}}
    for size in (10_000, 100_000):
        qs = [(" ".join(rng.sample(words, 3)), project_id_from_cwd(project_cwd(rng.randrange(100))))
              for _ in range(args.queries)]
        db = args.workdir / f"search-{size}.db"
        if not db.exists():
            continue
        conn = open_db(db)
        rows: dict[str, list] = {}
        for _ in range(args.rounds):
            for name, values in (("before", BEFORE), ("after", AFTER)):
                _apply(values)
                for mode, dims in (("text_only", None), ("hybrid", 384)):
                    rows.setdefault(f"{name} {mode}", []).append(_time_queries(conn, settings, qs, dims))
        conn.close()
        _apply(AFTER)
        report["sizes"][str(size)] = rows
        for key, runs in rows.items():
            p50 = sorted(r["p50_ms"] for r in runs)
            p95 = sorted(r["p95_ms"] for r in runs)
            print(f"{size:>7} {key:18s} p50 {p50} ms  p95 {p95} ms  load {os.getloadavg()[0]:.1f}", flush=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"search-levers-{time.strftime('%Y%m%dT%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2))
    print(f"saved {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Search latency of two builds, query by query: is this build slower than an older one on the same corpora?

``python benchmarks/bench_search_ab.py --a OLD_TREE:OLD_DIR --b NEW_TREE:NEW_DIR`` where each TREE is a source tree
(a ``git archive`` of a commit, or this checkout) and each DIR holds the ``search-10000.db`` / ``search-100000.db``
corpora a ``nous bench search --workdir DIR`` run built (vectors included). An older build may need its own copy of
the corpora with ``PRAGMA user_version`` set to the last migration it knows, when the newer migrations only add
indexes or tables it does not read.

Two worker processes, one per build, hold their corpora open and warm (each query run once first). The driver asks
both to run the same query of ``nous bench search`` (its seeded 100 queries, text-only then hybrid), one after the
other, flipping which goes first every query, ``--repeats`` times. This machine's speed drifts by a factor of up to
two over minutes (a shared host), which separate runs cannot tell from a change of code; paired queries see the
same drift. Prints and saves p50/p95 per build, size and mode and the median of the per-query ratio B/A.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

from results_file import RESULTS, save

WORKER = r"""
import sys, time, random
sys.path.insert(0, sys.argv[1])
from pathlib import Path
from nous_assets.evaluate.corpus import TOPICS, project_cwd
from nous_assets.evaluate.search import _queries
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from resolver.project import project_id_from_cwd
settings = load_settings()
runs = {}
for size in [int(s) for s in sys.argv[3].split(",")]:
    rng = random.Random(3)  # the queries nous bench search asks (evaluate/search.run)
    words = [w for ws in TOPICS.values() for w in ws]
    qs = [(" ".join(rng.sample(words, 3)), project_id_from_cwd(project_cwd(rng.randrange(100)))) for _ in range(100)]
    conn = open_db(Path(sys.argv[2]) / f"search-{size}.db")
    for mode, dims in (("text", None), ("hybrid", 384)):
        runs[(size, mode)] = list(_queries(conn, settings, qs, dims))
        for run in runs[(size, mode)]:
            run()
print("ready", flush=True)
for line in sys.stdin:
    size, mode, i = line.split()
    run = runs[(int(size), mode)][int(i)]
    t = time.perf_counter()
    run()
    print((time.perf_counter() - t) * 1000, flush=True)
"""


def _worker(tree: str, corpora: str, sizes: str) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", WORKER, tree, corpora, sizes], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)  # fmt: skip
    if proc.stdout.readline().strip() != "ready":
        raise SystemExit(f"the worker for {tree} did not start (see its error above)")
    return proc


def _ask(proc: subprocess.Popen, message: str) -> float:
    proc.stdin.write(message + "\n")
    proc.stdin.flush()
    return float(proc.stdout.readline())


def _figures(times: list[float]) -> dict:
    ordered = sorted(times)
    return {"p50_ms": round(statistics.median(times), 1), "p95_ms": round(ordered[int(0.95 * (len(times) - 1))], 1)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--a", required=True, metavar="TREE:DIR", help="the baseline build and its corpora")
    parser.add_argument("--b", required=True, metavar="TREE:DIR", help="the build compared with it")
    parser.add_argument("--sizes", default="10000,100000", help="corpus sizes (default: 10000,100000)")
    parser.add_argument("--repeats", type=int, default=3, help="passes over the 100 queries per mode (default 3)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args(argv)
    workers = [_worker(*spec.split(":", 1), args.sizes) for spec in (args.a, args.b)]
    report = {"benchmark": "search-ab", "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "a": args.a,
              "b": args.b, "repeats": args.repeats, "results": {}}  # fmt: skip
    asked = 0
    for size in args.sizes.split(","):
        for mode in ("text", "hybrid"):
            a_times, b_times = [], []
            for _ in range(args.repeats):
                for i in range(100):
                    asked += 1
                    first, second = (0, 1) if asked % 2 else (1, 0)
                    took = {first: _ask(workers[first], f"{size} {mode} {i}")}
                    took[second] = _ask(workers[second], f"{size} {mode} {i}")
                    a_times.append(took[0])
                    b_times.append(took[1])
            ratio = statistics.median(b / a for a, b in zip(a_times, b_times, strict=True))
            row = {"a": _figures(a_times), "b": _figures(b_times), "b_over_a": round(ratio, 3)}
            report["results"][f"{size} {mode}"] = row
            print(f"{size:>7} {mode:<6} A p50 {row['a']['p50_ms']} p95 {row['a']['p95_ms']} ms | B p50 "
                  f"{row['b']['p50_ms']} p95 {row['b']['p95_ms']} ms | median B/A {ratio:.3f}", flush=True)  # fmt: skip
    for proc in workers:
        proc.stdin.close()
        proc.wait()
    save(report, "search-ab", args.out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

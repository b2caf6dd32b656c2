"""``nous search`` cold: a new process per call, on a store built from the shared corpus (issue 21, deliverable 5).

Builds a store from ``../shared/data/transcripts`` (a copy in a Claude-style tree, then ``nous backfill``) or
reuses one (``--store DIR`` from an earlier run: it only gets ``nous init`` for new migrations), then runs
``nous search QUERY`` as a new process ``--runs`` times per query, interleaved with ``--fts-only`` (vectors
off) and the bare ``python -c pass`` so all three see the same machine load; one untimed call per query first,
so the model file and database are in the page cache as on a laptop where search is used more than once.
``--torch-runs N`` also times N calls of today's path before the light encoder (the sentence-transformers model
loaded in the process) for comparison. Prints median/p90 per mode, of wall time and of the process's CPU time
(user + system of all its threads: less load-dependent than wall, which adds the wait for a core), with the load average
(2 cores shared by other work here: wall figures move with it) and saves them to
``benchmarks/results/search-cold-<time>.json``.

    python benchmarks/bench_search_cold.py [--store DIR] [--runs 10] [--torch-runs 3] [--query Q ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "transcripts"
NOUS = [sys.executable, "-m", "nous_assets.cli"]
QUERIES = ("sqlite migration failed", "how are hooks configured", "fix the failing test")
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_first_run import store_env  # noqa: E402
from results_file import RESULTS, save  # noqa: E402

TORCH_SEARCH = (  # the pre-light path: the query embedded by sentence-transformers in the process
    "import sys; from nous_assets.embed import registry; registry.get_query_embedder = registry.get_embedder; "
    "from nous_assets.cli.main import main; sys.exit(main(sys.argv[1:]))"
)


def build_or_reuse(root: Path, since: str) -> dict[str, str]:
    """A backfilled store under ``root``: reused when its database exists (migrated up), else built."""
    env = store_env(root)
    if (root / "data" / "cortex.db").is_file():
        print(f"reusing the store in {root}", file=sys.stderr)
        _run([*NOUS, "init"], env)
        return env
    projects = root / "home" / ".claude" / "projects"
    if projects.exists():
        shutil.rmtree(projects)
    shutil.copytree(SHARED, projects, ignore=shutil.ignore_patterns("*.md"))
    (root / "dagster").mkdir(parents=True, exist_ok=True)
    print(f"building a store from {SHARED} in {root} (nous backfill, a few minutes) ...", file=sys.stderr)
    started = time.monotonic()
    _run([*NOUS, "backfill", "--since", since], env)
    print(f"built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return env


def _run(cmd: list[str], env: dict[str, str]) -> subprocess.CompletedProcess:
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=REPO)
    if out.returncode != 0:
        raise SystemExit(f"{' '.join(cmd[2:])} failed:\n{out.stderr[-3000:]}")
    return out


CPU: list[float] = []  # CPU seconds (user + system) of each timed process, in the order timed


def timed(cmd: list[str], env: dict[str, str]) -> float:
    """Wall seconds of one new process (output captured and checked: a failed search is not a fast one);
    its CPU seconds (all threads) go to ``CPU``: on a machine shared with other work, wall time also counts
    the wait for a core."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    _run(cmd, env)
    elapsed = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    CPU.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return elapsed


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "median_s": round(statistics.median(values), 3),
            "p90_s": round(_percentile(values, 0.9), 3), "min_s": round(min(values), 3),
            "max_s": round(max(values), 3)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", type=Path, default=Path("/tmp/nous-bench-search-cold"),
                        help="store directory to build in, or reuse when it holds data/cortex.db")  # fmt: skip
    parser.add_argument("--since", default="2025-09-01", help="backfill from this day when building")
    parser.add_argument("--runs", type=int, default=10, help="timed calls per query and mode (default 10)")
    parser.add_argument("--torch-runs", type=int, default=0, help="also time N calls of the torch query path")
    parser.add_argument("--query", action="append", help="a query (repeatable; default: three real ones)")
    parser.add_argument("--out-dir", type=Path, default=RESULTS)
    args = parser.parse_args()
    if args.runs < 1 or args.torch_runs < 0:
        parser.error("--runs must be positive and --torch-runs not negative")
    if not SHARED.is_dir() and not (args.store / "data" / "cortex.db").is_file():
        parser.error(f"{SHARED} is not present and --store holds no database")
    queries = args.query or list(QUERIES)
    env = build_or_reuse(args.store, args.since)
    modes = {
        "search": lambda q: [*NOUS, "search", q],
        "search --fts-only": lambda q: [*NOUS, "search", q, "--fts-only"],
        "python -c pass": lambda q: [sys.executable, "-c", "pass"],
    }
    for q in queries:  # untimed: page cache
        timed(modes["search"](q), env)
    load_before = os.getloadavg()
    times: dict[str, list[float]] = {mode: [] for mode in modes}
    cpu: dict[str, list[float]] = {mode: [] for mode in modes}
    per_query: dict[str, list[float]] = {q: [] for q in queries}
    CPU.clear()
    for _ in range(args.runs):
        for q in queries:
            for mode, cmd in modes.items():
                seconds = timed(cmd(q), env)
                times[mode].append(seconds)
                cpu[mode].append(CPU[-1])
                if mode == "search":
                    per_query[q].append(seconds)
    if args.torch_runs:
        torch_mode = "search (torch query encoder, before)"
        times[torch_mode], cpu[torch_mode] = [], []
        for i in range(args.torch_runs):
            cmd = [sys.executable, "-c", TORCH_SEARCH, "search", queries[i % len(queries)]]
            times[torch_mode].append(timed(cmd, env))
            cpu[torch_mode].append(CPU[-1])
    load_after = os.getloadavg()
    result = {
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "store": str(args.store),
        "queries": queries,
        "cpus": os.cpu_count(),
        "loadavg_before": [round(x, 2) for x in load_before],
        "loadavg_after": [round(x, 2) for x in load_after],
        "modes": {mode: summary(values) for mode, values in times.items()},
        "cpu": {mode: summary(values) for mode, values in cpu.items()},
        "search_per_query": {q: summary(values) for q, values in per_query.items()},
    }
    print(f"load average {load_before[0]:.2f} -> {load_after[0]:.2f} ({os.cpu_count()} CPUs); "
          f"{args.runs} runs x {len(queries)} queries")  # fmt: skip
    for mode, s in result["modes"].items():
        c = result["cpu"][mode]
        print(f"  {mode:40s} wall median {s['median_s']:.3f} s  p90 {s['p90_s']:.3f} s   "
              f"CPU median {c['median_s']:.3f} s  p90 {c['p90_s']:.3f} s  (n={s['n']})")  # fmt: skip
    save(result, "search-cold", args.out_dir)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

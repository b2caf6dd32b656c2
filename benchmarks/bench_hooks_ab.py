"""SessionStart latency of this checkout's resolver against another git ref's, interleaved in one run.

``nous bench hooks`` measures one resolver; on a shared machine its figures move with the load of the
moment, so two runs at different times cannot show a few milliseconds of regression. This script runs,
for every session start, the bare interpreter, the resolver of ``--ref`` (exported with ``git archive``)
and this checkout's, in a random order, against the same database and the same hook JSON, and prints
p50/p95 of each and the differences. Both resolvers run as ``python -I -c`` with the same runner, so
they pay the same start-up.

    python benchmarks/bench_hooks_ab.py --ref main [--starts 200] [--memories 10000] [--cwd DIR]

``--cold`` evicts the database files from the page cache before every start (as the cold profiles of
``nous bench hooks`` do). Without ``--cwd`` each start names one of the corpus's 100 project directories
(which do not exist, as in ``nous bench hooks``); with it, every start uses that directory (e.g. a real
git worktree).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from results_file import RESULTS, save

REPO = Path(__file__).resolve().parents[1]
RUNNER = ("import sys; sys.path.insert(0, {root!r}); sys.argv[0] = 'resolver'; import runpy; "
          "runpy.run_module('resolver', run_name='__main__')")  # fmt: skip


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _export(ref: str, into: Path) -> Path:
    into.mkdir(parents=True)
    archive = subprocess.run(["git", "-C", str(REPO), "archive", ref, "resolver"], check=True, capture_output=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def _evict(db: Path) -> None:
    from nous_assets.evaluate.hooks import _evict as evict

    evict(db)


def _corpus(workdir: Path, memories: int) -> Path:
    from nous_assets.evaluate.corpus import build_corpus
    from nous_assets.retrieve.cache_build import build_cache
    from nous_assets.settings import load_settings

    data_dir = workdir / "data"
    data_dir.mkdir(parents=True)
    conn = build_corpus(data_dir / "cortex.db", memories, projects=100)
    build_cache(conn, load_settings(), embedder=None, lake_dir=data_dir / "lake", force=True)
    conn.close()
    return data_dir


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", required=True, help="git ref whose resolver/ is the baseline (e.g. main)")
    parser.add_argument("--starts", type=int, default=200)
    parser.add_argument("--memories", type=int, default=10_000)
    parser.add_argument("--cwd", help="a directory every start names (default: the corpus's project dirs)")
    parser.add_argument("--cold", action="store_true", help="evict the database from the page cache before each start")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nous-hooks-ab-"))
    baseline = _export(args.ref, work / "baseline")
    data_dir = _corpus(work, args.memories)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}
    tail = ["session-start", "--data-dir", str(data_dir)]
    commands = {
        "bare interpreter": [sys.executable, "-I", "-c", "pass"],
        f"resolver at {args.ref}": [sys.executable, "-I", "-c", RUNNER.format(root=str(baseline)), *tail],
        "resolver here": [sys.executable, "-I", "-c", RUNNER.format(root=str(REPO)), *tail],
    }
    rng = random.Random(1)
    times: dict[str, list[float]] = {name: [] for name in commands}
    empty: dict[str, int] = dict.fromkeys(commands, 0)
    for i in range(args.starts):
        cwd = args.cwd or f"/bench/work/project-{rng.randrange(100):03d}"
        payload = json.dumps({"session_id": f"ab-{i}", "cwd": cwd, "source": "startup",
                              "hook_event_name": "SessionStart", "transcript_path": ""})  # fmt: skip
        order = list(commands.items())
        rng.shuffle(order)
        for name, command in order:
            if args.cold:
                _evict(data_dir / "cortex.db")
            started = time.perf_counter()
            out = subprocess.run(command, input=payload, capture_output=True, text=True, env=env, cwd=data_dir)
            times[name].append((time.perf_counter() - started) * 1000)
            empty[name] += not out.stdout.strip()
    report = {"ref": args.ref, "starts": args.starts, "memories": args.memories, "cwd": args.cwd, "cold": args.cold,
              "load_average": os.getloadavg(), "profiles": {}}  # fmt: skip
    for name, values in times.items():
        figures = {"p50_ms": round(statistics.median(values), 1), "p95_ms": round(_percentile(values, 0.95), 1),
                   "mean_ms": round(statistics.fmean(values), 1), "no_output": empty[name]}  # fmt: skip
        report["profiles"][name] = figures
        print(f"{name:28} p50={figures['p50_ms']}ms p95={figures['p95_ms']}ms mean={figures['mean_ms']}ms")
    base, here = report["profiles"][f"resolver at {args.ref}"], report["profiles"]["resolver here"]
    d50, d95 = here["p50_ms"] - base["p50_ms"], here["p95_ms"] - base["p95_ms"]
    print(f"here - {args.ref}: p50 {d50:+.1f}ms, p95 {d95:+.1f}ms (load average {report['load_average'][0]:.2f})")
    save(report, "hooks-ab", args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""The installed SessionStart hook against the bare interpreter, interleaved A/B (issue 21, deliverable 6).

Acceptance: a SessionStart, as ``nous hooks install`` writes it, costs at most 1.0x ``<same python> -I -c pass``.
For every pair, in a random order, the script runs the bare interpreter and the installed SessionStart command
(read back from a ``settings.json`` that :func:`nous_assets.hooks.install_hooks` wrote) on a real SQLite store
with built packets, with the hook JSON Claude Code sends on stdin; it prints and saves p50/p95 of both, the
ratios, how many hook runs injected nothing (must be 0: a fast hook that says nothing proves nothing) and the
load average before and after (the machine is shared). ``--old`` adds the previous command shape
(``<python> -I -m resolver session-start``) as a third arm, for the record.

    python benchmarks/bench_hook_start.py [--pairs 200] [--memories 2000] [--data-dir DIR] [--cwd DIR] [--old]

Without ``--data-dir`` a store is built with the bench corpus (``--memories`` learnings over 100 projects)
and the pipeline's cache builder; every start names one of its project directories, or ``--cwd`` (e.g. a real
git checkout: the branch is read from its ``.git`` files).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))
from bench_hooks_ab import _corpus, _percentile  # noqa: E402
from results_file import RESULTS, save  # noqa: E402


def _installed_session_start(work: Path, data_dir: Path) -> str:
    from nous_assets.hooks import install_hooks, installed_hooks

    settings = work / "claude" / "settings.json"
    install_hooks(settings, sys.executable, data_dir=data_dir)
    ((_, entry),) = installed_hooks(settings)["SessionStart"]
    return entry["command"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200, help="interleaved pairs (the acceptance asks for 40)")
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--data-dir", help="an existing Nous data dir with built packets (default: build one)")
    parser.add_argument("--cwd", help="the directory every start names (default: the corpus's project dirs)")
    parser.add_argument("--old", action="store_true", help="also time the previous `-m resolver` command")
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args()
    from nous_assets.evaluate.corpus import project_cwd

    work = Path(tempfile.mkdtemp(prefix="nous-hook-start-"))
    data_dir = Path(args.data_dir) if args.data_dir else _corpus(work, args.memories)
    installed = _installed_session_start(work, data_dir)
    commands = {"bare": [sys.executable, "-I", "-c", "pass"], "hook": shlex.split(installed)}
    if args.old:
        commands["old -m resolver"] = [sys.executable, "-I", "-m", "resolver", "session-start", "--data-dir",
                                       str(data_dir)]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}  # the paths are in the command
    load_before = os.getloadavg()
    rng = random.Random(1)
    times: dict[str, list[float]] = {name: [] for name in commands}
    silent: dict[str, int] = dict.fromkeys(commands, 0)
    for i in range(args.pairs):
        cwd = args.cwd or project_cwd(rng.randrange(100))
        payload = json.dumps({"session_id": f"start-{i}", "transcript_path": "", "cwd": cwd,
                              "hook_event_name": "SessionStart", "source": "startup"})  # fmt: skip
        order = list(commands.items())
        rng.shuffle(order)
        for name, command in order:
            started = time.perf_counter()
            out = subprocess.run(command, input=payload, capture_output=True, text=True, env=env, cwd=work)
            times[name].append((time.perf_counter() - started) * 1000)
            silent[name] += name != "bare" and not out.stdout.strip()
    load_after = os.getloadavg()
    report: dict = {"command": installed, "pairs": args.pairs, "cwd": args.cwd,
                    "memories": None if args.data_dir else args.memories, "data_dir": str(data_dir),
                    "python": sys.executable, "cpus": os.cpu_count(),
                    "load_average_before": load_before, "load_average_after": load_after, "profiles": {}}  # fmt: skip
    print(f"installed: {installed}")
    for name, values in times.items():
        figures = {"p50_ms": round(statistics.median(values), 1), "p95_ms": round(_percentile(values, 0.95), 1),
                   "mean_ms": round(statistics.fmean(values), 1), "no_output": silent[name]}  # fmt: skip
        report["profiles"][name] = figures
        print(f"{name:18} p50={figures['p50_ms']:6.1f} ms  p95={figures['p95_ms']:6.1f} ms  "
              f"mean={figures['mean_ms']:6.1f} ms  no output: {figures['no_output']}")  # fmt: skip
    bare = report["profiles"]["bare"]
    for name in [n for n in commands if n != "bare"]:
        mine = report["profiles"][name]
        ratios = {"p50": round(mine["p50_ms"] / bare["p50_ms"], 3), "p95": round(mine["p95_ms"] / bare["p95_ms"], 3)}
        report["profiles"][name]["ratio_to_bare"] = ratios
        print(f"{name} / bare: p50 {ratios['p50']:.3f}x, p95 {ratios['p95']:.3f}x")
    print(f"load average before {' '.join(f'{x:.2f}' for x in load_before)}, "
          f"after {' '.join(f'{x:.2f}' for x in load_after)} ({os.cpu_count()} CPUs, shared)")  # fmt: skip
    save(report, "hook-start", args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""SessionStart hooks started all at once: how many inject, and how long the slowest takes.

Claude Code Desktop fires SessionStart several times in one second, and a team may open many sessions
together; on a two-core machine 50 Python starts queue for the CPU, so a budget counted from process creation
runs out before the work begins. This script starts ``--hooks`` session-start resolvers at the same moment
(``Popen`` in a tight loop, each given its JSON at once as Claude Code does, then waits for all) against one
database with packets for the corpus's projects, for this checkout's resolver and, with ``--ref``, another git
ref's (exported with ``git archive``), rounds interleaved. It prints, per resolver, how many of the hooks
injected context and the p50/p95/max wall time from launch to exit, and saves the figures as JSON.

    python benchmarks/bench_hook_burst.py [--ref main] [--hooks 50] [--rounds 5] [--memories 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_hooks_ab import RUNNER, _corpus, _export, _percentile  # noqa: E402
from results_file import RESULTS, save  # noqa: E402

REPO = Path(__file__).resolve().parents[1]


def burst(command: list[str], hooks: int, env: dict[str, str], cwd: Path, tag: str) -> tuple[int, list[float]]:
    """(hooks that printed context, wall seconds of each from its launch to its exit)."""
    procs = []
    for i in range(hooks):
        payload = json.dumps({"session_id": f"{tag}-{i}", "cwd": f"/bench/work/project-{i % 100:03d}",
                              "source": "startup", "hook_event_name": "SessionStart"})  # fmt: skip
        started = time.perf_counter()
        proc = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=env, cwd=cwd)  # fmt: skip
        proc.stdin.write(payload.encode())  # as Claude Code does: the JSON at once, not when we get to reading
        proc.stdin.close()
        procs.append((proc, started))
    injected, walls = 0, []
    for proc, started in procs:
        out = proc.stdout.read()
        proc.wait(timeout=30)
        walls.append(time.perf_counter() - started)
        injected += b"additionalContext" in out
    return injected, walls


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ref", help="git ref whose resolver/ to burst too (e.g. main)")
    parser.add_argument("--hooks", type=int, default=50, help="hooks started at once (default 50)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--memories", type=int, default=2_000)
    parser.add_argument("--out-dir", default=RESULTS)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="nous-hook-burst-"))
    data_dir = _corpus(work, args.memories)
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}
    tail = ["session-start", "--data-dir", str(data_dir)]
    roots = {"resolver here": REPO}
    if args.ref:
        roots[f"resolver at {args.ref}"] = _export(args.ref, work / "baseline")
    results: dict[str, dict[str, list]] = {name: {"injected": [], "walls": []} for name in roots}
    for r in range(args.rounds):
        for name, root in roots.items() if r % 2 == 0 else reversed(list(roots.items())):
            command = [sys.executable, "-I", "-c", RUNNER.format(root=str(root)), *tail]
            injected, walls = burst(command, args.hooks, env, data_dir, f"{r}-{len(name)}")
            results[name]["injected"].append(injected)
            results[name]["walls"].extend(walls)
    report = {"hooks": args.hooks, "rounds": args.rounds, "memories": args.memories, "cpus": os.cpu_count(),
              "load_average": os.getloadavg(), "profiles": {}}  # fmt: skip
    for name, got in results.items():
        walls = got["walls"]
        figures = {"injected_per_round": got["injected"], "min_injected": min(got["injected"]),
                   "p50_s": round(statistics.median(walls), 3), "p95_s": round(_percentile(walls, 0.95), 3),
                   "max_s": round(max(walls), 3)}  # fmt: skip
        report["profiles"][name] = figures
        print(f"{name:24} injected {figures['injected_per_round']} of {args.hooks} per round; "
              f"wall p50={figures['p50_s']}s p95={figures['p95_s']}s max={figures['max_s']}s")  # fmt: skip
    save(report, "hook-burst", args.out_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""How long a correction takes to reach the packet (issue 21, deliverable 3): ``nous review reject`` end to end.

On a copy of a real store (``--data-dir``: a data dir ``nous run``/``nous backfill`` built; the copy keeps the
original untouched), each round rejects one memory of a packet with the real CLI in a fresh process, as a user
would, and reads back the packet with ``nous packet``: the round counts only if the rejected line is gone. It prints
and saves the wall time of each ``nous review reject`` (the rebuild included), the rebuild's own seconds (the
CLI's ``packets: rebuilt in …`` line), their medians, and the load average before and after (the machine is
shared).

    python benchmarks/bench_correction.py --data-dir DIR --cwd SESSION_DIR [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))


def _nous(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nous_assets.cli", *args], env=env, capture_output=True, text=True,
                          cwd=REPO, timeout=600)  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", required=True, help="a Nous data dir with packets (copied, never changed)")
    parser.add_argument("--cwd", required=True, help="a session directory whose packet has memory lines")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--out", default=str(REPO / "benchmarks" / "results" / "correction.json"))
    args = parser.parse_args()

    from nous_assets.retrieve.preview import hook_context, memory_lines

    work = Path(tempfile.mkdtemp(prefix="nous-bench-correction-"))
    data = work / "data"
    shutil.copytree(args.data_dir, data, ignore=shutil.ignore_patterns("dagster"))
    env = {**os.environ, "NOUS_DATA_DIR": str(data), "HOME": str(work)}
    env.pop("DAGSTER_HOME", None)
    env.pop("NOUS_DB_PATH", None)
    load_before = os.getloadavg()
    walls, rebuilds = [], []
    try:
        for _ in range(args.rounds):
            view = hook_context(data / "cortex.db", args.cwd)
            lines = [(line, mid) for line, mid in memory_lines(view.text, view.memory_ids) if mid is not None]
            if not lines:
                print("no memory line left in the packet; stopping")
                break
            line, victim = lines[-1]
            started = time.monotonic()
            proc = _nous(env, "review", "reject", str(victim), "--reason", "bench")
            wall = time.monotonic() - started
            found = re.search(r"packets: rebuilt in ([0-9.]+)s", proc.stderr)
            if proc.returncode != 0 or not found:
                print(f"reject #{victim} failed: {proc.stderr.strip()[-300:]}")
                return 1
            after = _nous(env, "packet", args.cwd).stdout
            if line in after:
                print(f"#{victim} still in the packet after the rebuild")
                return 1
            walls.append(wall)
            rebuilds.append(float(found.group(1)))
            print(f"reject #{victim}: {wall:.1f}s wall, rebuild {found.group(1)}s; line gone from `nous packet`")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures = {
        "rounds": len(walls),
        "reject_wall_s": [round(w, 2) for w in walls],
        "rebuild_s": rebuilds,
        "median_reject_wall_s": round(statistics.median(walls), 2) if walls else None,
        "median_rebuild_s": round(statistics.median(rebuilds), 2) if rebuilds else None,
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(figures, indent=2))
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())

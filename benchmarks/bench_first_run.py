"""First run vs backfill: a fresh `nous run` (what `make run` starts) over the shared transcripts until the
watch sensor has nothing left to do, against `nous backfill` over the same history; runs per partition.

Each side gets its own copy of the transcripts, data dir and DAGSTER_HOME. The first run counts as done
when its initial backfill has finished, the daemon's sensor has scanned once and every run that scan
requested has finished. Prints the figures and saves them to ``benchmarks/results/first-run-<time>.json``.

    python benchmarks/bench_first_run.py [--since all] [--workdir DIR] [--port 3999]

With ``--since all`` (the default) the first run is plain ``nous run`` (what ``make run`` starts: all the
history on disk) and the backfill side is ``nous backfill --since all``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import dagster as dg
from results_file import save

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"
NOUS = [sys.executable, "-m", "nous_assets.cli"]


def store_env(root: Path) -> dict[str, str]:
    """The environment that points Nous (and Dagster) at the store under ``root`` and nothing else."""
    projects = root / "home" / ".claude" / "projects"
    env = {
        **os.environ,
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
        "NOUS_DATA_DIR": str(root / "data"),
        "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl"),
        "DAGSTER_HOME": str(root / "dagster"),
    }
    for key in ("NOUS_DB_PATH", "NOUS_CONFIG_FILE", "XDG_DATA_HOME", "NOUS_EXTRACTOR"):
        env.pop(key, None)
    return env


def fresh(root: Path) -> dict[str, str]:
    """A copy of the shared transcripts in a Claude-style tree, with empty Nous and Dagster homes."""
    shutil.copytree(SHARED, root / "home" / ".claude" / "projects", ignore=shutil.ignore_patterns("*.md"))
    return store_env(root)


def runs_per_partition(home: str) -> dict[str, int]:
    from nous_assets.defs.runs import covered_days

    counts: dict[str, int] = {}
    with dg.DagsterInstance.from_config(home) as instance:
        for run in instance.get_runs():
            for day in covered_days(run.tags):
                counts[day] = counts.get(day, 0) + 1
    return dict(sorted(counts.items()))


def embedding_steps(home: str) -> list[float]:
    """Seconds each run's embeddings step took (its budget must hold)."""
    out = []
    with dg.DagsterInstance.from_config(home) as instance:
        for run in instance.get_runs():
            stats = instance.get_run_step_stats(run.run_id, step_keys=["embeddings"])
            out += [round(s.end_time - s.start_time, 1) for s in stats if s.end_time and s.start_time]
    return out


def store_figures(env: dict[str, str]) -> dict[str, int]:
    """Memories and packets the side ended with (the acceptance: `nous run` alone ends with both)."""
    from nous_assets.store.db import open_db
    from nous_assets.store.reads.figures import memories_total
    from nous_assets.store.sqlite.cache import all_packets

    conn = open_db(Path(env["NOUS_DATA_DIR"]) / "cortex.db")
    try:
        return {"memories": memories_total(conn), "packets": len(all_packets(conn))}
    finally:
        conn.close()


def time_backfill(env: dict[str, str], since: str) -> float:
    started = time.monotonic()
    out = subprocess.run([*NOUS, "backfill", "--since", since], env=env, capture_output=True, text=True)
    elapsed = time.monotonic() - started
    if out.returncode != 0:
        raise SystemExit(f"nous backfill failed:\n{out.stderr[-3000:]}")
    print(out.stderr.strip().splitlines()[-1])
    return elapsed


def _sensor_ticks(home: str) -> list:
    """Finished ticks of the watch sensor that scanned (not the ones waiting for the next scan), oldest first."""
    from dagster._core.definitions.run_request import InstigatorType
    from dagster._core.scheduler.instigation import TickStatus

    with dg.DagsterInstance.from_config(home) as instance:
        states = [
            s for s in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR)
            if s.instigator_name == "transcript_watch"
        ]
        if not states:
            return []
        ticks = instance.get_ticks(states[0].instigator_origin_id, states[0].selector_id, limit=50)
        done = (TickStatus.SKIPPED, TickStatus.SUCCESS, TickStatus.FAILURE)
        return [t for t in reversed(ticks) if t.status in done and "next scan" not in (t.skip_reason or "")]


def _in_flight(home: str) -> int:
    from nous_assets.defs.runs import in_flight_runs

    with dg.DagsterInstance.from_config(home) as instance:
        return len(in_flight_runs(instance))


def time_first_run(env: dict[str, str], since: str, port: int, log: Path) -> dict:
    """`nous run` until the sensor's first scan and every run it requested are done."""
    started = time.monotonic()
    with log.open("w") as out:
        window = [] if since == "all" else ["--since", since]
        proc = subprocess.Popen([*NOUS, "run", *window, "--port", str(port)], env=env, stdout=out,
                                stderr=subprocess.STDOUT)
    home = env["DAGSTER_HOME"]
    serving = scanned = None
    try:
        while time.monotonic() - started < 1800 and proc.poll() is None:
            time.sleep(1)
            if serving is None:
                if "serving Dagster" in log.read_text():
                    serving = time.monotonic() - started
                continue
            if _sensor_ticks(home) and _in_flight(home) == 0:
                scanned = time.monotonic() - started
                break
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=120)
    if scanned is None:
        raise SystemExit(f"the first run did not settle:\n{log.read_text()[-3000:]}")
    first_scan = _sensor_ticks(home)[0]
    return {
        "initial_backfill_done_s": round(serving, 1),
        "sensor_settled_s": round(scanned, 1),
        "first_scan": {"status": first_scan.status.value, "skip_reason": first_scan.skip_reason,
                       "runs_requested": len(first_scan.run_ids)},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--since", default="all", help="history to take (default all: every day on disk)")
    parser.add_argument("--workdir", help="scratch directory (default: a new temp dir)")
    parser.add_argument("--port", type=int, default=3999)
    args = parser.parse_args()
    work = Path(args.workdir or tempfile.mkdtemp(prefix="nous-first-run-"))
    work.mkdir(parents=True, exist_ok=True)
    for side in ("backfill", "first-run"):
        shutil.rmtree(work / side, ignore_errors=True)

    env = fresh(work / "backfill")
    backfill_s = time_backfill(env, args.since)
    backfill_runs = runs_per_partition(env["DAGSTER_HOME"])
    backfill_store = store_figures(env)
    print(f"nous backfill --since {args.since}: {backfill_s:.1f}s; runs per partition {backfill_runs}")

    env = fresh(work / "first-run")
    first = time_first_run(env, args.since, args.port, work / "first-run.log")
    first_runs = runs_per_partition(env["DAGSTER_HOME"])
    first_store = store_figures(env)
    print(f"nous run --since {args.since}: initial backfill done {first['initial_backfill_done_s']}s, sensor "
          f"settled {first['sensor_settled_s']}s (first scan: {first['first_scan']}); runs per partition {first_runs}")
    results = {
        "since": args.since,
        "backfill_s": round(backfill_s, 1),
        "backfill_runs_per_partition": backfill_runs,
        "backfill_store": backfill_store,
        "backfill_embedding_steps_s": embedding_steps(str(work / "backfill" / "dagster")),
        "first_run": first,
        "first_run_runs_per_partition": first_runs,
        "first_run_store": first_store,
        "first_run_embedding_steps_s": embedding_steps(env["DAGSTER_HOME"]),
        "max_runs_per_partition": max([*first_runs.values(), 0]),
        "load_average": os.getloadavg(),
    }
    print(json.dumps(results, indent=2))
    save(results, "first-run")


if __name__ == "__main__":
    main()

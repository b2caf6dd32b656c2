"""`nous bench hooks`: SessionStart latency of the real resolver process, per corpus size and cache state.

For each corpus (default 1,000 and 10,000 memories over 100 projects) the injection cache is built by
the pipeline's cache builder, then the command ``nous hooks install`` writes (``python -I -S …/resolver/launch.py
session-start --data-dir …``, no NOUS_* variable in the environment) is run ``starts`` times
with hook JSON on stdin (a random project's cwd each time), timing the whole process:

* warm — the database pages are in the OS cache (as on a machine in daily use);
* cold — before every start the database files are evicted from the page cache
  (``posix_fadvise(DONTNEED)``), so the resolver reads them from disk.

A start "fails open" when it prints no context. The bare interpreter (``python -I -c pass``) is timed in
the same run, so a hook's p95 is read against the floor it cannot go below on this machine at this load.
Figures, the config snapshot and the hardware profile go to ``benchmark.json``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import random
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict
from pathlib import Path

from nous_assets.settings import Settings

BASELINE_STARTS = 100  # bare interpreter starts: enough for a p95 to compare the hook's p95 with


def _hardware() -> dict:
    model = mem = ""
    with contextlib.suppress(OSError, IndexError):
        model = next(
            (
                line.split(":", 1)[1].strip()
                for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")
            ),
            "",
        )
        mem = Path("/proc/meminfo").read_text().splitlines()[0].split(":", 1)[1].strip()
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "memory": mem,
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def _evict(db: Path) -> None:
    for path in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        try:
            fd = os.open(path, os.O_RDONLY)
        except OSError:
            continue
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def _interpreter_starts(count: int) -> list[float]:
    """Wall times (ms) of ``python -I -c pass``: the floor any hook process pays, measured in the same run."""
    times = []
    for _ in range(count):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-I", "-c", "pass"], check=True)
        times.append((time.perf_counter() - t) * 1000)
    return times


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def _profile(db: Path, data_dir: Path, starts: int, cold: bool, projects: int, seed: int) -> dict:
    from nous_assets.evaluate.corpus import project_cwd
    from nous_assets.hooks import resolver_command

    rng = random.Random(seed)
    # exactly what `nous hooks install` writes: the paths are in the command, none in the environment
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}
    command = shlex.split(resolver_command(sys.executable, "session-start", data_dir=data_dir, db_path=db))
    times, fail_open, chars = [], 0, []
    for i in range(starts):
        payload = json.dumps(
            {
                "session_id": f"bench-{seed}-{i}",
                "cwd": project_cwd(rng.randrange(projects)),
                "source": "startup",
                "hook_event_name": "SessionStart",
                "transcript_path": "",
            }
        )
        if cold:
            _evict(db)
        t = time.perf_counter()
        out = subprocess.run(
            command,
            input=payload,
            env=env,
            capture_output=True,
            text=True,
            cwd=str(data_dir),
        )
        times.append((time.perf_counter() - t) * 1000)
        try:
            context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
        except (ValueError, KeyError, TypeError):
            context = ""
        if out.returncode != 0 or not context:
            fail_open += 1
        chars.append(len(context))
    return {
        "starts": starts,
        "p50_ms": round(statistics.median(times), 1),
        "p95_ms": round(_percentile(times, 0.95), 1),
        "p99_ms": round(_percentile(times, 0.99), 1),
        "mean_ms": round(statistics.fmean(times), 1),
        "max_ms": round(max(times), 1),
        "fail_open_rate": round(fail_open / starts, 4),
        "mean_context_chars": round(statistics.fmean(chars), 1),
    }


def run(
    out: Path,
    settings: Settings,
    *,
    starts: int = 200,
    sizes: list[int] | None = None,
    workdir: Path | None = None,
    projects: int = 100,
) -> dict:
    from nous_assets.evaluate.corpus import build_corpus
    from nous_assets.retrieve.cache_build import build_cache

    workdir = workdir or Path(tempfile.mkdtemp(prefix="nous-bench-hooks-"))
    report: dict = {
        "benchmark": "hooks",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "hardware": _hardware(),
        "config": json.loads(json.dumps(asdict(settings), default=str)),
        "target_p95_ms": 60,
        "slo_p95_ms": 250,
        "profiles": {},
    }
    baseline = _interpreter_starts(BASELINE_STARTS)
    report["interpreter_start_p50_ms"] = round(statistics.median(baseline), 1)
    report["interpreter_start_p95_ms"] = round(_percentile(baseline, 0.95), 1)
    print(f"{'bare interpreter (-I -c pass)':28} p50={report['interpreter_start_p50_ms']}ms "
          f"p95={report['interpreter_start_p95_ms']}ms")  # fmt: skip
    for size in sizes or [1000, 10000]:
        data_dir = workdir / f"corpus-{size}"
        data_dir.mkdir(parents=True, exist_ok=True)
        db = data_dir / "cortex.db"
        t = time.perf_counter()
        conn = build_corpus(db, size, projects=projects)
        stats = build_cache(conn, settings, embedder=None, lake_dir=data_dir / "lake", force=True)
        conn.close()
        print(
            f"corpus {size}: {stats.packets} packets for {stats.projects_rebuilt} projects "
            f"in {time.perf_counter() - t:.1f}s",
            file=sys.stderr,
        )
        for cold in (False, True):
            name = f"{size}_memories_{'cold' if cold else 'warm'}"
            figures = _profile(db, data_dir, starts, cold, projects, seed=size)
            figures["p95_over_interpreter_ms"] = round(figures["p95_ms"] - report["interpreter_start_p95_ms"], 1)
            report["profiles"][name] = figures
            print(
                f"{name:28} p50={figures['p50_ms']}ms p95={figures['p95_ms']}ms p99={figures['p99_ms']}ms "
                f"(p95 {figures['p95_over_interpreter_ms']:+}ms over the bare interpreter) "
                f"fail-open={figures['fail_open_rate']:.1%}"
            )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2))
    print(f"saved {out}")
    return report

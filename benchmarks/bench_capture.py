"""Capture benchmark: parser, redaction, discovery and file-day throughput, and end-to-end backfill time
on a >= 200 MB transcript corpus.

The corpus replicates ``../shared/data/transcripts`` with every uuid rewritten per copy, so copies are
distinct sessions (nothing is de-duplicated away: chunk embedding has no content-hash cache, so every copy's
chunks are embedded; memories with identical text share a vector, as they always have). Prints each figure and
saves them all to ``benchmarks/results/capture-<time>.json``. ``--no-backfill`` skips the (long) end-to-end
backfill, ``--only-backfill`` everything else.

The backfill is the full chain, one run per day (capture -> extract -> project -> embeddings of every memory
and transcript chunk -> edges -> NLI -> cache -> metrics), with the per-run embedding budget lifted so every
chunk is embedded inside the measured time; it prints wall seconds per phase (asset step, summed over the
runs), the chunks embedded and skipped, and the load average before and after (the machine is shared).

    python benchmarks/bench_capture.py [--target-mb 200] [--workdir DIR] [--no-backfill | --only-backfill]
                                       [--precision float32|bfloat16|int8]
"""

from __future__ import annotations

import argparse
import os
import platform
import re
import resource
import shutil
import tempfile
import time
from datetime import date
from pathlib import Path

from results_file import save

SHARED = Path(__file__).resolve().parents[2] / "shared" / "data" / "transcripts"
UUID_TAIL = re.compile(rb"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{8})[0-9a-f]{4}")


def build_corpus(target: Path, target_mb: float) -> tuple[int, int]:
    """Replicate the shared transcripts under ``target/projects`` until ``target_mb`` is reached."""
    files = [p for p in sorted(SHARED.rglob("*.jsonl")) if p.name != "sample_hook_logs.jsonl"]
    payloads = [(p.relative_to(SHARED), p.read_bytes()) for p in files]
    size = sum(len(b) for _, b in payloads)
    copies = max(1, int(target_mb * 1e6 // size) + 1)
    total = 0
    for i in range(copies):
        suffix = f"{i:04x}".encode()
        for rel, data in payloads:
            out = target / "projects" / f"{rel.parts[0]}-copy{i}" / Path(*rel.parts[1:])
            out = out.with_name(UUID_TAIL.sub(lambda m, s=suffix: m.group(1) + s, out.name.encode()).decode())
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_bytes(UUID_TAIL.sub(lambda m, s=suffix: m.group(1) + s, data))
            total += len(data)
    return total, copies * len(payloads)


def bench_parse(projects: Path) -> dict:
    from nous_assets.capture.parser import parse_chunk

    paths = sorted(projects.rglob("*.jsonl"))
    blobs = [(str(p), p.read_bytes()) for p in paths]
    size = sum(len(b) for _, b in blobs)
    turns = 0
    t = time.perf_counter()
    for path, data in blobs:
        turns += len(parse_chunk(data, base_offset=0, path=path, project_id="bench").turns)
    seconds = time.perf_counter() - t
    return {"parse_mb": round(size / 1e6, 1), "parse_seconds": round(seconds, 2),
            "parse_mb_per_s": round(size / 1e6 / seconds, 1), "parse_turns": turns}


def bench_days(projects: Path) -> dict:
    """Discovery (our walk vs glob) and the every-timestamp scan of file days: cold (cache cleared; files in
    the OS page cache) and warm (unchanged files, as on every later day of a backfill or sensor tick)."""
    import glob

    from nous_assets.capture.days import clear_cache, file_days
    from nous_assets.capture.discovery import discover, walk

    pattern = str(projects / "**" / "*.jsonl")
    t = time.perf_counter()
    walked, _, _ = walk(pattern)
    walk_s = time.perf_counter() - t
    t = time.perf_counter()
    globbed = [p for p in glob.glob(pattern, recursive=True) if os.path.isfile(p)]
    glob_s = time.perf_counter() - t
    t = time.perf_counter()
    found = discover(pattern)
    discover_s = time.perf_counter() - t
    paths = [f.path for f in found.files]
    size = sum(p.stat().st_size for p in paths)
    clear_cache()
    t = time.perf_counter()
    days: set[str] = set()
    for p in paths:
        days |= file_days(p).days
    cold = time.perf_counter() - t
    t = time.perf_counter()
    for p in paths:
        file_days(p)
    warm = time.perf_counter() - t
    return {
        "walk_files": len(walked),
        "walk_seconds": round(walk_s, 4),
        "glob_seconds_same_pattern": round(glob_s, 4),
        "glob_matches": len(globbed),
        "discover_seconds_with_sniffing": round(discover_s, 3),
        "file_days_mb": round(size / 1e6, 1),
        "file_days_cold_seconds": round(cold, 3),
        "file_days_cold_mb_per_s": round(size / 1e6 / cold, 1),
        "file_days_warm_ms": round(warm * 1000, 2),
        "corpus_days": len(days),
    }


def bench_redact(projects: Path) -> dict:
    """Redaction throughput over what capture redacts: each turn's text, tool inputs and tool results."""
    from nous_assets.capture.parser import parse_chunk
    from nous_assets.capture.redact import redact_text

    texts = []
    for path in sorted(projects.rglob("*.jsonl")):
        for t in parse_chunk(path.read_bytes(), base_offset=0, path=str(path), project_id="bench").turns:
            texts += [t.text, *(u.input_json for u in t.tool_uses), *(r.text for r in t.tool_results)]
    size = sum(len(x.encode()) for x in texts)
    t = time.perf_counter()
    found = sum(redact_text(x).total for x in texts)
    seconds = time.perf_counter() - t
    return {"redact_mb": round(size / 1e6, 1), "redact_seconds": round(seconds, 2),
            "redact_mb_per_s": round(size / 1e6 / seconds, 1), "redactions": found}  # fmt: skip


def step_seconds(instance) -> dict[str, float]:
    """Wall seconds per pipeline step (asset), summed over every run the instance recorded: STEP_START to
    STEP_SUCCESS/STEP_FAILURE timestamps of the run's event log."""
    totals: dict[str, float] = {}
    for run in instance.get_runs():
        started: dict[str, float] = {}
        for entry in instance.all_logs(run.run_id):
            if not entry.is_dagster_event or not entry.step_key:
                continue
            kind = entry.get_dagster_event().event_type_value
            if kind == "STEP_START":
                started[entry.step_key] = entry.timestamp
            elif kind in ("STEP_SUCCESS", "STEP_FAILURE") and entry.step_key in started:
                elapsed = entry.timestamp - started.pop(entry.step_key)
                totals[entry.step_key] = totals.get(entry.step_key, 0.0) + elapsed
    return {key: round(value, 1) for key, value in sorted(totals.items(), key=lambda kv: -kv[1])}


def embedding_figures(instance) -> dict[str, int]:
    """Totals of the ``embeddings`` asset's materialization metadata over every run (chunks embedded, skipped,
    left for a later run)."""
    import dagster as dg

    keys = ("chunks_embedded", "chunks_skipped", "chunks_remaining", "memories_embedded", "memories_remaining")
    totals = dict.fromkeys(keys, 0)
    last_remaining = {"chunks_remaining": 0, "memories_remaining": 0, "chunks_skipped": 0}  # totals, not per run
    records = instance.fetch_materializations(dg.AssetKey("embeddings"), limit=10_000).records
    for newest, record in enumerate(records):  # newest first: the totals left by the last run come first
        meta = record.asset_materialization.metadata if record.asset_materialization else {}
        for key in (k for k in keys if k in meta):
            if key not in last_remaining:
                totals[key] += int(meta[key].value)
            elif newest == 0:
                last_remaining[key] = int(meta[key].value)
    return {**{k: v for k, v in totals.items() if k not in last_remaining}, **last_remaining}


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def bench_backfill(root: Path, embed_options: dict) -> dict:
    from dataclasses import replace

    import dagster as dg

    from nous_assets.defs.backfill import activity_days, run_days
    from nous_assets.defs.resources import NousResource
    from nous_assets.settings import load_settings
    from nous_assets.store.db import open_db

    settings = load_settings({
        **os.environ,
        "HOME": str(root / "home"),
        "CLAUDE_CONFIG_DIR": str(root / "home" / ".claude"),
        "NOUS_DATA_DIR": str(root / "data"),
        "NOUS_PROJECT_GLOB": str(root / "projects" / "**" / "*.jsonl"),
    })  # resolved once, handed to the runs through their resource
    # Every chunk must be embedded in the measured runs: no run may stop at its embedding budget.
    settings = replace(settings, embed=replace(settings.embed, run_budget_seconds=1e9, **embed_options))
    days = activity_days(settings, date(2020, 1, 1), date(2030, 1, 1))
    instance = dg.DagsterInstance.ephemeral()
    load_before = os.getloadavg()
    cpu_before = _cpu_seconds()
    t = time.perf_counter()
    results = run_days(days, resource=NousResource.of(settings), instance=instance)
    seconds = time.perf_counter() - t
    load_after = os.getloadavg()
    cpu = _cpu_seconds() - cpu_before
    phases = step_seconds(instance)
    embedded = embedding_figures(instance)
    conn = open_db(settings.db_path)
    sessions = conn.execute(
        "SELECT count(DISTINCT session_id) FROM learning_events WHERE event_type = 'LearningExtracted'"
    ).fetchone()[0]
    memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    conn.close()
    t2 = time.perf_counter()
    again = run_days(days, resource=NousResource.of(settings), instance=dg.DagsterInstance.ephemeral())
    rerun = time.perf_counter() - t2
    return {
        "backfill_days": len(days),
        "backfill_failed_days": sum(not r.success for r in results + again),
        "backfill_seconds": round(seconds, 1),
        "backfill_embed_options": {k: v for k, v in vars(settings.embed).items() if k != "run_budget_seconds"},
        "backfill_phase_seconds": phases,
        **{f"backfill_{key}": value for key, value in embedded.items()},
        "backfill_load_average_before_after": [round(load_before[0], 2), round(load_after[0], 2)],
        "backfill_cpu_seconds": round(cpu, 1),  # all threads: on a busy machine, the work done, not the wait
        "backfill_turns": sum(r.turns for r in results),
        "backfill_learnings": sum(r.learnings for r in results),
        "backfill_sessions_with_learnings": sessions,
        "backfill_memories": memories,
        "backfill_rerun_seconds_noop": round(rerun, 1),
        "backfill_rerun_new_learnings": sum(r.learnings for r in again),
        "backfill_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target-mb", type=float, default=200)
    parser.add_argument("--workdir")
    parser.add_argument("--no-backfill", action="store_true", help="skip the end-to-end backfill")
    parser.add_argument("--only-backfill", action="store_true", help="skip the parse, redaction and file-day figures")
    parser.add_argument("--precision", choices=("float32", "bfloat16", "int8"),
                        help="embed.precision for the backfill (default: the settings' default)")
    args = parser.parse_args()
    root = Path(args.workdir or tempfile.mkdtemp(prefix="nous-capture-bench-"))
    shutil.rmtree(root / "projects", ignore_errors=True)
    shutil.rmtree(root / "data", ignore_errors=True)
    corpus_bytes, files = build_corpus(root, args.target_mb)
    results = {
        "benchmark": "capture",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()},
        "corpus_mb": round(corpus_bytes / 1e6, 1),
        "corpus_files": files,
    }
    print(f"{'corpus_mb':40} {results['corpus_mb']}\n{'corpus_files':40} {files}")
    benches = [] if args.only_backfill else [
        lambda: bench_parse(root / "projects"), lambda: bench_redact(root / "projects"),
        lambda: bench_days(root / "projects")]
    embed_options = {"precision": args.precision} if args.precision else {}
    if not args.no_backfill:
        benches.append(lambda: bench_backfill(root, embed_options))
    for bench in benches:
        figures = bench()
        results.update(figures)
        for key, value in figures.items():
            print(f"{key:40} {value}", flush=True)
    save(results, "capture")


if __name__ == "__main__":
    main()

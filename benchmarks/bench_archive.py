"""Hot/cold tier benchmark: ``nous archive`` and ``nous restore`` of 1,000,000 events.

Loads a realistic event mix (bench_store's generator) recorded over two years, projects it, then moves
every event into the cold tier (two year segments), replays both tiers against the live projection
(optional), and restores the segments. Prints each figure and saves them to
``benchmarks/results/archive-<time>.json``; each phase runs in its own process so its peak RSS is its own.
The compression ratio is given against the segment's SQLite file and against the event stream (JSON lines).

    python benchmarks/bench_archive.py [--events 1000000] [--workdir DIR] [--skip-verify]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import zstandard
from bench_store import EventGenerator, peak_rss_mb
from bench_store import run_phase as run_store_phase
from results_file import save

from nous_assets.lifecycle import archive
from nous_assets.store.db import open_db
from nous_assets.store.log import archive as cold
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import rebuild

START = datetime(2024, 1, 1, tzinfo=UTC)
SPAN_SECONDS = 2 * 365 * 86400
CUTOFF = "2026-01-01T00:00:00.000000Z"


def _stream_digest(conn) -> dict:
    d = cold.digest(cold.live_stream(conn))
    stream_bytes = sum(len(cold.stream_line(r)) for r in cold.live_stream(conn))
    return {"count": d.count, "sha256": d.sha256, "stream_bytes": stream_bytes}


def phase_load(db: str, n: int) -> dict:
    conn = open_db(db, create=True)
    store = SqliteEventStore(conn)
    gen, chunk = EventGenerator(), 100_000
    t = time.perf_counter()
    for start in range(0, n, chunk):
        events = gen.take(min(chunk, n - start))
        timed = [
            dataclasses.replace(e, transaction_time=(START + timedelta(seconds=(start + i) * SPAN_SECONDS // n))
                                .strftime("%Y-%m-%dT%H:%M:%S.%fZ"))  # fmt: skip
            for i, e in enumerate(events)
        ]
        for i in range(0, len(timed), 5000):
            store.append_many(timed[i : i + 5000])
        print(f"  loaded {start + len(events):,} events", file=sys.stderr, flush=True)
    load_s = time.perf_counter() - t
    rebuild(conn)
    before = _stream_digest(conn)
    Path(db + ".digest.json").write_text(json.dumps(before))
    return {"events": before["count"], "load_seconds": round(load_s, 1), "event_stream_bytes": before["stream_bytes"],
            "cortex_db_bytes": os.path.getsize(db)}  # fmt: skip


def phase_archive(db: str, archive_dir: str) -> dict:
    conn = open_db(db)
    t = time.perf_counter()
    report = archive.archive(conn, Path(archive_dir), CUTOFF, scratch_dir=Path(db).parent)
    seconds = time.perf_counter() - t
    live = conn.execute("SELECT count(*) FROM learning_events").fetchone()[0]
    raw_bytes = 0
    for segment in report.segments:
        with (Path(archive_dir) / segment.archive_path).open("rb") as fh:
            reader = zstandard.ZstdDecompressor().stream_reader(fh)
            while chunk := reader.read(1 << 20):
                raw_bytes += len(chunk)
    compressed = sum(s.compressed_bytes for s in report.segments)
    stream_bytes = json.loads(Path(db + ".digest.json").read_text())["stream_bytes"]
    conn.execute("VACUUM")
    return {
        "archive_events": report.events,
        "archive_segments": len(report.segments),
        "archive_seconds": round(seconds, 1),
        "archive_events_per_s": round(report.events / seconds),
        "live_events_left": live,
        "segment_sqlite_bytes": raw_bytes,
        "compressed_bytes": compressed,
        "compression_ratio_vs_sqlite": round(raw_bytes / compressed, 2),
        "compression_ratio_vs_event_stream": round(stream_bytes / compressed, 2),
        "cortex_db_bytes_after_vacuum": os.path.getsize(db),
        "archive_peak_rss_mb": round(peak_rss_mb(), 1),
    }


def phase_verify(db: str, archive_dir: str) -> dict:
    conn = open_db(db)
    t = time.perf_counter()
    report = archive.verify_all_tiers(conn, Path(archive_dir), Path(db).parent, None)
    seconds = time.perf_counter() - t
    return {"verify_all_tiers_ok": report.ok, "verify_events": report.events_replayed,
            "verify_seconds": round(seconds, 1), "verify_peak_rss_mb": round(peak_rss_mb(), 1)}  # fmt: skip


def phase_restore(db: str, archive_dir: str) -> dict:
    conn = open_db(db)
    t = time.perf_counter()
    restored = sum(
        archive.restore(conn, Path(archive_dir), s.archive_path, scratch_dir=Path(db).parent).inserted
        for s in cold.segments(conn, include_restored=False)
    )
    seconds = time.perf_counter() - t
    after = _stream_digest(conn)
    before = json.loads(Path(db + ".digest.json").read_text())
    return {
        "restore_events": restored,
        "restore_seconds": round(seconds, 1),
        "restore_events_per_s": round(restored / seconds),
        "round_trip_byte_identical": (after["count"], after["sha256"]) == (before["count"], before["sha256"]),
        "restore_peak_rss_mb": round(peak_rss_mb(), 1),
    }


PHASES = {"load": phase_load, "archive": phase_archive, "verify": phase_verify, "restore": phase_restore}


def run_phase(name: str, *args: str) -> dict:
    return run_store_phase(name, *args, script=__file__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--events", type=int, default=1_000_000, help="events to archive and restore")
    parser.add_argument("--workdir", help="where to put the database and archive (default: a temp dir)")
    parser.add_argument("--skip-verify", action="store_true", help="skip the replay of both tiers")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("args", nargs="*", help=argparse.SUPPRESS)
    ns = parser.parse_args()
    if ns.phase:
        typed = [int(a) if a.isdigit() else a for a in ns.args]
        print(json.dumps(PHASES[ns.phase](*typed)))
        return

    workdir = Path(ns.workdir or tempfile.mkdtemp(prefix="nous-bench-archive-"))
    workdir.mkdir(parents=True, exist_ok=True)
    db, archive_dir = str(workdir / "cortex.db"), str(workdir / "archive")
    results: dict = {
        "benchmark": "archive",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "host": {"python": platform.python_version(), "machine": platform.machine(), "cpus": os.cpu_count()},
        "zstd_level": archive.ZSTD_LEVEL,
    }
    steps = [("load", db, str(ns.events)), ("archive", db, archive_dir)]
    steps += [] if ns.skip_verify else [("verify", db, archive_dir)]
    steps += [("restore", db, archive_dir)]
    for name, *args in steps:
        print(f"== {name}", file=sys.stderr, flush=True)
        figures = run_phase(name, *args)
        results[name] = figures
        for key, value in figures.items():
            print(f"{key:40} {value}", flush=True)
    save(results, "archive")


if __name__ == "__main__":
    main()

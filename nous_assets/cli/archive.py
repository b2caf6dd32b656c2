"""The hot/cold tiers of the event log: ``nous archive`` and ``nous restore``."""

from __future__ import annotations

import argparse
import json

from nous_assets.cli.common import AddCommand, Progress, open_store
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Policy


def cmd_archive(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.lifecycle import archive as lifecycle
    from nous_assets.store.sqlite.projection import project

    with open_store(settings) as conn:
        if args.list:
            return _print_listing(lifecycle.listing(conn), args.json)
        cutoff = lifecycle.parse_cutoff(args.before or f"{settings.thresholds.hot_tier_days}d")
        bar = Progress("project")
        project(conn, policy=Policy.of(settings.thresholds), progress=lambda s: bar.update(s.events))
        bar = Progress("archive")
        report = lifecycle.archive(
            conn, settings.archive_dir, cutoff, scratch_dir=settings.db_path.parent,
            progress=lambda what, n: bar.update(n, what),
        )  # fmt: skip
        bar.done(f"{report.events:,} events recorded before {cutoff[:19]}Z moved to {len(report.segments)} segment(s)")
    if report.removed_partial:
        print(f"removed {len(report.removed_partial)} partial file(s) of an interrupted run")
    for name in report.adopted:
        print(f"completed the interrupted move of {name}")
    for s in report.segments:
        print(f"  {s.archive_path}: events {s.min_event_id:,}..{s.max_event_id:,} ({s.event_count:,}), "
              f"{s.compressed_bytes:,} bytes, sha256 {s.stream_checksum_sha256[:16]}…")  # fmt: skip
    if args.json:
        print(json.dumps({"cutoff": cutoff, "events": report.events, "adopted": report.adopted,
                          "segments": [s.__dict__ for s in report.segments]}))  # fmt: skip
    return 0


def _print_listing(segments: list, as_json: bool) -> int:
    if as_json:
        print(json.dumps([s.__dict__ for s in segments], indent=2))
        return 0
    if not segments:
        print("no archive segments: every event is in the live log")
    for s in segments:
        state = f"restored {s.restored_at[:10]}" if s.restored_at else "cold"
        print(f"{s.archive_path}: events {s.min_event_id:,}..{s.max_event_id:,} ({s.event_count:,}), "
              f"{s.compressed_bytes:,} bytes, {state}")  # fmt: skip
    return 0


def cmd_restore(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.lifecycle import archive as lifecycle

    given = args.archive or args.archive_opt
    if not given:
        from nous_assets.errors import NousError

        raise NousError(
            "name the segment to restore: `nous restore cortex-archive-2025.db.zst` (see `nous archive --list`)"
        )
    with open_store(settings) as conn:
        report = lifecycle.restore(conn, settings.archive_dir, given, scratch_dir=settings.db_path.parent)
    again = "" if report.inserted else " (already restored; nothing changed)"
    print(f"restored {report.archive_path}: checksum verified, {report.inserted:,} of {report.event_count:,} "
          f"events merged back into the live log{again}")  # fmt: skip
    return 0


def register(add: AddCommand) -> None:
    p = add(
        "archive",
        cmd_archive,
        "Move events recorded before a cutoff from the live log into zstd-compressed year segments "
        "(cortex-archive-YYYY.db.zst in the archive dir). The projection keeps them; `nous replay "
        "--include-archives` reads them; safe to interrupt and rerun.",
    )
    p.add_argument("--before", metavar="AGE|DATE",
                   help="cutoff by recorded time: an age such as 90d or 12w, or an ISO date "
                        "(default: thresholds.hot_tier_days, 90 days)")  # fmt: skip
    p.add_argument("--list", action="store_true", help="list the archive segments instead of archiving")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(
        "restore",
        cmd_restore,
        "Merge an archive segment back into the live log after verifying its SHA-256 (idempotent).",
    )
    p.add_argument("archive", nargs="?", metavar="ARCHIVE", help="segment file name (in the archive dir) or path")
    p.add_argument("--archive", dest="archive_opt", metavar="ARCHIVE", help="the same, as an option")

"""Commands on the store itself: init, status, project, replay, memories, config, migrate-legacy, queue."""

from __future__ import annotations

import argparse
import json
import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from nous_assets.cli.common import (
    EXIT_ERROR,
    PROJECT_HELP,
    AddCommand,
    Progress,
    canonical,
    open_store,
    project_arg,
)
from nous_assets.errors import NousError
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Policy


def cmd_init(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.filemodes import make_private_dir
    from nous_assets.store.db import LATEST_VERSION, connect, migrate

    make_private_dir(settings.data_dir)
    make_private_dir(settings.archive_dir)
    with closing(connect(settings.db_path, create=True, busy_timeout_ms=settings.db_busy_timeout_ms)) as conn:
        applied = migrate(conn)
    what = f"applied migrations {applied}" if applied else "schema already up to date"
    print(f"initialised {settings.db_path} (schema version {LATEST_VERSION}; {what})")
    tightened = _tighten_private(settings)
    if tightened:
        print(f"made {tightened} file(s)/dir(s) left readable by others by an older version private (0600/0700)")
    return 0


def _tighten_private(settings: Settings) -> int:
    """Remove group/other access from everything Nous keeps (data dir, database, archive)."""
    from nous_assets.filemodes import database_files, tighten

    return tighten([settings.data_dir, settings.archive_dir, *database_files(settings.db_path)])


def status_report(settings: Settings) -> dict[str, Any]:
    """What ``nous status`` shows: paths, schema version, event/projection progress and row counts."""
    from nous_assets.store.db import LATEST_VERSION, connect, schema_version, table_counts
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.sqlite.projection import get_checkpoint

    report: dict[str, Any] = {
        "db_path": str(settings.db_path),
        "data_dir": str(settings.data_dir),
        "config_file": str(settings.config_path),
        "project_glob": settings.project_glob,
        "supported_schema_version": LATEST_VERSION,
    }
    if not settings.db_path.exists():
        report["initialised"] = False
        return report
    with closing(connect(settings.db_path, busy_timeout_ms=settings.db_busy_timeout_ms)) as conn:
        version = schema_version(conn)
        report.update(initialised=version > 0, schema_version=version)
        if version == LATEST_VERSION:
            last = SqliteEventStore(conn).last_event_id()
            checkpoint = get_checkpoint(conn)
            report.update(
                counts=table_counts(conn),
                last_event_id=last,
                projection_checkpoint=checkpoint,
                projection_lag=last - checkpoint,
            )
    return report


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    report = status_report(settings)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"database:        {report['db_path']}")
    if not report.get("initialised"):
        print("                 (not initialised — run `nous init`)")
        return 0
    print(f"schema version:  {report['schema_version']} (this build: {report['supported_schema_version']})")
    if report["schema_version"] < report["supported_schema_version"]:
        print("                 (older schema — run `nous init` to upgrade)")
        return 0
    print(f"data dir:        {report['data_dir']}")
    print(f"config file:     {report['config_file']}")
    print(f"transcripts:     {report['project_glob']}")
    print(
        f"events:          {report['last_event_id']:,} (projected through {report['projection_checkpoint']:,}, "
        f"lag {report['projection_lag']:,})"
    )
    print("tables:")
    for name, count in report["counts"].items():
        print(f"  {name:<26}{count:>12,}")
    return 0


def cmd_project(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store.sqlite.projection import project

    with open_store(settings) as conn:
        bar = Progress("project")
        stats = project(conn, policy=Policy.of(settings.thresholds), progress=lambda s: bar.update(s.events))
        bar.done(f"{stats.events:,} events, {stats.upserted:,} memories written, {stats.deleted:,} archived")
    return 0


def cmd_replay(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.lifecycle import archive
    from nous_assets.store.sqlite.projection import rebuild, verify

    policy = Policy.of(settings.thresholds)
    with open_store(settings) as conn:
        cold = archive.cold_event_count(conn)
        if cold and not args.include_archives:
            raise NousError(
                f"{cold:,} events are in cold archive segments (`nous archive --list`): a replay of the live log "
                "alone would drop their memories; add --include-archives"
            )
        if args.verify:
            report = (
                archive.verify_all_tiers(conn, settings.archive_dir, settings.db_path.parent, policy)
                if args.include_archives
                else verify(conn, policy=policy, scratch_dir=settings.data_dir)
            )
            print(
                f"replayed {report.events_replayed:,} events (through event {report.checkpoint:,}) into a scratch "
                f"database: {report.memories:,} memories"
            )
            if report.ok:
                print("OK: the live projection equals a full replay")
                return 0
            print(f"MISMATCH: {len(report.differences)} difference(s) between live projection and replay:")
            for line in report.differences:
                print(f"  {line}")
            return EXIT_ERROR
        bar = Progress("replay")
        if args.include_archives:
            stats = archive.rebuild_all_tiers(
                conn, settings.archive_dir, settings.db_path.parent, policy, progress=lambda s: bar.update(s.events)
            )
        else:
            stats = rebuild(conn, policy=policy, progress=lambda s: bar.update(s.events))
        bar.done(f"rebuilt projection from {stats.events:,} events ({stats.orphans:,} ignored)")
    return 0


def cmd_memories(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.lifecycle.archive import cold_event_count
    from nous_assets.store.log.temporal import query_memories

    with open_store(settings) as conn:
        if args.as_of and (cold := cold_event_count(conn)):
            raise NousError(
                f"--as-of replays the live event log, and {cold:,} events are in cold archive segments: "
                "`nous restore` them first (`nous archive --list` names them)"
            )
        try:
            memories = query_memories(
                conn, as_of=args.as_of, as_at=args.as_at, project_id=canonical(conn, args.project),
                policy=Policy.of(settings.thresholds),
            )  # fmt: skip
        except ValueError as exc:
            raise NousError(str(exc)) from None
    memories.sort(key=lambda m: (-m.reinforcement_score, -m.id))
    shown = memories[: args.limit] if args.limit else memories
    if args.json:
        print(
            json.dumps(
                [
                    {**{k: getattr(m, k) for k in m.__slots__ if k != "concepts"}, "concepts": sorted(m.concepts)}
                    for m in shown
                ],
                indent=2,
            )
        )
        return 0
    for m in shown:
        window = f"{(m.valid_from or '?')[:10]} → {(m.valid_until or 'now')[:10]}"
        print(
            f"#{m.id} [{m.type}/{m.kind or '-'} · {m.status}] score={m.reinforcement_score:.2f} valid {window} "
            f"project={m.project_id}"
        )
        print(f"    {m.content}")
        if m.concepts:
            print(f"    concepts: {', '.join(sorted(m.concepts))}")
    print(f"{len(shown)} of {len(memories)} memories", file=sys.stderr)
    return 0


def cmd_config(settings: Settings, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    data = asdict(settings)
    for secret in ("openai_api_key", "server_token"):  # never print a credential, only that one is set
        if data.get(secret):
            data[secret] = "(set)"
    from nous_assets.store.backend import engine

    if not engine(settings).capabilities.one_tenant:
        from nous_assets.store.pg.db import redact_dsn

        data["pg_dsn"] = redact_dsn(settings.pg_dsn or "")
    else:  # team-mode settings take no effect on a local cortex.db
        for key in ("pg_dsn", "tenant_id"):
            data.pop(key, None)
    if not settings.server_url:  # push/pull settings take effect only with a server
        data.pop("server_url", None)
        data.pop("server_token", None)
    print(json.dumps(data, indent=2, default=str))
    return 0


def cmd_migrate_legacy(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.capture.legacy import migrate_legacy
    from nous_assets.store.sqlite.projection import project

    paths = [Path(p).expanduser() for p in args.paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise NousError(f"no such file: {', '.join(missing)}")
    with open_store(settings, create=True) as conn:
        report = migrate_legacy(conn, paths)
        project(conn, policy=Policy.of(settings.thresholds))
    print(
        f"imported {report.imported:,} legacy entries ({report.already_present:,} already present), "
        f"{len(report.quarantined):,} quarantined"
    )
    if report.quarantined:
        qdir = settings.data_dir / "quarantine"
        qdir.mkdir(parents=True, exist_ok=True)
        qfile = qdir / "legacy.jsonl"
        with qfile.open("a", encoding="utf-8") as fh:
            for q in report.quarantined:
                fh.write(json.dumps(q) + "\n")
        for q in report.quarantined[:10]:
            print(f"  {q['file']}:{q['line']}: {q['reason']}", file=sys.stderr)
        print(f"quarantined lines recorded in {qfile}", file=sys.stderr)
    return 0


def cmd_queue(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store.sqlite import queue

    with open_store(settings) as conn:
        if args.retry_dead:
            n = queue.requeue_dead_letter(conn)
            print(f"re-queued {n} dead-lettered item(s)")
        counts = queue.counts(conn)
        print(
            "ingest queue: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            if counts
            else "ingest queue: empty"
        )
        for item in queue.items(conn, status="dead_letter", limit=20) + queue.items(conn, status="failed", limit=20):
            print(
                f"  #{item.ingest_id} {item.status} tries={item.retry_count} {item.transcript_path} "
                f"({item.payload.get('date')}): {item.last_error}"
            )
    return 0



def register(add: AddCommand) -> None:
    """The store commands' subparsers (help texts are what ``nous COMMAND --help`` shows)."""
    add("init", cmd_init, "Create the data directory and cortex.db, or upgrade its schema (idempotent).")
    p = add("status", cmd_status, "Show the database path, schema version, event/projection progress and row counts.")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add("project", cmd_project, "Apply new events to the memories projection (incremental, from its checkpoint).")
    p = add("replay", cmd_replay, "Rebuild the projection from the full event log, or verify it against a replay.")
    p.add_argument(
        "--verify",
        action="store_true",
        help="replay into a scratch database and report any difference from the live projection "
        "(exit 1 on mismatch); changes nothing",
    )
    p.add_argument(
        "--include-archives",
        action="store_true",
        help="replay the cold archive segments (`nous archive`) with the live log, in event_id order; each "
        "segment's checksum is verified first",
    )
    p = add("memories", cmd_memories, "List memories, optionally as of a transaction time and/or as at a valid time.")
    p.add_argument("--as-of", metavar="T", help="what the system knew at T (ISO-8601 transaction time)")
    p.add_argument("--as-at", metavar="T", help="only memories valid at T (ISO-8601 valid time)")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="only this project's memories; " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--limit", type=int, default=50, help="show at most N (0 = all; default 50)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add("config", cmd_config, "Print the effective settings (environment + config file).")

    p = add(
        "migrate-legacy",
        cmd_migrate_legacy,
        "Import Nous v1 engram.jsonl / cortex.jsonl files as "
        "LearningExtracted events (idempotent; bad lines quarantined).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="legacy JSONL files")
    p = add("queue", cmd_queue, "Show the ingest queue (failed and dead-lettered items with their errors).")
    p.add_argument("--retry-dead", action="store_true", help="move dead-lettered items back to pending")

"""Capture layer: transcripts -> the day's lake partition -> learning events in cortex.db."""

from dataclasses import replace

import dagster as dg

from nous_assets.capture.scan import (
    PartitionScan,
    capture_day,
    promote_cursors,
    read_manifest,
    record_file_progress,
)
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.errors import NousError, storage_error
from nous_assets.extract.registry import get_extractor
from nous_assets.extract.worker import drain, enqueue_partition, incomplete_paths
from nous_assets.store.ingest.floor import get_floor
from nous_assets.store.sqlite import queue

SOURCE_TAG = "nous/source"
GROUP = "capture"


def run_source(context: dg.AssetExecutionContext) -> str:
    """fs_watch / fs_reconcile from the sensor and schedule; anything else is a historical backfill."""
    tags = context.run.tags
    source = tags.get(SOURCE_TAG)
    if source in ("fs_watch", "fs_reconcile", "historical_backfill"):
        return source
    return "historical_backfill"


@daily_asset(
    group_name=GROUP,
    kinds={"parquet", "polars"},
    description="Parsed, de-duplicated and redacted turns of the day's Claude Code transcripts "
    "(lake/transcripts/date=…/turns.parquet), with quarantined lines.",
)
def transcripts(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    settings = nous.settings()
    totals = {
        "files": 0,
        "sessions": 0,
        "turns": 0,
        "quarantined": 0,
        "duplicates": 0,
        "redactions": 0,
        "subagent_links": 0,
        "lines_with_replaced_bytes": 0,
    }
    reasons: dict[str, int] = {}
    failed: dict[str, str] = {}
    skipped = loops = repeated = 0
    with nous.connection() as conn:
        for date in context.partition_keys:
            try:
                scan = capture_day(settings, conn, date)
            except Exception as exc:
                if storage_error(exc) is not None:
                    raise  # read-only, full or locked storage fails every day alike: stop with the reason
                # one bad day must not stop a range: its files keep their cursors, so the next run retries it
                failed[date] = f"{type(exc).__name__}: {exc}"
                context.log.error(f"{date}: not ingested ({failed[date]}); it is retried by the next run")
                continue
            totals["files"] += sum(1 for f in scan.files if f.turns_on_date)
            totals["sessions"] += len(scan.sessions)
            totals["turns"] += len(scan.turns)
            totals["quarantined"] += len(scan.quarantined)
            totals["duplicates"] += scan.duplicates
            totals["redactions"] += sum(scan.redactions.values())
            totals["subagent_links"] += len(scan.agent_links)
            for q in scan.quarantined:
                reasons[q.reason.split(":")[0]] = reasons.get(q.reason.split(":")[0], 0) + 1
            totals["lines_with_replaced_bytes"] += scan.repaired_lines
            skipped, loops, repeated = len(scan.skipped), scan.symlink_loops, scan.duplicate_paths
            context.log.info(
                f"{date}: {len(scan.turns)} turns from {len(scan.files)} files, "
                f"{len(scan.quarantined)} quarantined lines"
            )
    if loops or repeated:
        context.log.warning(
            f"discovery: {loops} symlink loop(s) not followed, {repeated} path(s) reached twice read once"
        )
    if failed and len(failed) == len(context.partition_keys):
        raise NousError(f"no day could be ingested: {next(iter(failed.values()))}")
    return dg.MaterializeResult(
        metadata={
            **{k: dg.MetadataValue.int(v) for k, v in totals.items()},
            "failed_days": dg.MetadataValue.json(failed),
            "non_transcript_files_skipped": dg.MetadataValue.int(skipped),
            "symlink_loops_skipped": dg.MetadataValue.int(loops),
            "repeated_paths_skipped": dg.MetadataValue.int(repeated),
            "quarantine_reasons": dg.MetadataValue.json(reasons),
            "lake_dir": dg.MetadataValue.path(str(settings.lake_dir / "transcripts")),
        }
    )


def above_floor(scan: PartitionScan, floor: str | None) -> PartitionScan:
    """The scan without days before the ingest floor among each file's new-bytes days.

    Those days are only ingested when asked for (``nous backfill --since``), so they must not hold a file's
    cursor back: a session file that started before the floor would otherwise look new to every sensor scan.
    """
    if floor is None:
        return scan
    files = [replace(f, region_ends={d: e for d, e in f.region_ends.items() if d >= floor}) for f in scan.files]
    return replace(scan, files=files)


@daily_asset(
    group_name=GROUP,
    deps=[transcripts],
    kinds={"sqlite"},
    description="Learnings extracted from the day's turns through the durable ingest queue, appended to "
    "the immutable learning_events log (idempotent). First the turns' project identity evidence is recorded "
    "and every cwd, session and folder re-resolved to its repository (project_aliases); then Claude Code's "
    "auto-memory notes (projects/*/memory/*.md) come in as learnings with their file and line.",
)
def learning_events(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    import os

    from nous_assets.capture.lake import read_turns
    from nous_assets.extract.auto_memory import ingest_auto_memory
    from nous_assets.identity import update as identity

    settings = nous.settings()
    extractor = get_extractor(settings)
    source = run_source(context)
    enqueued = already = 0
    with nous.connection() as conn:
        for date in context.partition_keys:
            turns = read_turns(settings.lake_dir, date)
            identity.observe(conn, turns)
            new, old = enqueue_partition(conn, date, turns, source=source, extractor_version=extractor.version)
            enqueued, already = enqueued + new, already + old
        ident = identity.refresh(conn, lake_dir=settings.lake_dir)  # projects are known before extraction
        stats = drain(
            conn,
            settings,
            extractor,
            worker_id=f"dagster-{context.run.run_id[:8]}",
            reextract=settings.reextract_on_version_change,
        )
        notes = ingest_auto_memory(conn, settings.claude_config_dir, source=source, env=os.environ)
        promoted = 0
        floor = get_floor(conn)
        for date in context.partition_keys:
            scan = above_floor(read_manifest(settings.lake_dir, date), floor)
            blocked = incomplete_paths(conn, date)
            record_file_progress(conn, scan, {f.path for f in scan.files} - blocked)
            promoted += len(promote_cursors(conn, scan))
        counts = queue.counts(conn)
    for err in stats.errors[:5]:
        context.log.warning(f"extraction failed (will retry / dead-letter): {err}")
    return dg.MaterializeResult(
        metadata={
            "extractor": dg.MetadataValue.text(extractor.version),
            "source": dg.MetadataValue.text(source),
            "queue_items_enqueued": dg.MetadataValue.int(enqueued),
            "queue_items_already_known": dg.MetadataValue.int(already),
            "queue_items_completed": dg.MetadataValue.int(stats.completed),
            "queue_items_failed": dg.MetadataValue.int(stats.failed),
            "queue_items_dead_lettered": dg.MetadataValue.int(stats.dead_lettered),
            "learnings": dg.MetadataValue.int(stats.learnings),
            "events_written": dg.MetadataValue.int(stats.events_written),
            "corrections_weakening_memories": dg.MetadataValue.int(stats.weakened),
            "already_processed_skipped": dg.MetadataValue.int(stats.skipped_processed),
            "cursors_promoted": dg.MetadataValue.int(promoted),
            "queue_status": dg.MetadataValue.json(counts),
            "identity_projects": dg.MetadataValue.int(ident.projects),
            "identity_aliases_changed": dg.MetadataValue.int(ident.aliases_changed),
            "identity_memories_moved": dg.MetadataValue.int(ident.memories_moved),
            "auto_memory_files": dg.MetadataValue.int(notes.files),
            "auto_memory_notes_added": dg.MetadataValue.int(notes.added),
            "auto_memory_notes_closed": dg.MetadataValue.int(notes.superseded + notes.archived),
            "auto_memory": dg.MetadataValue.text(notes.skipped or "read"),
        }
    )


@dg.asset_check(asset=transcripts, description="Every lake partition satisfies the turns schema (pandera).")
def transcripts_schema(nous: NousResource) -> dg.AssetCheckResult:
    import pandera.polars as pa
    import polars as pl

    from nous_assets.capture.lake import TurnsSchema

    root = nous.settings().lake_dir / "transcripts"
    failures: dict[str, str] = {}
    checked = rows = 0
    for path in sorted(root.glob("date=*/turns.parquet")):
        frame = pl.read_parquet(path)
        checked, rows = checked + 1, rows + frame.height
        if frame.height:
            try:
                TurnsSchema.validate(frame, lazy=True)
            except pa.errors.SchemaErrors as exc:
                failures[path.parent.name] = str(exc)[:500]
    return dg.AssetCheckResult(
        passed=not failures,
        metadata={"partitions_checked": checked, "rows": rows, "failures": dg.MetadataValue.json(failures)},
    )

"""Capture layer: transcripts -> the day's lake partition -> learning events in cortex.db."""

import dagster as dg

from nous_assets.capture.lake import write_partition
from nous_assets.capture.scan import (
    promote_cursors,
    read_manifest,
    record_file_progress,
    scan_partition,
    write_manifest,
)
from nous_assets.defs.partitions import daily
from nous_assets.defs.resources import NousResource
from nous_assets.extract.registry import get_extractor
from nous_assets.extract.runner import drain, enqueue_partition, incomplete_paths
from nous_assets.store import queue

SOURCE_TAG = "nous/source"
GROUP = "capture"


def run_source(context: dg.AssetExecutionContext) -> str:
    """fs_watch / fs_reconcile from the sensor and schedule; anything else is a historical backfill."""
    tags = context.run.tags
    source = tags.get(SOURCE_TAG)
    if source in ("fs_watch", "fs_reconcile", "historical_backfill"):
        return source
    return "historical_backfill"


@dg.asset(
    partitions_def=daily,
    backfill_policy=dg.BackfillPolicy.single_run(),
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
    skipped = loops = repeated = 0
    with nous.connection() as conn:
        for date in context.partition_keys:
            scan = scan_partition(settings, conn, date)
            write_partition(
                settings.lake_dir,
                date,
                scan.turns,
                scan.quarantined,
                scan.agent_links,
                forget_projects=settings.opt_out_projects,
            )
            write_manifest(settings.lake_dir, scan)
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
    return dg.MaterializeResult(
        metadata={
            **{k: dg.MetadataValue.int(v) for k, v in totals.items()},
            "non_transcript_files_skipped": dg.MetadataValue.int(skipped),
            "symlink_loops_skipped": dg.MetadataValue.int(loops),
            "repeated_paths_skipped": dg.MetadataValue.int(repeated),
            "quarantine_reasons": dg.MetadataValue.json(reasons),
            "lake_dir": dg.MetadataValue.path(str(settings.lake_dir / "transcripts")),
        }
    )


@dg.asset(
    partitions_def=daily,
    backfill_policy=dg.BackfillPolicy.single_run(),
    group_name=GROUP,
    deps=[transcripts],
    kinds={"sqlite"},
    description="Learnings extracted from the day's turns through the durable ingest queue, appended to "
    "the immutable learning_events log (idempotent).",
)
def learning_events(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    from nous_assets.capture.lake import read_turns

    settings = nous.settings()
    extractor = get_extractor(settings)
    source = run_source(context)
    enqueued = already = 0
    with nous.connection() as conn:
        for date in context.partition_keys:
            new, old = enqueue_partition(
                conn, date, read_turns(settings.lake_dir, date), source=source, extractor_version=extractor.version
            )
            enqueued, already = enqueued + new, already + old
        stats = drain(
            conn,
            settings,
            extractor,
            worker_id=f"dagster-{context.run.run_id[:8]}",
            reextract=settings.reextract_on_version_change,
        )
        promoted = 0
        for date in context.partition_keys:
            scan = read_manifest(settings.lake_dir, date)
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

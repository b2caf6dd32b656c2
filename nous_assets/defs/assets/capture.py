"""Capture layer: transcripts -> the day's lake partition -> learning events in cortex.db."""

import dagster as dg

from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource
from nous_assets.pipeline import capture as steps
from nous_assets.pipeline.run import IngestRun
from nous_assets.store.db import Connection
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


def ingest_run(context: dg.AssetExecutionContext, nous: NousResource, conn: Connection) -> IngestRun:
    """The domain steps' view of a run: settings, connection, the run's days, its source and worker id."""
    return IngestRun(nous.settings(), conn, list(context.partition_keys), run_source(context),
                     f"dagster-{context.run.run_id[:8]}")  # fmt: skip


@daily_asset(
    group_name=GROUP,
    kinds={"parquet", "polars"},
    description="Parsed, de-duplicated and redacted turns of the day's Claude Code transcripts "
    "(lake/transcripts/date=…/turns.parquet), with quarantined lines.",
)
def transcripts(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    settings = nous.settings()
    with nous.connection() as conn:
        stats = steps.capture(ingest_run(context, nous, conn))
    for scan in stats.scans:
        context.log.info(
            f"{scan.date}: {len(scan.turns)} turns from {len(scan.files)} files, "
            f"{len(scan.quarantined)} quarantined lines"
        )
    for date, reason in stats.failed.items():
        context.log.error(f"{date}: not ingested ({reason}); it is retried by the next run")
    last = stats.scans[-1] if stats.scans else None
    skipped, loops, repeated = (len(last.skipped), last.symlink_loops, last.duplicate_paths) if last else (0, 0, 0)
    if loops or repeated:
        context.log.warning(
            f"discovery: {loops} symlink loop(s) not followed, {repeated} path(s) reached twice read once"
        )
    stats.require_some_day(list(context.partition_keys))
    return dg.MaterializeResult(
        metadata={
            **{k: dg.MetadataValue.int(v) for k, v in stats.totals().items()},
            "failed_days": dg.MetadataValue.json(stats.failed),
            "non_transcript_files_skipped": dg.MetadataValue.int(skipped),
            "symlink_loops_skipped": dg.MetadataValue.int(loops),
            "repeated_paths_skipped": dg.MetadataValue.int(repeated),
            "quarantine_reasons": dg.MetadataValue.json(stats.quarantine_reasons()),
            "lake_dir": dg.MetadataValue.path(str(settings.lake_dir / "transcripts")),
        }
    )


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
    with nous.connection() as conn:
        run = ingest_run(context, nous, conn)
        extracted = steps.extract(run)
        notes = steps.auto_memory(run)
        promoted = steps.promote(run)
        counts = queue.counts(conn)
    stats, ident = extracted.drain, extracted.identity
    for err in stats.errors[:5]:
        context.log.warning(f"extraction failed (will retry / dead-letter): {err}")
    return dg.MaterializeResult(
        metadata={
            "extractor": dg.MetadataValue.text(extracted.extractor),
            "source": dg.MetadataValue.text(run.source),
            "queue_items_enqueued": dg.MetadataValue.int(extracted.enqueued),
            "queue_items_already_known": dg.MetadataValue.int(extracted.already_known),
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

"""The ingest half of the step list: capture days into the lake, extract their learnings, take Claude Code's
auto-memory notes, promote the file cursors. A file's cursor only moves once its lines were extracted, so a
run that stops anywhere in between is finished by the next one."""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

from nous_assets.capture.lake import read_turns
from nous_assets.capture.scan import PartitionScan, capture_day, promote_cursors, read_manifest, record_file_progress
from nous_assets.errors import NousError, storage_error
from nous_assets.extract.auto_memory import IngestStats as AutoMemoryStats
from nous_assets.extract.auto_memory import ingest_auto_memory
from nous_assets.extract.registry import get_extractor
from nous_assets.extract.worker import DrainStats, drain, enqueue_partition, incomplete_paths
from nous_assets.identity import update as identity
from nous_assets.identity.update import IdentityStats
from nous_assets.pipeline.run import IngestRun
from nous_assets.store.ingest.floor import get_floor


@dataclass
class CaptureStats:
    """The scans of the days captured (in order) and the days that failed, with the reason."""

    scans: list[PartitionScan] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)

    @property
    def done(self) -> list[str]:
        return [s.date for s in self.scans]

    def totals(self) -> dict[str, int]:
        """The figures a run reports, summed over its days."""
        return {
            "files": sum(1 for s in self.scans for f in s.files if f.turns_on_date),
            "sessions": sum(len(s.sessions) for s in self.scans),
            "turns": sum(len(s.turns) for s in self.scans),
            "quarantined": sum(len(s.quarantined) for s in self.scans),
            "duplicates": sum(s.duplicates for s in self.scans),
            "redactions": sum(sum(s.redactions.values()) for s in self.scans),
            "subagent_links": sum(len(s.agent_links) for s in self.scans),
            "lines_with_replaced_bytes": sum(s.repaired_lines for s in self.scans),
        }

    def quarantine_reasons(self) -> dict[str, int]:
        reasons: dict[str, int] = {}
        for q in (q for s in self.scans for q in s.quarantined):
            reasons[q.reason.split(":")[0]] = reasons.get(q.reason.split(":")[0], 0) + 1
        return reasons

    def require_some_day(self, days: list[str]) -> None:
        """One bad day does not stop a range; a range where no day could be ingested fails with the first reason."""
        if self.failed and len(self.failed) == len(days):
            raise NousError(f"no day could be ingested: {next(iter(self.failed.values()))}")


def capture(run: IngestRun) -> CaptureStats:
    """Parse, de-duplicate and redact each day's transcripts into its lake partition.

    A day that fails keeps its files' cursors (the next run retries it); storage failures (read-only, full,
    locked) fail every day alike, so they stop the run with the reason.
    """
    stats = CaptureStats()
    for day in run.days:
        try:
            stats.scans.append(capture_day(run.settings, run.conn, day))
        except Exception as exc:
            if storage_error(exc) is not None:
                raise
            stats.failed[day] = f"{type(exc).__name__}: {exc}"
    return stats


@dataclass
class ExtractStats:
    """Queue items enqueued (new, already known), project identity re-resolved, the drain's figures."""

    extractor: str
    enqueued: int = 0
    already_known: int = 0
    turns: int = 0
    identity: IdentityStats = field(default_factory=IdentityStats)
    drain: DrainStats = field(default_factory=DrainStats)


def extract(run: IngestRun) -> ExtractStats:
    """The days' turns into the durable queue, every cwd re-resolved to its repository (so projects are known
    before extraction), then the queue drained by the configured extractor into the event log."""
    extractor = get_extractor(run.settings)
    stats = ExtractStats(extractor.version)
    for day in run.days:
        turns = read_turns(run.settings.lake_dir, day)
        stats.turns += len(turns)
        identity.observe(run.conn, turns)
        new, old = enqueue_partition(run.conn, day, turns, source=run.source, extractor_version=extractor.version)
        stats.enqueued, stats.already_known = stats.enqueued + new, stats.already_known + old
    stats.identity = identity.refresh(run.conn, lake_dir=run.settings.lake_dir)
    stats.drain = drain(run.conn, run.settings, extractor, worker_id=run.worker, log=run.log,
                        reextract=run.settings.reextract_on_version_change)  # fmt: skip
    return stats


def auto_memory(run: IngestRun) -> AutoMemoryStats:
    """Claude Code's auto-memory notes (``projects/*/memory/*.md`` of the config dir) in as learnings."""
    return ingest_auto_memory(run.conn, run.settings.claude_config_dir, source=run.source, env=os.environ)


def above_floor(scan: PartitionScan, floor: str | None) -> PartitionScan:
    """The scan without days before the ingest floor among each file's new-bytes days.

    Those days are only ingested when asked for (``nous backfill --since``), so they must not hold a file's
    cursor back: a session file that started before the floor would otherwise look new to every sensor scan.
    """
    if floor is None:
        return scan
    files = [replace(f, region_ends={d: e for d, e in f.region_ends.items() if d >= floor}) for f in scan.files]
    return replace(scan, files=files)


def promote(run: IngestRun) -> int:
    """Move the cursors of the days' files whose lines were all extracted (none left in the queue); returns how
    many moved. A file with an item still waiting keeps its cursor, so the next scan sees it again."""
    promoted = 0
    floor = get_floor(run.conn)
    for day in run.days:
        scan = above_floor(read_manifest(run.settings.lake_dir, day), floor)
        record_file_progress(run.conn, scan, {f.path for f in scan.files} - incomplete_paths(run.conn, day))
        promoted += len(promote_cursors(run.conn, scan))
    return promoted

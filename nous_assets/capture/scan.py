"""From transcript files to one day's redacted turns, and from file cursors to the days with new data.

* :func:`scan_partition` builds a day of the lake: every discovered transcript with a record on
  that day (:mod:`~nous_assets.capture.days`: all its timestamps, lines need not be in date order)
  is parsed (complete lines only), its turns on that day are de-duplicated by uuid across files
  (resumed sessions replay records), redacted (text and metadata, :mod:`~nous_assets.capture.metadata`),
  and returned with the quarantined lines and per-file offsets. Files are read through their real paths;
  lake rows, the manifest and cursors only ever hold :func:`~nous_assets.capture.metadata.stored_path`.
* :func:`plan_new_data` is the sensor's question: which days gained complete lines since each
  file's cursor (handling new, appended, truncated and rotated files)?
* :func:`promote_cursors` moves a file's cursor only once every day its new bytes belong to has
  completed extraction (spec: cursor promotion only after ``completed``).

The three agree by construction, so a cursor cannot be stranded: the days the planner requests
are those of the new bytes' records, dated as the scan dates them (:func:`_region_ends`); the
scan of each of those days reads the file, since every such day is one of its timestamp days; and
promotion waits for exactly those days, each only up to the last byte it has in the file.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from nous_assets.capture.days import FileDays, days_in, file_days, mtime_day
from nous_assets.capture.discovery import DiscoveryResult, SkippedFile, TranscriptFile, discover
from nous_assets.capture.lake import write_partition
from nous_assets.capture.metadata import redact_name_text, redact_turn_metadata, stored_path
from nous_assets.capture.parser import (
    AgentLink,
    ParseResult,
    Quarantined,
    ToolResult,
    ToolUse,
    Turn,
    merge_agent_links,
    parse_chunk,
    parse_file,
)
from nous_assets.capture.redact import redact_text
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest.cursors import (
    FileState,
    ReadPlan,
    completed_offset,
    get_cursor,
    plan_read,
    promote,
    record_day_progress,
    rewind,
    set_cursor,
    stat_file,
)
from nous_assets.timeutil import now_iso
from resolver.project import project_id_from_folder


@dataclass(frozen=True)
class FileScan:
    path: str
    inode: str
    mtime: str
    consumed_offset: int
    # day -> end of the last record on that day beyond the file's cursor: the cursor may move once each
    # of these days completed a scan that read at least that far
    region_ends: Mapping[str, int]
    turns_on_date: int
    truncated: bool = False  # same inode but shorter than its cursor: the cursor must be reset

    @property
    def region_dates(self) -> frozenset[str]:
        return frozenset(self.region_ends)


@dataclass
class PartitionScan:
    date: str
    turns: list[Turn] = field(default_factory=list)
    quarantined: list[Quarantined] = field(default_factory=list)
    agent_links: list[AgentLink] = field(default_factory=list)  # subagent -> spawning Task call
    files: list[FileScan] = field(default_factory=list)
    skipped: list[SkippedFile] = field(default_factory=list)
    opted_out: int = 0
    duplicates: int = 0
    repaired_lines: int = 0  # lines kept with bytes that were not UTF-8 replaced
    redactions: dict[str, int] = field(default_factory=dict)
    symlink_loops: int = 0
    duplicate_paths: int = 0

    @property
    def sessions(self) -> set[str]:
        return {t.session_id for t in self.turns}


def _dated(turns: list[Turn], fallback: str | None) -> list[tuple[str | None, Turn]]:
    """Pair each turn with its day; undated records (old summaries) take the previous turn's day."""
    out, current = [], fallback
    for t in turns:
        if t.timestamp:
            current = t.timestamp[:10]
        out.append((current, t))
    return out


def _quarantine_day(dated: list[tuple[str | None, Turn]], q: Quarantined, fallback: str) -> str:
    """A bad line belongs to the day of the turn before it (the file's first day when none is)."""
    return next((d for d, t in reversed(dated) if t.byte_start <= q.byte_offset and d), None) or fallback


def _region_ends(
    dated: list[tuple[str | None, Turn]], quarantined: list[Quarantined], fallback: str, start: int
) -> dict[str, int]:
    """Day -> end offset of the last turn or bad line on that day starting at or after ``start``."""
    ends: dict[str, int] = {}
    for d, t in dated:
        if d and t.byte_start >= start:
            ends[d] = max(ends.get(d, 0), t.byte_end)
    for q in quarantined:
        if q.byte_offset >= start:
            d = _quarantine_day(dated, q, fallback)
            ends[d] = max(ends.get(d, 0), q.byte_offset + 1)
    return ends


def _add(counts: dict[str, int], found: dict[str, int]) -> None:
    for kind, n in found.items():
        counts[kind] = counts.get(kind, 0) + n


def _redact_turn(turn: Turn, counts: dict[str, int]) -> Turn:
    """The turn as it is stored: text, tool inputs and outputs redacted as text, every other string as
    metadata (:mod:`nous_assets.capture.metadata`), thinking dropped."""

    def red(text: str) -> str:
        result = redact_text(text)
        _add(counts, result.counts)
        return result.text

    turn, fields = redact_turn_metadata(turn)
    for found in fields.values():
        _add(counts, found)
    return replace(
        turn,
        text=red(turn.text),
        thinking="",
        tool_uses=tuple(ToolUse(u.id, u.name, red(u.input_json)) for u in turn.tool_uses),
        tool_results=tuple(
            ToolResult(r.tool_use_id, red(r.text), r.is_error, r.interrupted, r.agent_id) for r in turn.tool_results
        ),
    )


def _redact_link(link: AgentLink) -> AgentLink:
    """A subagent link with its ids stored as the turns store theirs (:func:`redact_turn_metadata`)."""
    ids = (link.agent_id, link.parent_session_id, link.parent_tool_use_id, link.parent_uuid, link.parent_agent_id)
    return AgentLink(*(redact_name_text(i).text if i else i for i in ids))  # type: ignore[arg-type]


def opted_out(settings: Settings) -> frozenset[str]:
    """The opted-out projects as discovery names them (an id written with its token redacted as discovery does)."""
    return frozenset(project_id_from_folder(p) for p in settings.opt_out_projects)


def discover_candidates(settings: Settings) -> tuple[list[TranscriptFile], int, DiscoveryResult]:
    """Discovered transcripts minus opted-out projects: (files, how many opted out, the discovery)."""
    found = discover(settings.project_glob)
    out = opted_out(settings)
    files = [f for f in found.files if f.project_id not in out]
    return files, len(found.files) - len(files), found


def candidate_files(settings: Settings) -> tuple[list[TranscriptFile], list[SkippedFile], int]:
    files, opted_out, found = discover_candidates(settings)
    return files, found.skipped, opted_out


def _on(info: FileDays, date: str) -> bool:
    return date in info.days if info.days else date == info.fallback


def scan_partition(settings: Settings, conn: Connection, date: str) -> PartitionScan:
    """Parse every transcript with a record on ``date`` and return that day's redacted turns."""
    files, opted_out, found = discover_candidates(settings)
    scan = PartitionScan(
        date=date,
        skipped=found.skipped,
        opted_out=opted_out,
        symlink_loops=len(found.loops),
        duplicate_paths=len(found.duplicates),
    )
    picked = []
    for f in files:
        info = file_days(f.path)
        if info is not None and _on(info, date):
            picked.append((info.fallback, str(f.path), f, info))
    seen: set[str] = set()
    # earliest sessions first: their copy of a replayed uuid wins
    for _, _, f, info in sorted(picked, key=lambda s: s[:2]):
        state = stat_file(f.path)
        if state is None:
            continue
        try:
            result = parse_file(f.path, f.project_id, session_id_hint=f.session_id)
        except OSError:
            continue  # vanished or unreadable since discovery: the next scan sees it as it is then
        key = stored_path(f.path)  # the real path is only read, never stored
        plan = plan_read(get_cursor(conn, key), state)
        truncated = plan.reason == "truncated"
        if truncated:  # completions recorded for the old bytes say nothing about the new ones
            rewind(conn, key, state.inode, state.mtime)
        dated = _dated(result.turns, info.fallback)
        region = _region_ends(dated, result.quarantined, info.fallback, plan.start_offset)
        on_date = [t for d, t in dated if d == date]
        repaired = set(result.repaired_offsets)
        for t in on_date:
            if t.uuid in seen:
                scan.duplicates += 1
                continue
            seen.update(t.uuids)
            scan.repaired_lines += sum(o in repaired for o in t.line_offsets)
            if t.timestamp is None:
                t = replace(t, timestamp=f"{date}T00:00:00.000000Z")
            scan.turns.append(_redact_turn(t, scan.redactions))
        if on_date:
            scan.agent_links.extend(_redact_link(a) for a in result.agent_links)
        for q in result.quarantined:
            if _quarantine_day(dated, q, info.fallback) == date:
                excerpt, reason = redact_text(q.excerpt).text, redact_text(q.reason).text
                scan.quarantined.append(replace(q, path=key, excerpt=excerpt, reason=reason))
        scan.files.append(
            FileScan(key, state.inode, state.mtime, result.consumed_offset, region, len(on_date), truncated)
        )
    scan.agent_links = merge_agent_links(scan.agent_links)
    return scan


# -- sensor planning ----------------------------------------------------------------------------
@dataclass(frozen=True)
class NewData:
    """Days with complete new lines, and a fingerprint of the file states that produced them."""

    dates: dict[str, list[str]]  # day -> files with new lines on that day
    reasons: dict[str, str]  # file -> new | appended | truncated | rotated
    fingerprint: str


def _needs_context(result: ParseResult, start: int) -> bool:
    """Do records at the head of the new bytes take their day from a turn before the cursor?"""
    if start == 0:
        return False
    first = next((t.byte_start for t in result.turns if t.timestamp), None)
    if first is None:
        return bool(result.turns or result.quarantined)
    return any(t.timestamp is None and t.byte_start < first for t in result.turns) or any(
        q.byte_offset < first for q in result.quarantined
    )


def new_days(f: TranscriptFile, state: FileState, plan: ReadPlan) -> dict[str, int]:
    """Days of the complete new lines after ``plan.start_offset`` (dated as :func:`scan_partition` will
    date them) -> end of each day's last record."""
    with open(f.path, "rb") as fh:
        fh.seek(plan.start_offset)
        data = fh.read(max(state.size - plan.start_offset, 0))
    path = str(f.path)
    result = parse_chunk(
        data, base_offset=plan.start_offset, path=path, project_id=f.project_id, session_id_hint=f.session_id
    )
    if result.consumed_offset <= plan.start_offset:
        return {}  # only a partial line so far: wait for its newline
    info = file_days(f.path)
    fallback = info.fallback if info else mtime_day(os.stat(f.path))
    if _needs_context(result, plan.start_offset):  # rare: an undated record or a bad line at the cursor
        result = parse_file(f.path, f.project_id, session_id_hint=f.session_id)
    region = _region_ends(_dated(result.turns, fallback), result.quarantined, fallback, plan.start_offset)
    if not region:  # only records that are not turns (progress, snapshots): any scan of the file moves it
        stamps = days_in(data[: result.consumed_offset - plan.start_offset])
        region = {max(stamps) if stamps else fallback: result.consumed_offset}
    return region


def plan_new_data(settings: Settings, conn: Connection) -> NewData:
    files, _, _ = candidate_files(settings)
    dates: dict[str, list[str]] = defaultdict(list)
    reasons: dict[str, str] = {}
    states = []
    for f in files:
        state = stat_file(f.path)
        if state is None:
            continue
        key = stored_path(f.path)
        plan = plan_read(get_cursor(conn, key), state)
        if plan.reason == "unchanged":
            continue
        try:
            region = new_days(f, state, plan)
        except OSError:
            continue  # vanished or unreadable since discovery: the next scan sees it as it is then
        if not region:
            continue
        for day in sorted(region):
            dates[day].append(key)
        reasons[key] = plan.reason
        states.append((key, state.inode, state.size))
    digest = hashlib.sha256(json.dumps(sorted(states)).encode()).hexdigest()[:16]
    return NewData(dict(dates), reasons, digest)


# -- cursor promotion ---------------------------------------------------------------------------
def record_file_progress(conn: Connection, scan: PartitionScan, completed_paths: set[str]) -> None:
    """Note how far each file was scanned for this day, and whether that day's work completed."""
    now = now_iso()
    with atomic(conn):
        for fs in scan.files:
            done = fs.path in completed_paths
            completed = fs.consumed_offset if done else 0
            record_day_progress(conn, fs.path, fs.inode, scan.date, fs.consumed_offset, completed, now)


def promote_cursors(conn: Connection, scan: PartitionScan) -> list[str]:
    """Advance each scanned file's cursor when every day of its new bytes has completed; return those moved.

    Day ``d`` counts as done for this file once a completed scan of ``d`` read the file at least up to
    the end of its last record on ``d`` (not up to the end of the file: a session still being written
    on another day must not hold back, or forever re-run, a day whose lines are all in).
    """
    moved = []
    with atomic(conn):
        for fs in scan.files:
            ok = True
            for day, needed in fs.region_ends.items():
                reached = completed_offset(conn, fs.path, fs.inode, day)
                if reached is None or reached < needed:
                    ok = False
                    break
            if not ok:
                continue
            if fs.truncated:  # the old offset points past the end of the rewritten file
                set_cursor(conn, fs.path, fs.inode, fs.consumed_offset, fs.mtime)
                moved.append(fs.path)
            elif promote(conn, fs.path, fs.inode, fs.consumed_offset, fs.mtime):
                moved.append(fs.path)
    return moved


def manifest_path(lake_dir: Path, date: str) -> Path:
    return lake_dir / "transcripts" / f"date={date}" / "_files.json"


def write_manifest(lake_dir: Path, scan: PartitionScan) -> None:
    """Per-file offsets of the scan, read back after extraction to promote cursors."""
    path = manifest_path(lake_dir, scan.date)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**fs.__dict__, "region_ends": dict(sorted(fs.region_ends.items()))} for fs in scan.files]
    tmp = path.with_suffix(".tmp")
    try:
        tmp.write_text(json.dumps({"date": scan.date, "files": rows}, indent=1))
        tmp.replace(path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def read_manifest(lake_dir: Path, date: str) -> PartitionScan:
    path = manifest_path(lake_dir, date)
    scan = PartitionScan(date=date)
    if path.exists():
        for row in json.loads(path.read_text())["files"]:
            if "region_dates" in row:  # written before region ends: every day up to the scanned offset
                row["region_ends"] = dict.fromkeys(row.pop("region_dates"), row["consumed_offset"])
            scan.files.append(FileScan(**row))
    return scan


def capture_day(settings: Settings, conn: Connection, date: str) -> PartitionScan:
    """Scan one day's transcript lines (redacted) into its lake partition and manifest; returns the scan.

    Cursors do not move here: they are promoted once the day's queue items are drained.
    """
    scan = scan_partition(settings, conn, date)
    write_partition(settings.lake_dir, date, scan.turns, scan.quarantined, scan.agent_links,
                    forget_projects=opted_out(settings))  # fmt: skip
    write_manifest(settings.lake_dir, scan)
    return scan

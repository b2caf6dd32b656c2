"""From transcript files to one day's redacted turns, and from file cursors to the days with new data.

* :func:`scan_partition` builds a day of the lake: every discovered transcript whose span can
  touch that day is parsed (complete lines only), its turns on that day are de-duplicated by
  uuid across files (resumed sessions replay records), redacted, and returned with the
  quarantined lines and per-file offsets.
* :func:`plan_new_data` is the sensor's question: which days gained complete lines since each
  file's cursor (handling new, appended, truncated and rotated files)?
* :func:`promote_cursors` moves a file's cursor only once every day its new bytes belong to has
  completed extraction (spec: cursor promotion only after ``completed``).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path

from nous_assets.capture.discovery import SkippedFile, TranscriptFile, discover
from nous_assets.capture.parser import (
    AgentLink,
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
from nous_assets.store.cursors import get_cursor, plan_read, promote, set_cursor, stat_file
from nous_assets.store.db import Connection, atomic
from nous_assets.timeutil import now_iso

_HEAD_BYTES = 65536


@dataclass(frozen=True)
class FileScan:
    path: str
    inode: str
    mtime: str
    consumed_offset: int
    region_dates: frozenset[str]  # days of the turns beyond the file's cursor
    turns_on_date: int
    truncated: bool = False  # same inode but shorter than its cursor: the cursor must be reset


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
    redactions: dict[str, int] = field(default_factory=dict)

    @property
    def sessions(self) -> set[str]:
        return {t.session_id for t in self.turns}


def _mtime_date(path: Path) -> str:
    return datetime.fromtimestamp(path.stat().st_mtime, UTC).strftime("%Y-%m-%d")


_TIMESTAMP = re.compile(rb'"timestamp"\s*:\s*"(\d{4}-\d{2}-\d{2})T')


def _day_in(lines: list[bytes]) -> str | None:
    for line in lines:
        found = _TIMESTAMP.findall(line)
        if found:
            return found[-1].decode()
    return None


def first_date(path: Path) -> str | None:
    """Day of the first timestamped record, read from the head of the file only."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(_HEAD_BYTES)
    except OSError:
        return None
    return _day_in(head.split(b"\n"))


def last_date(path: Path) -> str | None:
    """Day of the last timestamped record, read from the tail of the file only."""
    try:
        with open(path, "rb") as fh:
            fh.seek(max(path.stat().st_size - _HEAD_BYTES, 0))
            tail = fh.read()
    except OSError:
        return None
    return _day_in(list(reversed(tail.split(b"\n"))))


def file_span(path: Path) -> tuple[str | None, str]:
    """(first day, last day) a file has turns on, from its head and tail (mtime when it has no timestamps)."""
    return first_date(path), last_date(path) or _mtime_date(path)


def _dated(turns: list[Turn], fallback: str | None) -> list[tuple[str | None, Turn]]:
    """Pair each turn with its day; undated records (old summaries) take the previous turn's day."""
    out, current = [], fallback
    for t in turns:
        if t.timestamp:
            current = t.timestamp[:10]
        out.append((current, t))
    return out


def _redact_turn(turn: Turn, counts: dict[str, int]) -> Turn:
    def red(text: str) -> str:
        result = redact_text(text)
        for kind, n in result.counts.items():
            counts[kind] = counts.get(kind, 0) + n
        return result.text

    return replace(
        turn,
        text=red(turn.text),
        thinking="",
        tool_uses=tuple(ToolUse(u.id, u.name, red(u.input_json)) for u in turn.tool_uses),
        tool_results=tuple(
            ToolResult(r.tool_use_id, red(r.text), r.is_error, r.interrupted, r.agent_id) for r in turn.tool_results
        ),
    )


def candidate_files(settings: Settings) -> tuple[list[TranscriptFile], list[SkippedFile], int]:
    found = discover(settings.project_glob)
    opted_out = [f for f in found.files if f.project_id in settings.opt_out_projects]
    files = [f for f in found.files if f.project_id not in settings.opt_out_projects]
    return files, found.skipped, len(opted_out)


def scan_partition(settings: Settings, conn: Connection, date: str) -> PartitionScan:
    """Parse every transcript that can touch ``date`` and return that day's redacted turns."""
    files, skipped, opted_out = candidate_files(settings)
    scan = PartitionScan(date=date, skipped=skipped, opted_out=opted_out)
    spans = []
    for f in files:
        first, last = file_span(f.path)
        if (first is not None and first > date) or last < date:
            continue
        spans.append((first or last, str(f.path), f, first))
    seen: set[str] = set()
    # earliest sessions first: their copy of a replayed uuid wins
    for _, _, f, first in sorted(spans, key=lambda s: s[:2]):
        state = stat_file(f.path)
        if state is None:
            continue
        result = parse_file(f.path, f.project_id, session_id_hint=f.session_id)
        cursor = get_cursor(conn, str(f.path))
        truncated = bool(cursor and cursor.inode == state.inode and cursor.offset > state.size)
        cursor_offset = cursor.offset if cursor and cursor.inode == state.inode and not truncated else 0
        dated = _dated(result.turns, first)
        region = frozenset(d for d, t in dated if d and t.byte_start >= cursor_offset)
        on_date = [t for d, t in dated if d == date]
        for t in on_date:
            if t.uuid in seen:
                scan.duplicates += 1
                continue
            seen.update(t.uuids)
            if t.timestamp is None:
                t = replace(t, timestamp=f"{date}T00:00:00.000000Z")
            scan.turns.append(_redact_turn(t, scan.redactions))
        if on_date:
            scan.agent_links.extend(result.agent_links)
        for q in result.quarantined:
            day = next((d for d, t in reversed(dated) if t.byte_start <= q.byte_offset), None) or first
            if day == date:
                excerpt, reason = redact_text(q.excerpt).text, redact_text(q.reason).text
                scan.quarantined.append(replace(q, excerpt=excerpt, reason=reason))
        scan.files.append(
            FileScan(str(f.path), state.inode, state.mtime, result.consumed_offset, region, len(on_date), truncated)
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


def plan_new_data(settings: Settings, conn: Connection) -> NewData:
    files, _, _ = candidate_files(settings)
    dates: dict[str, list[str]] = defaultdict(list)
    reasons: dict[str, str] = {}
    states = []
    for f in files:
        state = stat_file(f.path)
        if state is None:
            continue
        plan = plan_read(get_cursor(conn, str(f.path)), state)
        if plan.reason == "unchanged":
            continue
        with open(f.path, "rb") as fh:
            fh.seek(plan.start_offset)
            data = fh.read(max(state.size - plan.start_offset, 0))
        result = parse_chunk(
            data, base_offset=plan.start_offset, path=str(f.path), project_id=f.project_id, session_id_hint=f.session_id
        )
        if result.consumed_offset <= plan.start_offset:
            continue  # only a partial line so far: wait for its newline
        fallback = first_date(f.path) if plan.start_offset == 0 else None
        days = {d for d, _ in _dated(result.turns, fallback) if d} or ({fallback} if fallback else set())
        if result.quarantined and not days:
            days = {_mtime_date(f.path)}
        for day in days:
            dates[day].append(str(f.path))
        reasons[str(f.path)] = plan.reason
        states.append((str(f.path), state.inode, state.size))
    digest = hashlib.sha256(json.dumps(sorted(states)).encode()).hexdigest()[:16]
    return NewData(dict(dates), reasons, digest)


# -- cursor promotion ---------------------------------------------------------------------------
def record_file_progress(conn: Connection, scan: PartitionScan, completed_paths: set[str]) -> None:
    """Note how far each file was scanned for this day, and whether that day's work completed."""
    now = now_iso()
    with atomic(conn):
        for fs in scan.files:
            done = fs.path in completed_paths
            conn.execute(
                "INSERT INTO ingest_file_partitions(transcript_path, file_inode, date, scanned_offset, "
                "completed_offset, updated_at) VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(transcript_path, file_inode, date) DO UPDATE SET "
                "scanned_offset = excluded.scanned_offset, "
                "completed_offset = max(completed_offset, excluded.completed_offset), updated_at = excluded.updated_at",
                (fs.path, fs.inode, scan.date, fs.consumed_offset, fs.consumed_offset if done else 0, now),
            )


def promote_cursors(conn: Connection, scan: PartitionScan) -> list[str]:
    """Advance each scanned file's cursor when every day of its new bytes has completed; return those moved."""
    moved = []
    with atomic(conn):
        for fs in scan.files:
            target = fs.consumed_offset
            ok = True
            for day in fs.region_dates:
                row = conn.execute(
                    "SELECT completed_offset FROM ingest_file_partitions WHERE transcript_path = ? AND file_inode = ? "
                    "AND date = ?",
                    (fs.path, fs.inode, day),
                ).fetchone()
                if row is None or row[0] < target:
                    ok = False
                    break
            if not ok:
                continue
            if fs.truncated:  # the old offset points past the end of the rewritten file
                set_cursor(conn, fs.path, fs.inode, target, fs.mtime)
                moved.append(fs.path)
            elif promote(conn, fs.path, fs.inode, target, fs.mtime):
                moved.append(fs.path)
    return moved


def manifest_path(lake_dir: Path, date: str) -> Path:
    return lake_dir / "transcripts" / f"date={date}" / "_files.json"


def write_manifest(lake_dir: Path, scan: PartitionScan) -> None:
    """Per-file offsets of the scan, read back after extraction to promote cursors."""
    path = manifest_path(lake_dir, scan.date)
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{**fs.__dict__, "region_dates": sorted(fs.region_dates)} for fs in scan.files]
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"date": scan.date, "files": rows}, indent=1))
    tmp.replace(path)


def read_manifest(lake_dir: Path, date: str) -> PartitionScan:
    path = manifest_path(lake_dir, date)
    scan = PartitionScan(date=date)
    if path.exists():
        for row in json.loads(path.read_text())["files"]:
            scan.files.append(FileScan(**{**row, "region_dates": frozenset(row["region_dates"])}))
    return scan

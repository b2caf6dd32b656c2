"""``nous redact --rescan``: apply the current redactor to everything already stored.

Why: redaction happens before anything is written, so a secret that an older redactor missed is already on
disk — in the Parquet lake, in transcript chunks, in event payloads, in the packets the hook prints. When
the redactor improves, this pass finds and removes those secrets:

* lake partitions (turns, quarantine lines, subagent links) are re-redacted and rewritten atomically (temp
  file + rename), only when something changed; turns' metadata (cwd, branch, paths, ids) too, and the paths
  of each day's ``_files.json`` (:mod:`nous_assets.capture.rescan_meta`);
* transcript chunks get the new text, a fresh FTS entry and no vector (re-embedded on the next run);
* event payloads are rewritten in one transaction under the store's rescan flag — the one sanctioned
  in-place edit of the log (migration 006) — then the projection is rebuilt from the log, and the vectors
  of changed memories are dropped so they are re-embedded from the redacted text;
* paths, branches and project ids in cortex.db's other columns (cursors, queue items, chunks, identity,
  aliases, the events' and memories' project ids) are rewritten to the form capture now stores
  (:mod:`nous_assets.capture.rescan_meta`); packets built from them are dropped and rebuilt by the next run;
* injection packets and queue error messages are re-redacted in place.

Every change is recorded in ``redaction_audit`` (kind, location, row, field, time; never the secret). A
second run finds nothing and records nothing. ``dry_run`` counts without writing.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from nous_assets.capture.lake import TurnsSchema, frame_turns, turns_frame
from nous_assets.capture.metadata import redact_name_text, redact_turn_metadata, stored_path_text
from nous_assets.capture.redact import REDACTOR_VERSION, RedactionResult, redact_json, redact_text
from nous_assets.capture.rescan_meta import rescan_db_metadata, rescan_manifests
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import redaction as store
from nous_assets.store.ingest.redaction import AuditRow
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.sqlite.projection import rebuild
from nous_assets.turns import ToolResult, ToolUse, Turn

Progress = Callable[[str, int, int], None]  # stage, done, total
ColumnRedactors = dict[str, Callable[[str], RedactionResult]]


@dataclass
class RescanReport:
    run_id: str
    dry_run: bool
    changed: Counter = field(default_factory=Counter)  # location kind -> rows changed
    kinds: Counter = field(default_factory=Counter)  # redaction kind -> secrets removed
    audit: list[AuditRow] = field(default_factory=list)
    memories_rebuilt: int = 0

    @property
    def total(self) -> int:
        return sum(self.kinds.values())


def _audit(report: RescanReport, rows: list[AuditRow]) -> None:
    report.audit.extend(rows)
    for r in rows:
        report.kinds[r.kind] += r.count


def _rows(location: str, row_ref: str, field_name: str, counts: dict[str, int]) -> list[AuditRow]:
    return [AuditRow(location, row_ref, field_name, kind, n) for kind, n in sorted(counts.items())]


# -- the lake ---------------------------------------------------------------------------------------------
def _redact_turn(turn: Turn, location: str) -> tuple[Turn, list[AuditRow]]:
    """The turn with every stored field re-redacted as capture redacts it (text fields as text, the others as
    metadata: :mod:`nous_assets.capture.metadata`), and its audit rows (referring to the redacted uuid)."""
    turn, fields = redact_turn_metadata(turn)
    rows = [r for name, counts in sorted(fields.items()) for r in _rows(location, turn.uuid, name, counts)]

    def red(text: str, field_name: str) -> str:
        result = redact_text(text)
        rows.extend(_rows(location, turn.uuid, field_name, result.counts))
        return result.text

    new = replace(
        turn,
        text=red(turn.text, "text"),
        tool_uses=tuple(
            ToolUse(u.id, u.name, red(u.input_json, f"tool_uses[{i}].input")) for i, u in enumerate(turn.tool_uses)
        ),
        tool_results=tuple(
            ToolResult(r.tool_use_id, red(r.text, f"tool_results[{i}].text"), r.is_error, r.interrupted, r.agent_id)
            for i, r in enumerate(turn.tool_results)
        ),
    )
    return new, rows


def _atomic_parquet(frame: pl.DataFrame, path: Path) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.rescan.tmp")
    frame.write_parquet(tmp)
    os.replace(tmp, path)


def _record(conn: Connection, report: RescanReport, rows: list[AuditRow]) -> None:
    """Audit rows of a file rewrite, written as soon as the file is in place."""
    if rows and not report.dry_run:
        with atomic(conn):
            store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
    _audit(report, rows)


def _rescan_turns(conn: Connection, path: Path, report: RescanReport) -> None:
    date = path.parent.name.removeprefix("date=")
    location = f"lake:transcripts/date={date}"
    turns = frame_turns(pl.read_parquet(path))
    out, rows, changed = [], [], 0
    for turn in turns:
        new, turn_rows = _redact_turn(turn, location)
        out.append(new)
        rows.extend(turn_rows)
        changed += bool(turn_rows)
    if not changed:
        return
    if not report.dry_run:
        frame = turns_frame(date, out)
        TurnsSchema.validate(frame, lazy=True)
        _atomic_parquet(frame, path)
    report.changed["lake_turns"] += changed
    report.changed["lake_partitions"] += 1
    _record(conn, report, rows)


_QUARANTINE_COLUMNS = {"path": stored_path_text, "excerpt": redact_text, "reason": redact_text}
# Subagent links hold ids only: redacted as capture stores ids.
_LINK_COLUMNS = dict.fromkeys(("agent_id", "parent_session_id", "parent_tool_use_id", "parent_uuid",
                               "parent_agent_id"), redact_name_text)  # fmt: skip


def _rescan_table(conn: Connection, path: Path, report: RescanReport, table: str, columns: ColumnRedactors) -> None:
    """Re-redact the string ``columns`` of one lake file (quarantine lines, subagent links); rewrite it if needed.
    Audit rows name a line by its redacted path and offset, a link by its row number."""
    location = f"lake:{table}/{path.parent.name}"
    frame = pl.read_parquet(path)
    records, rows, changed = [], [], 0
    for i, record in enumerate(frame.iter_rows(named=True)):
        new = dict(record)
        found = []
        for column, redact in columns.items():
            result = redact(record[column] or "")
            if result.counts:
                new[column] = result.text
                found.append((column, result.counts))
        ref = f"{new['path']}@{new['byte_offset']}" if "byte_offset" in new else str(i)
        rows += [r for column, counts in found for r in _rows(location, ref, column, counts)]
        changed += new != record
        records.append(new)
    if not changed:
        return
    if not report.dry_run:
        _atomic_parquet(pl.DataFrame(records, schema=frame.schema), path)
    report.changed[f"lake_{table}_rows"] += changed
    _record(conn, report, rows)


def rescan_lake(conn: Connection, lake_dir: Path, report: RescanReport, progress: Progress | None = None) -> None:
    """Re-redact every day of the lake; rewrite (atomically) only the files where something changed."""
    files = sorted((lake_dir / "transcripts").glob("date=*/turns.parquet"))
    for i, path in enumerate(files, 1):
        _rescan_turns(conn, path, report)
        if progress:
            progress("lake", i, len(files))
    for path in sorted((lake_dir / "quarantine").glob("date=*/quarantine.parquet")):
        _rescan_table(conn, path, report, "quarantine", _QUARANTINE_COLUMNS)
    for path in sorted((lake_dir / "agent_links").glob("date=*/links.parquet")):
        _rescan_table(conn, path, report, "agent_links", _LINK_COLUMNS)
    rescan_manifests(conn, lake_dir, report)


# -- cortex.db ----------------------------------------------------------------------------------------------
def _redact_tree(obj: Any, path: str, rows: list[tuple[str, dict[str, int]]]) -> Any:
    """Redact every string of a parsed payload like :func:`redact_json`, noting each changed JSON path."""
    if isinstance(obj, dict):
        out = {}
        for key, value in obj.items():
            sub = f"{path}.{key}"
            if isinstance(value, (dict, list)):
                out[key] = _redact_tree(value, sub, rows)
                continue
            redacted, counts = redact_json({key: value})  # blanks values under secret-named keys too
            ((new_key, new_value),) = redacted.items()
            if counts:
                rows.append((sub, counts))
            out[new_key] = new_value
        return out
    if isinstance(obj, list):
        return [_redact_tree(item, f"{path}[{i}]", rows) for i, item in enumerate(obj)]
    if isinstance(obj, str):
        result = redact_text(obj)
        if result.counts:
            rows.append((path, result.counts))
        return result.text
    return obj


def rescan_events(conn: Connection, report: RescanReport, progress: Progress | None = None) -> set[int]:
    """Rewrite the payloads holding secrets, in one transaction under the rescan flag; their event ids."""
    total = store.event_count(conn)
    changed: dict[int, Any] = {}
    rows: list[AuditRow] = []
    for done, (event_id, payload_json) in enumerate(store.iter_event_payloads(conn), 1):
        paths: list[tuple[str, dict[str, int]]] = []
        payload = _redact_tree(json.loads(payload_json), "$", paths)
        if paths:
            changed[event_id] = payload
            for json_path, counts in paths:
                rows.extend(_rows("learning_events", str(event_id), json_path, counts))
        if progress and (done % 5000 == 0 or done == total):
            progress("events", done, total)
    if changed and not report.dry_run:
        with store.rescan_transaction(conn):
            for event_id, payload in changed.items():
                store.rewrite_event_payload(conn, event_id, payload)
            store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
    report.changed["events"] += len(changed)
    _audit(report, rows)
    return set(changed)


def rescan_chunks(conn: Connection, report: RescanReport, progress: Progress | None = None) -> None:
    total = store.chunk_count(conn)
    updates: list[tuple[int, str]] = []
    rows: list[AuditRow] = []
    for done, (chunk_id, text) in enumerate(store.iter_chunks(conn), 1):
        result = redact_text(text)
        if result.counts:
            updates.append((chunk_id, result.text))
            rows.extend(_rows("transcript_chunks", str(chunk_id), "text", result.counts))
        if progress and (done % 5000 == 0 or done == total):
            progress("chunks", done, total)
    if updates and not report.dry_run:
        with atomic(conn):
            for chunk_id, text in updates:
                store.rewrite_chunk_text(conn, chunk_id, text)
            store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
    report.changed["chunks"] += len(updates)
    _audit(report, rows)


def rescan_small_tables(conn: Connection, report: RescanReport) -> None:
    """Injection packets and queue error messages: short, re-redacted in place."""
    packets: list[tuple[str, str]] = []
    errors: list[tuple[int, str]] = []
    rows: list[AuditRow] = []
    for key, text in store.iter_packets(conn):
        result = redact_text(text)
        if result.counts:
            packets.append((key, result.text))
            rows.extend(_rows("injection_cache", key, "packet_text", result.counts))
    for item_id, message in store.iter_queue_errors(conn):
        result = redact_text(message)
        if result.counts:
            errors.append((item_id, result.text))
            rows.extend(_rows("ingest_events", str(item_id), "last_error", result.counts))
    if (packets or errors) and not report.dry_run:
        with atomic(conn):
            for key, text in packets:
                store.rewrite_packet(conn, key, text)
            for item_id, message in errors:
                store.rewrite_queue_error(conn, item_id, message)
            store.record_audit(conn, report.run_id, REDACTOR_VERSION, rows)
    report.changed["injection_packets"] += len(packets)
    report.changed["queue_errors"] += len(errors)
    _audit(report, rows)


def rescan(
    settings: Settings,
    conn: Connection,
    *,
    policy: Policy | None = None,
    dry_run: bool = False,
    progress: Progress | None = None,
) -> RescanReport:
    """Re-apply the current redactor to the lake, chunks, events (then the projection), packets and errors."""
    report = RescanReport(run_id=uuid.uuid4().hex[:12], dry_run=dry_run)
    rescan_lake(conn, settings.lake_dir, report, progress)
    rescan_chunks(conn, report, progress)
    events = rescan_events(conn, report, progress)
    if events and not dry_run:
        stats = rebuild(conn, policy=policy)  # memories, concepts and FTS from the rewritten log
        report.memories_rebuilt = stats.upserted
        store.drop_memory_vectors(conn, events)  # re-embedded from the redacted text on the next run
    rescan_db_metadata(conn, report)  # paths, branches and project ids in every other column
    rescan_small_tables(conn, report)
    report.changed = +report.changed  # only the places where something changed
    return report

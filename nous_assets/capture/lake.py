"""The transcript lake: redacted, parsed turns as one Parquet file per day.

``$NOUS_DATA_DIR/lake/transcripts/date=YYYY-MM-DD/turns.parquet`` holds every turn whose
timestamp falls on that UTC day; ``lake/quarantine/date=…/quarantine.parquet`` holds the lines
that could not be parsed, with file, byte offset and reason. Writes go to a temporary file and
are renamed into place, so a partition is either the old version or the new one, never half.
Thinking is not stored: it is never mined or embedded.

A partition is only ever added to (:func:`merge_turns_into`): a re-scan of the day replaces the
turns it still finds and keeps the ones whose bytes are gone from the transcripts (a file
truncated, rotated or deleted after it was ingested), so the lake never loses what it once held.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
from collections.abc import Collection, Iterable, Iterator, Sequence
from pathlib import Path

import pandera.polars as pa
import polars as pl

from nous_assets.capture.parser import AgentLink, Quarantined, merge_agent_links
from nous_assets.turns import ToolResult, ToolUse, Turn

TURN_SCHEMA: dict[str, pl.DataType] = {
    "date": pl.Utf8,
    "uuid": pl.Utf8,
    "uuids": pl.List(pl.Utf8),
    "parent_uuid": pl.Utf8,
    "session_id": pl.Utf8,
    "project_id": pl.Utf8,
    "role": pl.Utf8,
    "kind": pl.Utf8,
    "timestamp": pl.Utf8,
    "text": pl.Utf8,
    "tool_uses_json": pl.Utf8,
    "tool_results_json": pl.Utf8,
    "message_id": pl.Utf8,
    "request_id": pl.Utf8,
    "model": pl.Utf8,
    "is_sidechain": pl.Boolean,
    "agent_id": pl.Utf8,
    "is_meta": pl.Boolean,
    "is_compact_summary": pl.Boolean,
    "cwd": pl.Utf8,
    "git_branch": pl.Utf8,
    "version": pl.Utf8,
    "source_path": pl.Utf8,
    "byte_start": pl.Int64,
    "byte_end": pl.Int64,
    "line_offsets": pl.List(pl.Int64),
    "subtype": pl.Utf8,
    "logical_parent_uuid": pl.Utf8,
}

LINK_SCHEMA: dict[str, pl.DataType] = {
    "date": pl.Utf8,
    "agent_id": pl.Utf8,
    "parent_session_id": pl.Utf8,
    "parent_tool_use_id": pl.Utf8,
    "parent_uuid": pl.Utf8,
    "parent_agent_id": pl.Utf8,
}

QUARANTINE_SCHEMA: dict[str, pl.DataType] = {
    "date": pl.Utf8,
    "path": pl.Utf8,
    "byte_offset": pl.Int64,
    "reason": pl.Utf8,
    "excerpt": pl.Utf8,
}

ROLES = ["user", "assistant", "system", "summary"]
KINDS = ["message", "tool_result", "compact_summary", "meta", "compact_boundary", "local_command", "summary", "system"]


class TurnsSchema(pa.DataFrameModel):
    """What every lake partition must satisfy (checked on write and by the asset check)."""

    date: str = pa.Field(str_matches=r"^\d{4}-\d{2}-\d{2}$")
    uuid: str = pa.Field(unique=True)
    session_id: str
    project_id: str = pa.Field(str_length={"min_value": 1})
    role: str = pa.Field(isin=ROLES)
    kind: str = pa.Field(isin=KINDS)
    timestamp: str = pa.Field(str_matches=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$")
    text: str
    source_path: str
    byte_start: int = pa.Field(ge=0)
    byte_end: int = pa.Field(ge=0)

    @pa.dataframe_check(name="timestamp falls on the partition date")
    def timestamp_on_date(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col("timestamp").str.slice(0, 10) == pl.col("date"))

    @pa.dataframe_check(name="byte range is ordered")
    def byte_range(cls, data) -> pl.LazyFrame:  # noqa: N805
        return data.lazyframe.select(pl.col("byte_end") > pl.col("byte_start"))

    class Config:
        strict = False


def partition_dir(lake_dir: Path, table: str, date: str) -> Path:
    return lake_dir / table / f"date={date}"


def turns_path(lake_dir: Path, date: str) -> Path:
    return partition_dir(lake_dir, "transcripts", date) / "turns.parquet"


def quarantine_path(lake_dir: Path, date: str) -> Path:
    return partition_dir(lake_dir, "quarantine", date) / "quarantine.parquet"


def turns_frame(date: str, turns: Sequence[Turn]) -> pl.DataFrame:
    rows = [
        {
            "date": date,
            "uuid": t.uuid,
            "uuids": list(t.uuids),
            "parent_uuid": t.parent_uuid,
            "session_id": t.session_id,
            "project_id": t.project_id,
            "role": t.role,
            "kind": t.kind,
            "timestamp": t.timestamp,
            "text": t.text,
            "tool_uses_json": json.dumps([[u.id, u.name, u.input_json] for u in t.tool_uses]),
            "tool_results_json": json.dumps(
                [[r.tool_use_id, r.text, r.is_error, r.interrupted, r.agent_id] for r in t.tool_results]
            ),
            "message_id": t.message_id,
            "request_id": t.request_id,
            "model": t.model,
            "is_sidechain": t.is_sidechain,
            "agent_id": t.agent_id,
            "is_meta": t.is_meta,
            "is_compact_summary": t.is_compact_summary,
            "cwd": t.cwd,
            "git_branch": t.git_branch,
            "version": t.version,
            "source_path": t.source_path,
            "byte_start": t.byte_start,
            "byte_end": t.byte_end,
            "line_offsets": list(t.line_offsets),
            "subtype": t.subtype,
            "logical_parent_uuid": t.logical_parent_uuid,
        }
        for t in turns
    ]
    return pl.DataFrame(rows, schema=TURN_SCHEMA)


def frame_turns(frame: pl.DataFrame) -> list[Turn]:
    turns = []
    for r in frame.iter_rows(named=True):
        turns.append(
            Turn(
                uuid=r["uuid"],
                uuids=tuple(r["uuids"]),
                parent_uuid=r["parent_uuid"],
                session_id=r["session_id"],
                project_id=r["project_id"],
                role=r["role"],
                kind=r["kind"],
                timestamp=r["timestamp"],
                text=r["text"],
                thinking="",
                tool_uses=tuple(ToolUse(*u) for u in json.loads(r["tool_uses_json"])),
                tool_results=tuple(ToolResult(*x) for x in json.loads(r["tool_results_json"])),
                message_id=r["message_id"],
                request_id=r["request_id"],
                model=r["model"],
                is_sidechain=r["is_sidechain"],
                agent_id=r["agent_id"],
                is_meta=r["is_meta"],
                is_compact_summary=r["is_compact_summary"],
                cwd=r["cwd"],
                git_branch=r["git_branch"],
                version=r["version"],
                source_path=r["source_path"],
                byte_start=r["byte_start"],
                byte_end=r["byte_end"],
                line_offsets=tuple(r["line_offsets"]),
                subtype=r["subtype"],
                logical_parent_uuid=r["logical_parent_uuid"],
            )
        )
    return turns


def _atomic_write(frame: pl.DataFrame, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        frame.write_parquet(tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)  # a full disk must not also keep half a file
        raise


def links_path(lake_dir: Path, date: str) -> Path:
    return partition_dir(lake_dir, "agent_links", date) / "links.parquet"


def merge_turns_into(old: Sequence[Turn], new: Sequence[Turn]) -> list[Turn]:
    """The day's turns after a re-scan: ``old`` (the partition) updated with ``new`` (the scan), none dropped.

    Rows are compared by the lines (uuids) they hold. A scanned turn holding all the lines of old
    rows replaces them, in place (a response that grew, or the same turn read again). One that
    holds only part of an old row is a fragment of bytes since cut away (truncation or rotation
    inside a response): the old row stays and the fragment is dropped. Old rows the scan did not
    find at all come from bytes that are gone and stay. Turns new to the day follow in scan order,
    so every file's turns keep their order, and re-running an unchanged day reproduces the partition.
    """
    rows: list[Turn | None] = list(old)
    where: dict[str, set[int]] = {}
    for i, t in enumerate(rows):
        for u in t.uuids:
            where.setdefault(u, set()).add(i)
    for turn in new:
        lines = set(turn.uuids)
        overlap = sorted({i for u in turn.uuids for i in where.get(u, ()) if rows[i] is not None})
        if any(set(rows[i].uuids) > lines for i in overlap):
            continue  # the lake holds more of this response than the files still do
        covered = [i for i in overlap if set(rows[i].uuids) <= lines]
        for i in overlap:  # partly overlapping rows stay, unless one has the same uuid: the scan's turn wins
            if i not in covered and rows[i].uuid == turn.uuid:
                covered.append(i)
        if covered:
            slot = min(covered)
            for i in covered:
                rows[i] = None
            rows[slot] = turn
        else:
            slot = len(rows)
            rows.append(turn)
        for u in turn.uuids:
            where.setdefault(u, set()).add(slot)
    return [t for t in rows if t is not None]


def _merge_quarantine(old: pl.DataFrame, new: pl.DataFrame) -> pl.DataFrame:
    """Union by (file, byte offset); the new scan's row wins for a line it saw again."""
    if old.is_empty():
        return new
    kept = old.join(new.select("path", "byte_offset"), on=["path", "byte_offset"], how="anti")
    return pl.concat([kept.select(new.columns), new])


@contextlib.contextmanager
def _partition_lock(lake_dir: Path, date: str) -> Iterator[None]:
    """Serialise read-merge-write of one day between processes (sensor and reconcile runs may overlap)."""
    lock = partition_dir(lake_dir, "transcripts", date) / ".lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    with open(lock, "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def _read(path: Path, schema: dict[str, pl.DataType]) -> pl.DataFrame:
    return pl.read_parquet(path) if path.exists() else pl.DataFrame(schema=schema)


def write_partition(
    lake_dir: Path,
    date: str,
    turns: Sequence[Turn],
    quarantined: Iterable[Quarantined],
    agent_links: Iterable[AgentLink] = (),
    *,
    forget_projects: Collection[str] = (),
) -> Path:
    """Merge a scan of ``date`` into its partition: turns, quarantine records and subagent links.

    Validated, then each file written atomically (temporary file + rename); re-running a scan is a
    no-op. Kept old rows of ``forget_projects`` (projects opted out since) are dropped, not kept.
    """
    path = turns_path(lake_dir, date)
    with _partition_lock(lake_dir, date):
        old = [t for t in read_turns(lake_dir, date) if t.project_id not in forget_projects]
        frame = turns_frame(date, merge_turns_into(old, turns))
        if frame.height:
            TurnsSchema.validate(frame, lazy=True)
        q = pl.DataFrame(
            [
                {"date": date, "path": x.path, "byte_offset": x.byte_offset, "reason": x.reason, "excerpt": x.excerpt}
                for x in quarantined
            ],
            schema=QUARANTINE_SCHEMA,
        )
        q = _merge_quarantine(_read(quarantine_path(lake_dir, date), QUARANTINE_SCHEMA), q)
        link_fields = ("agent_id", "parent_session_id", "parent_tool_use_id", "parent_uuid", "parent_agent_id")
        old_links = [AgentLink(*(r[k] for k in link_fields)) for r in read_links(lake_dir, date).iter_rows(named=True)]
        links = pl.DataFrame(
            [
                {
                    "date": date,
                    "agent_id": a.agent_id,
                    "parent_session_id": a.parent_session_id,
                    "parent_tool_use_id": a.parent_tool_use_id,
                    "parent_uuid": a.parent_uuid,
                    "parent_agent_id": a.parent_agent_id,
                }
                for a in merge_agent_links([*agent_links, *old_links])
            ],
            schema=LINK_SCHEMA,
        )
        _atomic_write(frame, path)
        _atomic_write(q, quarantine_path(lake_dir, date))
        _atomic_write(links, links_path(lake_dir, date))
    return path


def read_links(lake_dir: Path, date: str) -> pl.DataFrame:
    path = links_path(lake_dir, date)
    return pl.read_parquet(path) if path.exists() else pl.DataFrame(schema=LINK_SCHEMA)


def read_turns(lake_dir: Path, date: str) -> list[Turn]:
    path = turns_path(lake_dir, date)
    if not path.exists():
        return []
    return frame_turns(pl.read_parquet(path))


def _partitions(lake_dir: Path, dates: Iterable[str] | None) -> list[Path]:
    if dates is None:
        return sorted((lake_dir / "transcripts").glob("date=*/turns.parquet"))
    return [p for p in (turns_path(lake_dir, d) for d in sorted(set(dates))) if p.exists()]


def session_folders(lake_dir: Path, dates: Iterable[str] | None = None) -> set[tuple[str, str]]:
    """(Claude Code folder, session id) of every session with turns on ``dates`` (None: on any day)."""
    out: set[tuple[str, str]] = set()
    for path in _partitions(lake_dir, dates):
        frame = pl.read_parquet(path, columns=["project_id", "session_id"]).unique()
        out.update((f, s) for f, s in frame.iter_rows())
    return out


def session_turns(lake_dir: Path, sessions: Collection[str]) -> list[Turn]:
    """Every turn of ``sessions`` on every day of the lake (subagents included: they carry their session's id), in
    file order: what a step that looks across a project's whole history reads (the project brief)."""
    wanted = list(sessions)
    frames = [pl.read_parquet(p).filter(pl.col("session_id").is_in(wanted)) for p in _partitions(lake_dir, None)]
    frames = [f for f in frames if f.height]
    if not frames:
        return []
    return sorted(frame_turns(pl.concat(frames, how="diagonal_relaxed")), key=lambda t: (t.source_path, t.byte_start))

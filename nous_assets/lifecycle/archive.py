"""Hot and cold tiers: ``nous archive``, ``nous restore`` and the segments ``replay --include-archives`` reads.

Events recorded before the cutoff (and already projected, so the projection keeps them) move into
year segments ``cortex-archive-YYYY.db.zst`` in the archive directory: a standalone SQLite file with
the live ``learning_events`` schema, compressed with zstd. The order makes a kill at any point safe:

1. the segment is written to ``*.tmp`` files, compressed, fsynced and renamed into place;
2. one transaction checks the live rows against the file, records the segment, indexes and deletes them.

A rerun first deletes ``*.tmp`` leftovers (a kill during step 1) and adopts any finished segment file
the catalogue does not list (a kill between 1 and 2): its events are still live, so it is checked
against them and the move is completed. Nothing is lost (the rows go only in the transaction that
records a verified file) and nothing is duplicated (each event is live or in exactly one segment).
"""

from __future__ import annotations

import contextlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import zstandard

from nous_assets.errors import NousError
from nous_assets.filemodes import make_private_dir
from nous_assets.store.db import Connection, DatabaseError, open_db
from nous_assets.store.log import archive as store
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.sqlite.projection import ProjectionStats, VerifyReport, get_checkpoint, rebuild, verify
from nous_assets.timeutil import now_iso, parse_time, to_iso

SEGMENT_GLOB = "cortex-archive-*.db.zst"
_RELATIVE = re.compile(r"^\s*(\d+)\s*([dw])\s*$")
ZSTD_LEVEL = 9  # JSON payloads: ~1.5x smaller than level 3 for a little more CPU, once per event

Progress = Callable[[str, int], None]


class ArchiveError(NousError):
    """An archive or restore that cannot go on (the message says why and what to do)."""


@dataclass
class ArchiveReport:
    cutoff: str
    segments: list[store.Segment] = field(default_factory=list)
    adopted: list[str] = field(default_factory=list)  # segment files of an interrupted run, completed now
    removed_partial: list[str] = field(default_factory=list)

    @property
    def events(self) -> int:
        return sum(s.event_count for s in self.segments)


@dataclass(frozen=True)
class RestoreReport:
    archive_path: str
    segment_id: str
    event_count: int
    inserted: int


def parse_cutoff(text: str, now: datetime | None = None) -> str:
    """``90d`` / ``12w`` (that long before now) or an ISO date/time, as canonical UTC text."""
    match = _RELATIVE.match(text)
    if match:
        days = int(match.group(1)) * (7 if match.group(2) == "w" else 1)
        return to_iso((now or datetime.now(UTC)) - timedelta(days=days))
    try:
        return to_iso(parse_time(text))
    except ValueError:
        raise ArchiveError(
            f"--before {text!r} is neither an age like 90d or 12w nor an ISO date like 2025-06-30"
        ) from None


def _fsync_path(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def compress(raw: Path, target: Path) -> int:
    """zstd ``raw`` into ``target`` through ``target.tmp``: fsynced, renamed, directory fsynced; returns bytes."""
    partial = target.with_name(target.name + ".tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private whatever the umask
    with raw.open("rb") as src, os.fdopen(fd, "wb") as dst:
        zstandard.ZstdCompressor(level=ZSTD_LEVEL).copy_stream(src, dst)
        dst.flush()
        os.fsync(dst.fileno())
    os.replace(partial, target)
    _fsync_path(target.parent)
    return target.stat().st_size


def decompress(archive: Path, raw: Path) -> None:
    """Unpack a segment file (a clear error if it is not zstd)."""
    try:
        with archive.open("rb") as src, raw.open("wb") as dst:
            zstandard.ZstdDecompressor().copy_stream(src, dst)
    except zstandard.ZstdError as exc:
        raise ArchiveError(f"{archive} is not a readable zstd archive ({exc})") from None


def _verified_digest(raw: Path, archive: Path) -> tuple[str, store.StreamDigest]:
    """The segment id and digest of a decompressed file, after checking its rows hash to what it records."""
    try:
        with store.open_segment_db(raw) as seg:
            segment_id, recorded = store.segment_meta(seg)
            actual = store.digest(store.segment_stream(seg))
    except DatabaseError as exc:
        raise ArchiveError(f"{archive} is not a Nous archive segment ({exc})") from None
    if actual != recorded:
        raise ArchiveError(
            f"{archive}: checksum mismatch (file records {recorded.count} events, sha256 {recorded.sha256[:12]}…; "
            f"its rows hash to {actual.sha256[:12]}… over {actual.count}); nothing was changed"
        )
    return segment_id, actual


@contextlib.contextmanager
def _unpacked(archive: Path, scratch_dir: Path) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="nous-archive-", dir=scratch_dir) as tmp:
        raw = Path(tmp) / "segment.db"
        decompress(archive, raw)
        yield raw


def _segment_name(year: str, taken: set[str]) -> str:
    name, n = f"cortex-archive-{year}.db.zst", 1
    while name in taken:
        n += 1
        name = f"cortex-archive-{year}.{n}.db.zst"
    return name


def _remove_partials(archive_dir: Path) -> list[str]:
    removed = []
    for path in sorted(archive_dir.glob("cortex-archive-*.tmp")):
        path.unlink()
        removed.append(path.name)
    return removed


def _adopt_orphans(conn: Connection, archive_dir: Path, scratch_dir: Path) -> list[str]:
    """Complete the move of segment files an interrupted run wrote but never recorded."""
    listed = {s.archive_path for s in store.segments(conn)}
    adopted = []
    for path in sorted(archive_dir.glob(SEGMENT_GLOB)):
        if path.name in listed:
            continue
        with _unpacked(path, scratch_dir) as raw:
            segment_id, found = _verified_digest(raw, path)
            live = store.live_rows_of(conn, raw)
            if (live.count, live.sha256) != (found.count, found.sha256):
                raise ArchiveError(
                    f"{path} is not in the archive catalogue and its {found.count} events are not the live ones "
                    f"({live.count} match); move it out of {archive_dir} (restore it with `nous restore {path}` "
                    "if it came from this database) and rerun"
                )
            store.move_out(conn, raw, _segment(segment_id, path.name, found, path.stat().st_size))
        adopted.append(path.name)
    return adopted


def _segment(segment_id: str, name: str, d: store.StreamDigest, compressed: int) -> store.Segment:
    return store.Segment(
        segment_id, name, d.min_event_id, d.max_event_id, d.count, d.sha256, compressed, now_iso(), None
    )


def archive(
    conn: Connection,
    archive_dir: Path,
    cutoff: str,
    *,
    scratch_dir: Path | None = None,
    progress: Progress | None = None,
    before_move: Callable[[Path], None] | None = None,
) -> ArchiveReport:
    """Move events recorded before ``cutoff`` into year segments; idempotent, safe to kill and rerun.

    Only events the projection has already applied move (the projection keeps representing them);
    bring it up to date first to move everything old. ``before_move`` is called with each segment
    file once it is durable and before the transaction (tests stop the process there).
    """
    make_private_dir(archive_dir)
    scratch_dir = scratch_dir or archive_dir
    report = ArchiveReport(cutoff=cutoff, removed_partial=_remove_partials(archive_dir))
    report.adopted = _adopt_orphans(conn, archive_dir, scratch_dir)
    through = get_checkpoint(conn)
    table_sql = store.events_table_sql(conn)
    for year in store.candidate_years(conn, cutoff, through):
        taken = {s.archive_path for s in store.segments(conn)} | {p.name for p in archive_dir.iterdir()}
        name = _segment_name(year, taken)
        segment_id = f"{name.removesuffix('.db.zst')}@{now_iso()}"
        target = archive_dir / name
        raw = archive_dir / f"{name}.raw.tmp"
        try:
            rows = store.candidate_rows(conn, year, cutoff, through)
            if progress:
                rows = _counted(rows, lambda n, y=year: progress(f"archive {y}", n))
            found = store.write_segment_db(raw, table_sql, segment_id, rows)
            _fsync_path(raw)
            compressed = compress(raw, target)
            if before_move:
                before_move(target)
            segment = _segment(segment_id, name, found, compressed)
            try:
                store.move_out(conn, raw, segment)
            except ValueError as exc:  # the live rows changed under us: the file stays, a rerun re-checks it
                raise ArchiveError(f"{exc}; nothing was moved, rerun `nous archive`") from None
        finally:
            raw.unlink(missing_ok=True)
        report.segments.append(segment)
    return report


def _counted(rows: Iterator[tuple], tick: Callable[[int], None]) -> Iterator[tuple]:
    for n, row in enumerate(rows, 1):
        if n % 10_000 == 0:
            tick(n)
        yield row


def resolve(archive_dir: Path, given: str) -> Path:
    """A segment named on the command line: a path, or a file name in the archive directory."""
    path = Path(given).expanduser()
    if path.is_file():
        return path
    if (archive_dir / given).is_file():
        return archive_dir / given
    raise ArchiveError(
        f"no archive segment {given!r} (neither a file nor in {archive_dir}); `nous archive --list` shows them"
    )


def restore(conn: Connection, archive_dir: Path, given: str, *, scratch_dir: Path | None = None) -> RestoreReport:
    """Merge a segment back into the live log after verifying its checksum; idempotent."""
    path = resolve(archive_dir, given)
    listed = store.segment_by_path(conn, path.name) if path.parent.resolve() == archive_dir.resolve() else None
    with _unpacked(path, scratch_dir or archive_dir) as raw:
        segment_id, found = _verified_digest(raw, path)
        if listed is not None and listed.stream_checksum_sha256 != found.sha256:
            raise ArchiveError(
                f"{path}: checksum mismatch with the catalogue (recorded {listed.stream_checksum_sha256[:12]}…, "
                f"file {found.sha256[:12]}…); nothing was restored"
            )
        known = listed is not None or any(s.segment_id == segment_id for s in store.segments(conn))
        try:
            inserted = store.merge_back(conn, raw, segment_id, known)
        except ValueError as exc:
            raise ArchiveError(f"{path}: {exc}; nothing was restored") from None
    return RestoreReport(path.name, segment_id, found.count, inserted)


@contextlib.contextmanager
def cold_segments(conn: Connection, archive_dir: Path, scratch_dir: Path) -> Iterator[list[Path]]:
    """Every segment still cold, decompressed and checksum-verified, for a replay that spans all tiers."""
    with contextlib.ExitStack() as stack:
        raws = []
        for segment in store.segments(conn, include_restored=False):
            path = archive_dir / segment.archive_path
            if not path.is_file():
                raise ArchiveError(
                    f"archive segment {path} is missing ({segment.event_count:,} events); put it back (or set "
                    "NOUS_ARCHIVE_DIR to where it is) and rerun"
                )
            raw = stack.enter_context(_unpacked(path, scratch_dir))
            _, found = _verified_digest(raw, path)
            if found.sha256 != segment.stream_checksum_sha256:
                raise ArchiveError(f"{path}: checksum mismatch with the catalogue; the segment was changed")
            raws.append(raw)
        yield raws


def listing(conn: Connection) -> list[store.Segment]:
    """The catalogue, oldest first."""
    return store.segments(conn)



def cold_event_count(conn: Connection) -> int:
    """Events held only in cold segments (0: the live log is the whole history)."""
    return store.archived_count(conn)


def verify_all_tiers(conn: Connection, archive_dir: Path, scratch_dir: Path, policy: Policy) -> VerifyReport:
    """``replay --include-archives --verify``: a replay of cold + live events against the live projection."""
    with cold_segments(conn, archive_dir, scratch_dir) as raws:
        return verify(conn, policy=policy, scratch_dir=scratch_dir, cold_segments=raws)


def rebuild_all_tiers(
    conn: Connection,
    archive_dir: Path,
    scratch_dir: Path,
    policy: Policy,
    progress: Callable[[ProjectionStats], None] | None = None,
) -> ProjectionStats:
    """``replay --include-archives``: rebuild the projection from cold + live events, in ``event_id`` order."""
    with cold_segments(conn, archive_dir, scratch_dir) as raws, tempfile.TemporaryDirectory(
        prefix="nous-replay-", dir=scratch_dir
    ) as tmp:
        scratch_path = Path(tmp) / "all-tiers.db"
        open_db(scratch_path, create=True).close()
        store.copy_live_events(conn, scratch_path)
        scratch = open_db(scratch_path)
        try:
            for raw in raws:
                store.copy_events(scratch, raw)
            return rebuild(conn, policy=policy, progress=progress, events_from=scratch)
        finally:
            scratch.close()

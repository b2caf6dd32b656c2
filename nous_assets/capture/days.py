"""Which UTC days a transcript file has records on, from a byte scan of every ``"timestamp"``.

A session's lines are not in date order: resumed and branched sessions, subagent results and
clock changes put lines of an earlier day after lines of a later one. So the days of a file are
taken from *every* timestamp in it, not from its head and tail; a file is read for each of those
days and each of them is a candidate day for backfills.

The scan is a regular expression over raw bytes (no JSON parsing; ~2 GB/s), read in blocks so a
large file never sits in memory whole. Results are cached per process by ``(path, inode, size,
mtime)``, so the sensor and a multi-day backfill pay for a file once until it changes.

Every timestamp counts, nested ones included (a tool result can quote a record): extra days only
cost an empty read, while a missed day would strand the file's cursor. Canonical Claude Code
timestamps (``…Z``) are read as text; anything else (offsets, epoch numbers) goes through the
parser's :func:`~nous_assets.capture.parser.normalize_timestamp` so both agree on the UTC day.
"""

from __future__ import annotations

import json
import os
import re
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from nous_assets.capture.parser import normalize_timestamp

__all__ = ["FileDays", "clear_cache", "days_in", "file_days", "mtime_day"]

_BLOCK = 4 << 20
_CACHE_MAX = 100_000
_TIMESTAMP = re.compile(
    rb'"timestamp"\s*:\s*(?:"(\d{4}-\d{2}-\d{2})T[\d:.]*Z"|("[^"\\\n]{0,64}"|-?\d[\d.eE+-]{0,30}))'
)
_cache: dict[str, tuple[tuple[int, int, int, int], FileDays]] = {}
_lock = threading.Lock()


@dataclass(frozen=True, slots=True)
class FileDays:
    """The days of one file's records; ``first`` dates records that carry no timestamp of their own."""

    days: frozenset[str]
    first: str | None  # day of the first timestamped line (its last timestamp, as the parser dates it)
    fallback: str  # ``first``, or the file's mtime day when it has no timestamps at all


def mtime_day(st: os.stat_result) -> str:
    return datetime.fromtimestamp(st.st_mtime, UTC).strftime("%Y-%m-%d")


def _day(match: tuple[bytes, bytes]) -> str | None:
    canonical, other = match
    if canonical:
        return canonical.decode()
    try:
        value = json.loads(other)
    except ValueError:
        return None
    stamp = normalize_timestamp(value)
    return stamp[:10] if stamp else None


def _first_day(block: bytes) -> str | None:
    """Day of the first timestamped line: its last timestamp, where Claude Code writes the record's own."""
    pos = 0
    while (m := _TIMESTAMP.search(block, pos)) is not None:
        start = block.rfind(b"\n", 0, m.start()) + 1
        end = block.find(b"\n", m.end())
        end = len(block) if end < 0 else end
        for found in reversed(_TIMESTAMP.findall(block, start, end)):
            day = _day(found)
            if day:
                return day
        pos = end + 1
    return None


def days_in(data: bytes) -> set[str]:
    """The days of every timestamp in ``data`` (a chunk of a transcript)."""
    return {d for d in map(_day, set(_TIMESTAMP.findall(data))) if d}


def _scan(path: Path, st: os.stat_result) -> FileDays:
    found: set[tuple[bytes, bytes]] = set()
    first: str | None = None
    carry = b""
    with open(path, "rb") as fh:
        while True:
            block = fh.read(_BLOCK)
            data = carry + block
            cut = len(data) if not block else data.rfind(b"\n") + 1
            if cut == 0 and block:  # one line longer than a block: keep reading it
                carry = data
                continue
            complete, carry = data[:cut], data[cut:]
            matches = _TIMESTAMP.findall(complete)
            if matches:
                found.update(matches)
                if first is None:
                    first = _first_day(complete)
            if not block:
                break
    days = frozenset(d for d in map(_day, found) if d)
    return FileDays(days, first, first or mtime_day(st))


def file_days(path: str | os.PathLike[str]) -> FileDays | None:
    """The days ``path`` has records on (None when it cannot be read); cached until the file changes."""
    key = os.fspath(path)
    try:
        st = os.stat(key)
        ident = (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
        with _lock:
            hit = _cache.get(key)
        if hit is not None and hit[0] == ident:
            return hit[1]
        result = _scan(Path(key), st)
    except OSError:
        return None
    with _lock:
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = (ident, result)
    return result


def clear_cache() -> None:
    """Forget every cached scan (benchmarks measure the cold path with it)."""
    with _lock:
        _cache.clear()

"""Line numbers of transcript records, for answers that point Claude (or a person) at ``FILE:LINE``.

Nous stores the byte offset of each evidence record, which is exact but not what an editor or ``sed -n``
takes. The number is counted when an answer is shaped, from the transcript itself, under three rules that
keep the server from becoming a file reader:

* only files under the folder the pipeline ingests (the static root of ``project_glob``, resolved, so
  ``..`` or a symlink cannot leave it) and named ``*.jsonl`` are opened; the path comes from our own
  provenance, never from a tool argument;
* the record at the offset must still carry one of the cited uuids, so a rotated or rewritten file gives
  no number rather than a wrong one;
* files are read in blocks and never past :data:`MAX_OFFSET`, so one answer costs milliseconds.

Any failure (missing file, permission, a changed file) means "no line", never an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from nous_assets.capture.discovery import glob_root

BLOCK = 1 << 20
MAX_OFFSET = 256 << 20  # a transcript longer than this before the record gets no number
RECORD_HEAD = 64 << 10  # how much of the record is read to find its uuid


class TranscriptLines:
    """1-based line numbers of records in the transcripts under ``root`` (cached per file state and offset)."""

    def __init__(self, root: Path) -> None:
        self.root = Path(os.path.realpath(root))
        self._cache: dict[tuple[str, int, int, int, int], int | None] = {}

    @classmethod
    def of(cls, project_glob: str) -> TranscriptLines:
        return cls(glob_root(project_glob))

    def number(self, path: str | None, offset: int | None, uuids: Iterable[str] = ()) -> int | None:
        """The line that starts at byte ``offset`` of ``path``; None when it cannot be told for sure."""
        if not path or offset is None or offset < 0 or offset > MAX_OFFSET:
            return None
        real = self._allowed(path)
        if real is None:
            return None
        try:
            st = os.stat(real)
            key = (real, st.st_ino, st.st_size, st.st_mtime_ns, offset)
            if key not in self._cache:
                self._cache[key] = _count(real, offset, tuple(uuids)) if offset < st.st_size else None
            return self._cache[key]
        except OSError:
            return None

    def _allowed(self, path: str) -> str | None:
        real = os.path.realpath(path)
        if not real.endswith(".jsonl") or not Path(real).is_relative_to(self.root):
            return None
        return real


def _count(path: str, offset: int, uuids: tuple[str, ...]) -> int | None:
    with open(path, "rb") as handle:
        newlines, left = 0, offset
        while left > 0:
            block = handle.read(min(BLOCK, left))
            if not block:
                return None
            newlines += block.count(b"\n")
            left -= len(block)
        handle.seek(offset - 1 if offset else 0)
        if offset and handle.read(1) != b"\n":  # the offset is not the start of a line
            return None
        head = handle.read(RECORD_HEAD).split(b"\n", 1)[0]
    if uuids and not any(u.encode() in head for u in uuids):
        return None
    return newlines + 1

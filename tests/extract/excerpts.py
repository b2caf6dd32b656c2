"""Helpers for the extractor tests: real transcript excerpts (by file and line) and hand-made turns.

Real excerpts come from the shared corpus (``../shared/data/transcripts``, ``transcripts-dev2`` and ``-dev3``); a test
names the file and the 1-based JSONL lines it rests on, so a reader can open the same lines.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Sequence
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from nous_assets.capture.parser import ToolResult, ToolUse, Turn, parse_file
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.heuristic import HeuristicExtractor
from nous_assets.extract.rules.session import Stream, build_streams
from nous_assets.extract.schema import validate_learnings

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
DEV = DATA / "transcripts"
DEV2 = DATA / "transcripts-dev2"
DEV3 = DATA / "transcripts-dev3"
SPOTTER_GQC = "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl"
SPOTTER_DOV = "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl"
SPOTTER_FUM = "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
SPOTTER_4TE = "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl"
SPOTTER_A0Y = "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl"
SPOTTER_0RT_EXPLORE = "spotter/6c2214d7-b87e-4432-8e41-22ba294ea584/subagents/agent-afc096d.jsonl"
EPISODIC_LARGE = "episodic-memory/large-conversation.jsonl"
EPISODIC_LONG = "episodic-memory/long-conversation.jsonl"
EPISODIC_TINY = "episodic-memory/tiny-conversation.jsonl"
FASTHOOKS = "fasthooks/sample_main_transcript.jsonl"
CIPHER_DEV = "cipher-box/-Users-michael-Code-cipher-box/2095544c-fa50-4027-b664-c37e578957ce.jsonl"
CIPHER_META = "cipher-box/-Users-michael-Code-cipher-box/0ea9b4b6-40e9-407b-8bb5-a31903367d21.jsonl"
CIPHER_MIGRATION = "cipher-box/-Users-michael-Code-cipher-box/1cd4e81e-c965-4804-bcb3-528cd9728724.jsonl"
CIPHER_OAUTH = "cipher-box/-Users-michael-Code-cipher-box/f14fdf7d-05ad-45e0-b7ed-78c935442e2d.jsonl"
_EVALUATOR = "context-evaluator/-Users-cedricteyton-Code-agents-md-evaluator"
EVAL_TREE = f"{_EVALUATOR}/8ecab05f-4481-43d6-9428-a6b177981877.jsonl"
EVAL_PHANTOM = f"{_EVALUATOR}/31b1be44-3380-444d-8a6f-78bc9463a310.jsonl"
AGENTV_DOCS = "agentv/-home-christso-projects-agentv/acc53d32-5580-4747-9273-e2acff2ba566.jsonl"
IRONCLAW = "ironclaw/-home-alexc-Projects-ironclaw"
IRONCLAW_MERGE = f"{IRONCLAW}/69ab36dd-71af-4a82-aad3-010e919c39c7.jsonl"
IRONCLAW_COVERAGE = f"{IRONCLAW}/005dee17-eda7-475f-9656-e4dd3ce1c130.jsonl"
_FLUTTER = "flutter-docker-image/-home-eligio-Code-worktrees-flutter-docker-image"
FLUTTER_REVIEW = f"{_FLUTTER}-sandy-hill-flutter-docker-image/4382554b-f1e9-425c-9589-29ec37048779.jsonl"
FLUTTER_VERIFY = f"{_FLUTTER}-warm-orbit-flutter-docker-image/9c4f30d9-7a7f-49b7-93b3-062fbf14c199.jsonl"
DUET_README = "duet/-Users-tslater-dev-cli-duet/410c9611-5a08-49a3-9520-28e347223e15.jsonl"
DUET_VAMP = "duet/-Users-tslater-dev-cli-duet/7d911558-dda5-49e9-bf9b-f5cc6f1be85a.jsonl"
WAKIL_CI = "wakil/-Users-ebridges-Projects-wakil/5c5242ad-8f8c-4e31-a7f7-ad2e7b2a94ac.jsonl"
WAKIL_QMD = "wakil/-Users-ebridges-Projects-wakil/09cc95ef-515c-4a06-b5c9-92c68f3679cf.jsonl"


def _path(rel: str) -> Path:
    for root in (DEV, DEV2, DEV3):
        if (root / rel).is_file():
            return root / rel
    pytest.skip(f"shared transcript {rel} not found under {DATA}")


@functools.lru_cache(maxsize=32)
def _parsed(rel: str) -> tuple[tuple[Turn, ...], tuple[int, ...]]:
    """(turns, byte offset of each 1-based line) of a whole transcript file."""
    path = _path(rel)
    starts = [0]
    with open(path, "rb") as fh:
        for line in fh:
            starts.append(starts[-1] + len(line))
    return tuple(parse_file(path, "proj", final=True).turns), tuple(starts)


def line_of(rel: str, turn: Turn) -> int:
    """The 1-based JSONL line a turn starts on."""
    _, starts = _parsed(rel)
    return starts.index(turn.line_offsets[0]) + 1


def excerpt(rel: str, first: int, last: int) -> SessionBatch:
    """The turns of lines ``first``..``last`` (1-based, inclusive) of a real transcript, as one batch."""
    turns, starts = _parsed(rel)
    lo, hi = starts[first - 1], starts[min(last, len(starts) - 1)]
    picked = [t for t in turns if lo <= t.line_offsets[0] < hi]
    return SessionBatch("proj", picked[0].session_id if picked else "s", "2026-01-01", tuple(picked))


def whole(rel: str) -> SessionBatch:
    turns, starts = _parsed(rel)
    return excerpt(rel, 1, len(starts) - 1)


def stream_of(batch: SessionBatch) -> Stream:
    """The batch's main stream (its first stream when there is no main one)."""
    streams = build_streams(batch)
    return next((s for s in streams if not s.sidechain), streams[0])


def extract(batch: SessionBatch) -> list[dict[str, Any]]:
    out = HeuristicExtractor().extract(batch)
    validate_learnings(out)
    return out


def contents(records: Sequence[Any]) -> list[str]:
    """Contents of records (dicts) or candidates (objects with ``.content``)."""
    return [r["content"] if isinstance(r, dict) else r.content for r in records]


def of_kind(out: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [r for r in out if r["kind"] == kind]


# ---------------------------------------------------------------------------------------------------------
# hand-made turns

_ids = count(1)


def _turn(role: str, text: str = "", *, kind: str = "message", **kw: Any) -> Turn:
    n = next(_ids)
    uid = kw.pop("uuid", f"00000000-0000-4000-8000-{n:012d}")
    fields: dict[str, Any] = {
        "uuid": uid,
        "uuids": (uid,),
        "parent_uuid": None,
        "session_id": "sess-1",
        "project_id": "proj",
        "role": role,
        "kind": kind,
        "timestamp": f"2026-02-12T10:{n // 60 % 60:02d}:{n % 60:02d}.000000Z",
        "text": text,
        "thinking": "",
        "tool_uses": (),
        "tool_results": (),
        "message_id": f"msg-{n}" if role == "assistant" else None,
        "request_id": None,
        "model": "claude-test" if role == "assistant" else None,
        "is_sidechain": False,
        "agent_id": None,
        "is_meta": False,
        "is_compact_summary": False,
        "cwd": "/home/dev/proj",
        "git_branch": "main",
        "version": "2.1.39",
        "source_path": "/tmp/sess-1.jsonl",
        "byte_start": n * 100,
        "byte_end": n * 100 + 99,
        "line_offsets": (n * 100,),
    }
    fields.update(kw)
    return Turn(**fields)


def user(text: str, **kw: Any) -> Turn:
    return _turn("user", text, **kw)


def assistant(text: str = "", *uses: ToolUse, **kw: Any) -> Turn:
    return _turn("assistant", text, tool_uses=tuple(uses), **kw)


def bash(command: str, use_id: str) -> ToolUse:
    return ToolUse(use_id, "Bash", json.dumps({"command": command}))


def edit(path: str, use_id: str, old: str = "a = 1", new: str = "a = 2") -> ToolUse:
    return ToolUse(use_id, "Edit", json.dumps({"file_path": path, "old_string": old, "new_string": new}))


def result(use_id: str, text: str, *, is_error: bool = False, **kw: Any) -> Turn:
    return _turn("user", text, kind="tool_result", tool_results=(ToolResult(use_id, text, is_error),), **kw)


def run(*turns: Turn) -> list[dict[str, Any]]:
    return extract(SessionBatch("proj", "sess-1", "2026-02-12", list(turns)))

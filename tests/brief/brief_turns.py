"""Helpers for the brief tests: real sessions grouped by repository, and hand-made sessions.

Real transcripts come from the shared corpus (``../shared/data/transcripts*``): ``real(set, repo)`` parses every
file under ``<set>/<repo>/`` and groups the turns by session (a main session and its subagent files make one
batch), the way the lead passes one project's sessions to :func:`nous_assets.brief.mine_brief`.

``Sess`` writes a session turn by turn: ``bash``/``read``/``edit``/``write`` add an assistant tool call and its
result, ``user`` a user message; timestamps advance one second per turn from ``start``.
"""

from __future__ import annotations

import functools
import json
from datetime import datetime, timedelta
from itertools import count
from pathlib import Path
from typing import Any

import pytest

from nous_assets.capture.parser import parse_file
from nous_assets.extract.base import SessionBatch
from nous_assets.turns import ToolResult, ToolUse, Turn

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
WAKIL_RELEASES = "e2ec427b-968e-4472-adee-3cdae9bf86ac"


@functools.lru_cache(maxsize=16)
def _real(set_name: str, repo: str) -> tuple[SessionBatch, ...]:
    root = DATA / set_name / repo
    if not root.is_dir():
        pytest.skip(f"shared transcripts {set_name}/{repo} not found under {DATA}")
    by_session: dict[str, list[Turn]] = {}
    for path in sorted(root.rglob("*.jsonl")):
        for turn in parse_file(path, repo, final=True).turns:
            by_session.setdefault(turn.session_id, []).append(turn)
    return tuple(SessionBatch(repo, sid, "all", tuple(ts)) for sid, ts in sorted(by_session.items()))


def real(set_name: str, repo: str) -> list[SessionBatch]:
    """Every session of one repository of a shared transcript set (skips when the corpus is missing)."""
    return list(_real(set_name, repo))


_ids = count(1)


class Sess:
    """A hand-made session: tool calls with their results, user messages, one second apart."""

    def __init__(
        self,
        sid: str = "s1",
        *,
        cwd: str = "/home/dev/proj",
        start: str = "2026-03-01T10:00:00",
        branch: str = "main",
        agent: str = "",
    ) -> None:
        self.sid, self.cwd, self.branch, self.agent = sid, cwd, branch, agent
        self.clock = datetime.fromisoformat(start)
        self.turns: list[Turn] = []
        self.user("Please work on the project.")  # the opening task prompt

    def batch(self) -> SessionBatch:
        return SessionBatch("proj", self.sid, self.clock.date().isoformat(), tuple(self.turns))

    def user(self, text: str) -> str:
        return self._add("user", text).uuid

    def bash(self, command: str, output: str = "", *, fail: bool = False, cwd: str | None = None, **inp: Any) -> str:
        """A Bash call; a failure reads like Claude Code reports one (``Exit code 1`` first)."""
        text = f"Exit code 1\n{output}" if fail else output
        return self.call("Bash", {"command": command, **inp}, text, is_error=fail, cwd=cwd)

    def read(self, path: str, text: str, **inp: Any) -> str:
        numbered = "\n".join(f"{i:>6}→{line}" for i, line in enumerate(text.splitlines(), 1))
        return self.call("Read", {"file_path": self._abs(path), **inp}, numbered)

    def edit(self, path: str, old: str = "a = 1", new: str = "a = 2") -> str:
        inp = {"file_path": self._abs(path), "old_string": old, "new_string": new}
        return self.call("Edit", inp, f"The file {self._abs(path)} has been updated successfully.")

    def write(self, path: str, content: str = "x\n") -> str:
        return self.call("Write", {"file_path": self._abs(path), "content": content}, "File created successfully")

    def call(
        self, name: str, inp: dict[str, Any], output: str, *, is_error: bool = False, cwd: str | None = None
    ) -> str:
        use_id = f"toolu_{next(_ids)}"
        turn = self._add("assistant", "", tool_uses=(ToolUse(use_id, name, json.dumps(inp)),), cwd=cwd or self.cwd)
        self._add("user", output, kind="tool_result", tool_results=(ToolResult(use_id, output, is_error),),
                  cwd=cwd or self.cwd)  # fmt: skip
        return turn.uuid

    def _source(self) -> str:
        return f"/tmp/{self.sid}/subagents/agent-{self.agent}.jsonl" if self.agent else f"/tmp/{self.sid}.jsonl"

    def _abs(self, path: str) -> str:
        return path if path.startswith("/") else f"{self.cwd}/{path}"

    def _add(self, role: str, text: str, *, kind: str = "message", **kw: Any) -> Turn:
        n = next(_ids)
        self.clock += timedelta(seconds=1)
        uid = f"00000000-0000-4000-8000-{n:012d}"
        fields: dict[str, Any] = {
            "uuid": uid, "uuids": (uid,), "parent_uuid": None, "session_id": self.sid, "project_id": "proj",
            "role": role, "kind": kind, "timestamp": self.clock.isoformat() + ".000000Z", "text": text,
            "thinking": "", "tool_uses": (), "tool_results": (),
            "message_id": f"msg-{n}" if role == "assistant" else None,
            "request_id": None, "model": "claude-test" if role == "assistant" else None, "is_sidechain": False,
            "agent_id": None, "is_meta": False, "is_compact_summary": False, "cwd": self.cwd, "git_branch": self.branch,
            "version": "2.1.39", "byte_start": n * 100, "source_path": self._source(),
            "byte_end": n * 100 + 99, "line_offsets": (n * 100,),
        }  # fmt: skip
        if self.agent:  # a subagent's transcript: its own file, same session
            fields.update(agent_id=self.agent, is_sidechain=True)
        fields.update(kw)
        turn = Turn(**fields)
        self.turns.append(turn)
        return turn

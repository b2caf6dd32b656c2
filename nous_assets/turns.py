"""The conversation types every stage shares: a :class:`Turn` with its tool calls and results.

``capture/`` produces turns from transcript lines and stores them in the lake; ``extract/`` reads them
back and turns them into learnings. Both import these types from here, below both of them, so neither
package imports the other for a type.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Kind", "Role", "ToolResult", "ToolUse", "Turn"]

Role = Literal["user", "assistant", "system", "summary"]
Kind = Literal[
    "message",
    "tool_result",
    "compact_summary",
    "meta",
    "local_command",
    "compact_boundary",
    "summary",
    "system",
]


@dataclass(frozen=True, slots=True)
class ToolUse:
    """A tool call made by the assistant; ``input_json`` is compact JSON text (stable to hash/store)."""

    id: str
    name: str
    input_json: str


@dataclass(frozen=True, slots=True)
class ToolResult:
    """Output of one tool call, with the ``toolUseResult`` details that change its meaning."""

    tool_use_id: str
    text: str
    is_error: bool
    interrupted: bool = False
    agent_id: str | None = None  # set on Task/Agent results: the subagent that produced this output


@dataclass(frozen=True, slots=True)
class Turn:
    """One conversational unit: a user/system record, or all lines of one assistant API response.

    ``byte_start``/``byte_end`` span the first to the last merged line; lines of other records may sit in
    between (tool results interleave with parallel tool calls), so ``line_offsets`` lists the exact lines.
    """

    uuid: str
    uuids: tuple[str, ...]
    parent_uuid: str | None
    session_id: str
    project_id: str
    role: Role
    kind: Kind
    timestamp: str | None
    text: str
    thinking: str
    tool_uses: tuple[ToolUse, ...]
    tool_results: tuple[ToolResult, ...]
    message_id: str | None
    request_id: str | None
    model: str | None
    is_sidechain: bool
    agent_id: str | None
    is_meta: bool
    is_compact_summary: bool
    cwd: str | None
    git_branch: str | None
    version: str | None
    source_path: str
    byte_start: int
    byte_end: int
    line_offsets: tuple[int, ...]
    subtype: str | None = None  # system subtype (compact_boundary, local_command)
    logical_parent_uuid: str | None = None  # compact_boundary: the turn before compaction

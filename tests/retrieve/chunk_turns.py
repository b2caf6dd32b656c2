"""One transcript turn for the chunk index, as the retrieval tests build their sessions (``upsert_chunks``)."""

from __future__ import annotations

from nous_assets.capture.parser import Turn


def chunk_turn(n: int, text: str, *, role: str, project: str = "-home-dev-app", session: str = "s1",
               day: str = "2026-02-10", cwd: str = "/home/dev/app") -> Turn:  # fmt: skip
    """Turn ``n`` of ``session`` (uuid ``<session>-u<n>``, said at 10:00:<n> on ``day``, line ``n``)."""
    return Turn(uuid=f"{session}-u{n}", uuids=(f"{session}-u{n}",), parent_uuid=None, session_id=session,
                project_id=project, role=role, kind="message", timestamp=f"{day}T10:00:{n:02d}.000000Z", text=text,
                thinking="", tool_uses=(), tool_results=(), message_id=None, request_id=None, model=None,
                is_sidechain=False, agent_id=None, is_meta=False, is_compact_summary=False, cwd=cwd,
                git_branch="main", version=None, source_path="/x.jsonl", byte_start=0, byte_end=10,
                line_offsets=(n,))  # fmt: skip

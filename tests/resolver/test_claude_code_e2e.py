"""The real Claude Code CLI runs the hook `nous hooks install` wrote and receives the source-aware packet.

Claude Code runs its SessionStart hooks before it calls the API, so with no network (and a dummy key) it
still executes them and logs the outcome to its debug file (../shared/notes/claude-code-2026.md). The
CLI comes from the npm registry (`make setup` installs it into `.e2e/`); where npm or the platform's
binary is missing the test is skipped with that reason.

Sources the CLI produces offline, one test each: ``startup`` (``claude -p``), ``resume`` (``--resume ID`` on a
transcript the test writes, and ``--continue``), ``fork`` (``--resume ID --fork-session``) and ``clear``
(``claude -p /clear``: a startup, then a clear). ``compact`` (``claude -p /compact --resume ID``) needs the API to
write the summary before its SessionStart hooks run: offline, that test points the CLI (``ANTHROPIC_BASE_URL``)
at a stand-in for the Messages API on 127.0.0.1 (:class:`_StandInAPI`, one streamed summary for any request);
Claude Code itself, its hook runner and our hook are the real ones. The other tests point it at a loopback port
that refuses connections (:func:`refused_url`): the API is as unreachable as offline, and Claude Code, given an API
other than Anthropic's, does not fetch the organisation's managed settings and policy limits first (offline those
fetches retry for ~18 s before anything else happens: "Remote settings: Retry 5/5" in the debug log).
"""

from __future__ import annotations

import json
import os
import socket
import sqlite3
import subprocess
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.resolver.cache_rows import store_only_packet

REPO = Path(__file__).resolve().parents[2]
SESSION = "5b0c3a52-1f7e-4d2a-9c11-6f0e2d9a7b31"
MEMORIES = {
    21: {"content": "Run make check before committing", "kind": "workflow", "type": "procedure",
         "valid_from": "2026-01-02", "source_ref": "Makefile"},
    22: {"content": "Never delete cortex.db-wal by hand", "kind": "gotcha", "type": "knowledge",
         "valid_from": "2026-01-03"},
    23: {"content": "Dagster orchestrates the pipeline", "kind": "decision", "type": "knowledge",
         "valid_from": "2026-01-04"},
    24: {"content": "Migrations are numbered SQL files applied in order", "kind": "decision", "type": "knowledge",
         "valid_from": "2026-01-05"},
}  # fmt: skip
FIRST = (21, 22, 23)


def claude_binary() -> Path | None:
    found = sorted((REPO / ".e2e" / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    return found[0] if found and os.access(found[0], os.X_OK) else None


needs_claude = pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/ (npm?)")


def refused_url(held: list[socket.socket]) -> str:
    """An API base URL on a loopback port that is bound but never listens (the socket is added to ``held``, open
    until the test ends): every connection to it is refused at once."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    held.append(sock)
    return f"http://127.0.0.1:{sock.getsockname()[1]}"


class Setup:
    """`nous init` + a packet for the project + `nous hooks install`, and the real CLI run in the project."""

    def __init__(self, nous_env: dict[str, str], tmp_path: Path) -> None:
        from nous_assets.cli import main

        assert main(["init"]) == 0
        self.tmp = tmp_path
        self.data_dir = Path(nous_env["NOUS_DATA_DIR"])
        self.db = self.data_dir / "cortex.db"
        self.config_dir = Path(nous_env["CLAUDE_CONFIG_DIR"])
        self.project = tmp_path / "e2e project"
        self.project.mkdir()
        assert main(["hooks", "install"]) == 0
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_"))}
        self.held: list[socket.socket] = []
        self.env.update(HOME=str(tmp_path / "bare-home"), CLAUDE_CONFIG_DIR=str(self.config_dir),
                        ANTHROPIC_API_KEY="dummy", ANTHROPIC_BASE_URL=refused_url(self.held),
                        DISABLE_AUTOUPDATER="1")  # fmt: skip
        self.runs = 0

    def packet(self, ids: tuple[int, ...]) -> str:
        from nous_assets.retrieve.packet import format_packet
        from resolver.project import project_id_from_cwd

        built = format_packet(list(ids), MEMORIES, budget_chars=4_000, title="Nous memory for this project")
        store_only_packet(self.db, project_id_from_cwd(str(self.project)), built.text, built.memory_ids)
        return built.text

    def transcript(self) -> None:
        """A two-message session ``SESSION`` where Claude Code keeps it, so ``--resume`` / ``--continue`` find it."""
        from resolver.project import project_id_from_cwd

        folder = self.config_dir / "projects" / project_id_from_cwd(str(self.project))
        folder.mkdir(parents=True, exist_ok=True)
        common = {"sessionId": SESSION, "cwd": str(self.project), "version": "2.1.330", "isSidechain": False,
                  "userType": "external", "gitBranch": ""}  # fmt: skip
        user = {"type": "user", "message": {"role": "user", "content": "remember the word banana"},
                "uuid": "aaaaaaaa-0000-4000-8000-000000000001", "parentUuid": None,
                "timestamp": "2026-11-27T10:00:00.000Z", **common}  # fmt: skip
        answer = {"type": "assistant", "uuid": "aaaaaaaa-0000-4000-8000-000000000002",
                  "parentUuid": "aaaaaaaa-0000-4000-8000-000000000001", "timestamp": "2026-11-27T10:00:01.000Z",
                  "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                              "content": [{"type": "text", "text": "OK."}], "stop_reason": "end_turn",
                              "stop_sequence": None, "usage": {"input_tokens": 1, "output_tokens": 1}},
                  **common}  # fmt: skip
        (folder / f"{SESSION}.jsonl").write_text(json.dumps(user) + "\n" + json.dumps(answer) + "\n")

    def hook(self, source: str, session_id: str) -> str:
        """The installed SessionStart command run directly (as at the session's start); its context."""
        from nous_assets.hooks import installed_hooks

        ((_, entry),) = installed_hooks(self.config_dir / "settings.json")["SessionStart"]
        body = json.dumps({"session_id": session_id, "cwd": str(self.project), "source": source})
        proc = subprocess.run(entry["command"], shell=True, input=body, capture_output=True, text=True,
                              env=self.env, cwd=self.project, timeout=30)  # fmt: skip
        return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout.strip() else ""

    def claude(self, *args: str, until: Callable[[str], bool]) -> str:
        """Run the real CLI with ``args`` until its debug log satisfies ``until`` (60 s at most); the log."""
        self.runs += 1
        debug = self.tmp / f"claude-debug-{self.runs}.log"
        proc = subprocess.Popen([str(claude_binary()), *args, "--debug-file", str(debug)], cwd=self.project,
                                env=self.env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)  # fmt: skip
        try:
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                text = debug.read_text(errors="replace") if debug.exists() else ""
                if until(text) or proc.poll() is not None:
                    break
                time.sleep(0.2)
            time.sleep(0.5)  # the lines that follow the one waited for
        finally:
            proc.kill()
            proc.wait(10)
        return debug.read_text(errors="replace") if debug.exists() else ""

    def logged(self) -> list[tuple[int, str, str]]:
        conn = sqlite3.connect(self.db)
        try:
            rows = conn.execute("SELECT memory_id, source, session_id FROM access_log ORDER BY id").fetchall()
        finally:
            conn.close()
        return [tuple(r) for r in rows]


def _finished(source: str) -> Callable[[str], bool]:
    """Whether the log shows our SessionStart hook for ``source`` finished (whatever it printed)."""
    marker = f"SessionStart:{source} ["
    return lambda log: marker in log and "finished with status" in log.split(marker)[-1]


def _provided(log: str) -> list[int]:
    """The sizes of the additionalContexts Claude Code accepted from hooks, in order."""
    sizes = []
    for piece in log.split("provided additionalContext (")[1:]:
        sizes.append(int(piece.split(" chars)", 1)[0]))
    return sizes


@pytest.fixture
def cc(nous_env: dict[str, str], tmp_path: Path):
    setup = Setup(nous_env, tmp_path)
    yield setup
    for sock in setup.held:
        sock.close()


class _StandInAPI(BaseHTTPRequestHandler):
    """Answers every Messages API request with one short summary, streamed as the API streams (server-sent events),
    so ``/compact`` can finish offline. Records the paths it was asked for."""

    asked: list[str] = []
    SUMMARY = "<summary>The user asked to remember the word banana.</summary>"

    def log_message(self, *args) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        self.asked.append(self.path)
        message = {"id": "msg_standin", "type": "message", "role": "assistant", "model": request.get("model", "m"),
                   "content": [], "stop_reason": None, "stop_sequence": None,
                   "usage": {"input_tokens": 10, "output_tokens": 1}}  # fmt: skip
        if not request.get("stream"):
            message.update(content=[{"type": "text", "text": self.SUMMARY}], stop_reason="end_turn")
            body = json.dumps(message).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        events = [
            {"type": "message_start", "message": message},
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": self.SUMMARY}},
            {"type": "content_block_stop", "index": 0},
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None},
             "usage": {"output_tokens": 12}},
            {"type": "message_stop"},
        ]  # fmt: skip
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        for event in events:
            self.wfile.write(f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode())
            self.wfile.flush()


@pytest.fixture
def stand_in_api():
    _StandInAPI.asked = []
    server = ThreadingHTTPServer(("127.0.0.1", 0), _StandInAPI)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.slow
@needs_claude
def test_startup_gets_the_full_packet(cc: Setup) -> None:
    full = cc.packet(FIRST)
    log = cc.claude("-p", "hi", until=lambda log: "provided additionalContext" in log)
    assert "SessionStart:startup [" in log and "resolver/launch.py session-start --data-dir" in log
    assert _provided(log) == [len(full)]
    assert all(line.replace("`", "") in log.replace("`", "") for line in full.split("\n") if line.startswith("- "))
    assert sorted((i, s) for i, s, _ in cc.logged()) == sorted((i, "session-start:startup") for i in FIRST)


@pytest.mark.slow
@needs_claude
def test_resume_gets_only_what_is_new_since_the_sessions_packet(cc: Setup) -> None:
    from resolver import inject

    cc.packet(FIRST)
    cc.transcript()
    assert cc.hook("startup", SESSION)  # the session's own start: the packet, logged for SESSION
    log = cc.claude("-p", "hi", "--resume", SESSION, until=_finished("resume"))
    assert _finished("resume")(log) and _provided(log) == []  # nothing new: nothing injected

    cc.packet((*FIRST, 24))  # the pipeline learned something since
    expected = inject.context_for({"session_id": SESSION, "cwd": str(cc.project), "source": "resume"}, cc.db)
    assert "Migrations are numbered" in expected and "Run make check" not in expected
    log = cc.claude("-p", "hi", "--resume", SESSION, until=lambda log: "provided additionalContext" in log)
    assert "SessionStart:resume [" in log and _provided(log) == [len(expected)]
    assert [(i, s) for i, s, sid in cc.logged() if s == "session-start:resume"] == [(24, "session-start:resume")]


@pytest.mark.slow
@needs_claude
def test_continue_is_a_resume(cc: Setup) -> None:
    cc.packet(FIRST)
    cc.transcript()
    cc.hook("startup", SESSION)
    cc.packet((*FIRST, 24))
    log = cc.claude("-p", "hi", "--continue", until=lambda log: "provided additionalContext" in log)
    assert "SessionStart:resume [" in log and len(_provided(log)) == 1
    assert [(i, sid) for i, s, sid in cc.logged() if s == "session-start:resume"] == [(24, SESSION)]


@pytest.mark.slow
@needs_claude
def test_fork_gets_the_full_packet_since_claude_code_names_no_parent(cc: Setup) -> None:
    """2.1.330 gives a fork a new session id, no parent field, and writes its transcript after the hooks: the
    resolver cannot tell what the parent had, so the fork gets everything (Claude Code then drops it, #93458)."""
    full = cc.packet(FIRST)
    cc.transcript()
    cc.hook("startup", SESSION)
    log = cc.claude("-p", "hi", "--resume", SESSION, "--fork-session", until=_finished("fork"))
    assert _finished("fork")(log)
    forked = [(i, sid) for i, s, sid in cc.logged() if s == "session-start:fork"]
    assert sorted(i for i, _ in forked) == sorted(FIRST) and {sid for _, sid in forked} - {SESSION}
    assert _provided(log) in ([], [len(full)])  # accepted or dropped, by Claude Code's version


@pytest.mark.slow
@needs_claude
def test_clear_gets_the_full_packet_again(cc: Setup) -> None:
    full = cc.packet(FIRST)
    log = cc.claude("-p", "/clear", until=lambda log: log.count("provided additionalContext") >= 2)
    assert "SessionStart:startup [" in log and "SessionStart:clear [" in log
    assert _provided(log) == [len(full), len(full)]
    cleared = [(i, sid) for i, s, sid in cc.logged() if s == "session-start:clear"]
    assert sorted(i for i, _ in cleared) == sorted(FIRST)


@pytest.mark.slow
@needs_claude
def test_compact_gets_the_rules_again(cc: Setup, stand_in_api: str) -> None:
    from resolver import inject

    cc.packet(FIRST)
    cc.transcript()
    cc.hook("startup", SESSION)
    expected = inject.context_for({"session_id": SESSION, "cwd": str(cc.project), "source": "compact"}, cc.db)
    assert "Run make check" in expected and "Never delete" in expected and "Dagster" not in expected
    cc.env["ANTHROPIC_BASE_URL"] = stand_in_api
    log = cc.claude("-p", "/compact", "--resume", SESSION, until=lambda log: "provided additionalContext" in log)
    assert _StandInAPI.asked, "the CLI never asked the stand-in API for the summary"
    assert _finished("resume")(log) and "SessionStart:compact [" in log
    assert _provided(log) == [len(expected)]  # the resume before it had nothing new
    compacted = [(i, sid) for i, s, sid in cc.logged() if s == "session-start:compact"]
    assert sorted(compacted) == [(21, SESSION), (22, SESSION)]

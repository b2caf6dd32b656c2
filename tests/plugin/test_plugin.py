"""`nous plugin install` writes a Claude Code plugin, and the real Claude Code CLI (2.1.330) validates it, loads it,
lists its commands, runs its SessionStart hook and a slash command, and calls the MCP server's `remember` and
`recall`.

The only stand-in is at the network boundary: a local HTTP server speaking the Anthropic Messages API (streamed
server-sent events), at ANTHROPIC_BASE_URL, that plays the model: it asks for the plugin's tools with ToolSearch
(Claude Code defers MCP tools until their server has connected) and then calls them, so the real CLI starts and
calls our real MCP server. Everything it was sent is kept, so the test reads what the CLI handed "the model":
the hook's packet, the slash command's expanded prompt, the tools' results.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from nous_assets.cli import main
from nous_assets.plugin import COMMANDS
from nous_assets.store.db import open_db
from resolver.project import project_id_from_cwd

REPO = Path(__file__).resolve().parents[2]
PACKET = "# Nous packet for the plugin project: run make check before committing"
REMEMBER = "mcp__plugin_nous_nous__remember"
RECALL = "mcp__plugin_nous_nous__recall"
LEARNING = "The plugin project releases on Thursdays only; the user asked Claude to keep this"


def claude_binary() -> Path | None:
    found = sorted((REPO / ".e2e" / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    return found[0] if found and os.access(found[0], os.X_OK) else None


needs_claude = pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/")


# ----------------------------------------------------------------------------------------------- writing


def test_install_writes_the_plugin_with_the_settings_installs_own_entries(nous_env, tmp_path, capsys):
    target = tmp_path / "plugin"
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    assert "claude --plugin-dir" in capsys.readouterr().out
    assert main(["hooks", "install"]) == 0
    assert main(["mcp", "install"]) == 0
    config = Path(nous_env["CLAUDE_CONFIG_DIR"])
    settings_hooks = json.loads((config / "settings.json").read_text())["hooks"]
    server = json.loads((config / ".claude.json").read_text())["mcpServers"]["nous"]
    assert json.loads((target / "hooks" / "hooks.json").read_text())["hooks"] == settings_hooks
    assert json.loads((target / ".mcp.json").read_text()) == {"mcpServers": {"nous": server}}
    manifest = json.loads((target / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == "nous" and manifest["version"].count(".") == 2
    assert sorted(p.stem for p in (target / "commands").glob("*.md")) == sorted(c.name for c in COMMANDS) == [
        "forget", "metrics", "packet", "review", "status"]  # fmt: skip
    launcher = target / "bin" / "nous"
    assert os.access(launcher, os.X_OK)
    status = subprocess.run([str(launcher), "status"], capture_output=True, text=True, timeout=120,
                            env={"PATH": "/usr/bin:/bin", "HOME": nous_env["HOME"]})  # fmt: skip
    assert status.returncode == 0 and nous_env["NOUS_DATA_DIR"] in status.stdout, status.stderr


def test_reinstall_is_idempotent_and_repairs_what_changed(nous_env, tmp_path, capsys):
    target = tmp_path / "plugin"
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    files = sorted(p for p in target.rglob("*") if p.is_file())
    stamps = {p: p.stat().st_mtime_ns for p in files}
    capsys.readouterr()
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert {p: p.stat().st_mtime_ns for p in files} == stamps
    (target / "commands" / "status.md").write_text("edited by hand")
    (target / "commands" / "old-command.md").write_text("left by an older version")
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    out = capsys.readouterr().out
    assert "wrote 1 file(s)" in out and "removed commands/old-command.md" in out
    assert "nous status" in (target / "commands" / "status.md").read_text()
    assert not list(target.glob("**/.*.tmp-*"))


def test_an_unwritable_or_foreign_dir_is_one_line_and_help_explains(nous_env, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert main(["plugin", "install", "--dir", str(blocker / "plugin")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "is a file, not a folder; choose another --dir" in err
    assert not (tmp_path / "a-file").is_dir()
    other = tmp_path / "their-plugin"
    (other / ".claude-plugin").mkdir(parents=True)
    (other / ".claude-plugin" / "plugin.json").write_text('{"name": "their-tools"}')
    (other / "commands").mkdir()
    (other / "commands" / "deploy.md").write_text("theirs")
    assert main(["plugin", "install", "--dir", str(other)]) == 2
    assert "plugin.json there is not Nous's (name 'their-tools'); nothing was changed" in capsys.readouterr().err
    assert sorted(p.name for p in other.rglob("*") if p.is_file()) == ["deploy.md", "plugin.json"]
    with pytest.raises(SystemExit) as exit_:
        main(["plugin", "--help"])
    assert exit_.value.code == 0
    text = " ".join(capsys.readouterr().out.split())
    for words in ("--plugin-dir", "claude plugin marketplace add DIR", "nous hooks install", "/nous:forget", "--dir"):
        assert words in text


# ------------------------------------------------------------------------------------- the real CLI


def _claude_env(nous_env: dict[str, str], base_url: str | None = None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_", "CLAUDE"))}
    env.update(HOME=nous_env["HOME"], CLAUDE_CONFIG_DIR=nous_env["CLAUDE_CONFIG_DIR"], ANTHROPIC_API_KEY="dummy",
               DISABLE_AUTOUPDATER="1")  # fmt: skip
    if base_url:
        env["ANTHROPIC_BASE_URL"] = base_url
    return env


@pytest.mark.slow
@needs_claude
def test_claude_plugin_validate_passes_strict_and_lists_the_commands(nous_env, tmp_path):
    target = tmp_path / "plugin"
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    for path in (target, target / ".claude-plugin" / "plugin.json"):  # as a marketplace, and as a plugin
        proc = subprocess.run([str(claude_binary()), "plugin", "validate", "--strict", "--json", str(path)],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path,
                              env=_claude_env(nous_env), stdin=subprocess.DEVNULL)  # fmt: skip
        assert proc.returncode == 0, proc.stdout + proc.stderr
        report = json.loads(proc.stdout)
        assert report["success"] is True and not report["manifest"]["errors"] and not report["manifest"]["warnings"]
        provides = report["provides"]
        assert provides["commands"] == [f"nous:{c}" for c in ("forget", "metrics", "packet", "review", "status")]
        assert [h["event"] for h in provides["hooks"]] == ["SessionStart", "Stop", "PreCompact"]
        assert [s["name"] for s in provides["mcpServers"]] == ["nous"]


class _Model(BaseHTTPRequestHandler):
    """The Messages API as a scripted model: ToolSearch until the plugin's tools are there, then each call of
    ``server.script`` once, then a short text. Every request body is appended to ``server.requests``."""

    server: Any

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        self.send_response(404)
        self.end_headers()

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
        self.server.requests.append({"path": self.path, **body})
        if not self.path.startswith("/v1/messages") or "count_tokens" in self.path:
            return self._json({"input_tokens": 10})
        blocks = self._next(body)
        stop = "tool_use" if blocks[0]["type"] == "tool_use" else "end_turn"
        if not body.get("stream"):
            return self._json({"id": "msg_stub", "type": "message", "role": "assistant", "model": body.get("model"),
                               "content": blocks, "stop_reason": stop, "stop_sequence": None,
                               "usage": {"input_tokens": 10, "output_tokens": 5}})  # fmt: skip
        self._stream(body.get("model"), blocks, stop)

    def _next(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if not any(t.get("name") == "ToolSearch" for t in body.get("tools", [])) or not self.server.script:
            return [{"type": "text", "text": "ok"}]
        called, last = [], None
        for message in body.get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"), list) else []:
                if block.get("type") == "tool_use":
                    called.append(block["name"])
                if block.get("type") == "tool_result":
                    last = json.dumps(block.get("content"))
        pending = [(name, args) for name, args in self.server.script if name not in called]
        if not pending:
            return [{"type": "text", "text": "done"}]
        if ToolSearchState.needs_search(called, last):
            time.sleep(1 if called else 0)
            query = "select:" + ",".join(name for name, _ in self.server.script)
            return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": "ToolSearch",
                     "input": {"query": query, "max_results": 5}}]  # fmt: skip
        name, args = pending[0]
        return [{"type": "tool_use", "id": f"toolu_{uuid.uuid4().hex[:20]}", "name": name, "input": args}]

    def _json(self, data: dict[str, Any]) -> None:
        raw = json.dumps(data).encode()
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def _stream(self, model: Any, blocks: list[dict[str, Any]], stop: str) -> None:
        events: list[tuple[str, dict[str, Any]]] = [("message_start", {"type": "message_start", "message": {
            "id": f"msg_{uuid.uuid4().hex[:20]}", "type": "message", "role": "assistant", "model": model,
            "content": [], "stop_reason": None, "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1}}})]  # fmt: skip
        for i, block in enumerate(blocks):
            if block["type"] == "text":
                start, delta = {"type": "text", "text": ""}, {"type": "text_delta", "text": block["text"]}
            else:
                start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
                delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
            events += [("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}),
                       ("content_block_delta", {"type": "content_block_delta", "index": i, "delta": delta}),
                       ("content_block_stop", {"type": "content_block_stop", "index": i})]  # fmt: skip
        events += [("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                                      "usage": {"output_tokens": 5}}),
                   ("message_stop", {"type": "message_stop"})]  # fmt: skip
        self.send_response(200)
        self.send_header("content-type", "text/event-stream")
        self.end_headers()
        for name, data in events:
            self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
        self.wfile.flush()


class ToolSearchState:
    @staticmethod
    def needs_search(called: list[str], last_result: str | None) -> bool:
        """Search first, and again while the answer says the plugin's server is still connecting."""
        if "ToolSearch" not in called:
            return True
        return called[-1] == "ToolSearch" and last_result is not None and "still connecting" in last_result


@contextmanager
def _model(script: list[tuple[str, dict[str, Any]]]) -> Iterator[ThreadingHTTPServer]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Model)
    server.requests, server.script = [], script  # type: ignore[attr-defined]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def project(nous_env, tmp_path) -> tuple[Path, Path]:
    """(the project directory, the installed plugin) with a packet for the project in a fresh database."""
    assert main(["init"]) == 0
    where = tmp_path / "plugin project"
    where.mkdir()
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    conn.execute(
        "INSERT INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, "
        "char_count, built_from_event_id, created_at) VALUES ('k', ?, 'project', '{}', ?, '[7]', ?, 1, "
        "'2026-01-01T00:00:00.000000Z')",
        (project_id_from_cwd(str(where)), PACKET, len(PACKET)),
    )
    conn.commit()
    conn.close()
    plugin = tmp_path / "plugin"
    assert main(["plugin", "install", "--dir", str(plugin)]) == 0
    return where, plugin


def _run_claude(nous_env, where: Path, plugin: Path, prompt: str, base_url: str, debug: Path, *extra: str):
    return subprocess.run(
        [str(claude_binary()), "-p", prompt, "--plugin-dir", str(plugin), "--debug-file", str(debug), *extra],
        cwd=where, env=_claude_env(nous_env, base_url), stdin=subprocess.DEVNULL, capture_output=True, text=True,
        timeout=240,
    )  # fmt: skip


def _texts(requests: list[dict[str, Any]]) -> str:
    return json.dumps([r.get("messages") for r in requests])


@pytest.mark.slow
@needs_claude
def test_the_cli_loads_the_plugin_runs_its_hook_and_calls_remember_and_recall(nous_env, project, tmp_path):
    where, plugin = project
    debug = tmp_path / "claude-debug.log"
    script = [(REMEMBER, {"text": LEARNING, "project": ".", "kind": "convention"}),
              (RECALL, {"query": "when does the plugin project release", "project": "."})]  # fmt: skip
    with _model(script) as server:
        proc = _run_claude(nous_env, where, plugin, "Remember: we release on Thursdays only.",
                           f"http://127.0.0.1:{server.server_port}", debug,
                           "--allowedTools", f"ToolSearch,{REMEMBER},{RECALL}")  # fmt: skip
        requests = list(server.requests)
    log = debug.read_text(errors="replace")
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "Loaded inline plugin from path: nous" in log and "Loaded 5 commands from plugin nous" in log
    assert f"provided additionalContext ({len(PACKET)} chars)" in log and "launch.py session-start" in log
    assert 'MCP server "plugin:nous:nous": Successfully connected' in log
    sent = _texts(requests)
    assert PACKET in sent  # the hook's packet reached the model
    results = [b for r in requests for m in r.get("messages", []) if isinstance(m.get("content"), list)
               for b in m["content"] if b.get("type") == "tool_result"]  # fmt: skip
    answers = [a for a in map(_answer, results) if a is not None]
    remembered = next((a for a in answers if a.get("stored") is True), None)
    assert remembered is not None, [_result_text(b)[:300] for b in results]
    assert remembered["project"] == project_id_from_cwd(str(where)) and remembered["kind"] == "convention"
    recalled = [a for a in answers if "results" in a]
    assert recalled and recalled[-1]["results"][0]["memory"] == remembered["memory"]
    assert "Thursdays" in recalled[-1]["results"][0]["text"]
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    try:
        rows = conn.execute("SELECT source, session_id FROM learning_events WHERE event_id = ?",
                            (remembered["memory"],)).fetchall()  # fmt: skip
    finally:
        conn.close()
    assert [tuple(r) for r in rows] == [("agent", "mcp-remember")]


def _answer(block: dict[str, Any]) -> dict[str, Any] | None:
    """A tool result's JSON object (our tools answer JSON), None for any other result."""
    try:
        value = json.loads(_result_text(block))
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, list):
        return "".join(c.get("text", "") for c in content if isinstance(c, dict))
    return content if isinstance(content, str) else ""


@pytest.mark.slow
@needs_claude
def test_a_slash_command_runs_the_nous_cli_on_the_recorded_data_dir(nous_env, project, tmp_path):
    where, plugin = project
    debug = tmp_path / "claude-debug.log"
    with _model([]) as server:
        proc = _run_claude(nous_env, where, plugin, "/nous:packet", f"http://127.0.0.1:{server.server_port}", debug)
        requests = list(server.requests)
    assert proc.returncode == 0, proc.stderr[-2000:]
    sent = _texts(requests)
    assert "<command-name>/nous:packet</command-name>" in sent
    assert "Output of `nous packet" in sent and PACKET in sent.split("Output of `nous packet", 1)[1]


@pytest.fixture
def refused_url():
    """An API base URL on a loopback port bound and never listening: every connection to it is refused at once."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"


@pytest.mark.slow
@needs_claude
def test_the_folder_installs_for_good_from_its_own_marketplace(nous_env, tmp_path, refused_url):
    """The API refuses connections: as unreachable as offline, and Claude Code, given an API other than
    Anthropic's, does not first fetch the organisation's managed settings (its marketplace policy), which offline
    retries for ~20 s per `claude plugin marketplace add` and `claude plugin install`."""
    target = tmp_path / "plugin"
    assert main(["plugin", "install", "--dir", str(target)]) == 0
    env = _claude_env(nous_env, refused_url)

    def claude(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(claude_binary()), "plugin", *args], capture_output=True, text=True, timeout=120,
                              cwd=tmp_path, env=env, stdin=subprocess.DEVNULL)  # fmt: skip

    for args in (("marketplace", "add", str(target)), ("install", "nous@nous-local")):
        proc = claude(*args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
    listed = {p["id"]: p for p in json.loads(claude("list", "--json").stdout)}
    assert listed["nous@nous-local"]["enabled"] is True
    assert listed["nous@nous-local"]["mcpServers"] == json.loads((target / ".mcp.json").read_text())["mcpServers"]
    details = claude("details", "nous@nous-local").stdout
    assert "forget, metrics, packet, review, status" in details and "SessionStart, Stop, PreCompact" in details

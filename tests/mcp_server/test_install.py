"""`nous mcp install|uninstall`: Claude Code's MCP configuration files, round trip.

The user-scope file is Claude Code's own ``.claude.json`` (much more than MCP servers), so every other key
and server must survive; the real Claude Code CLI then connects to what was written.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.cli import main
from nous_assets.errors import ConfigError
from nous_assets.mcp_server import install as mcp_install

REPO = Path(__file__).resolve().parents[2]

CLAUDE_STATE = {
    "numStartups": 42,
    "projects": {"/home/me/app": {"mcpServers": {"local-one": {"type": "stdio", "command": "node", "args": ["x.js"]}}}},
    "mcpServers": {
        "github": {"type": "stdio", "command": "npx", "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_TOKEN": "${GITHUB_TOKEN}"}},
        "notion": {"type": "http", "url": "https://mcp.notion.com/mcp"},
    },
    "oauthAccount": {"emailAddress": "me@example.com"},
}  # fmt: skip


def _backups(path: Path) -> list[Path]:
    return sorted(path.parent.glob(f"{path.name}.bak-*"))


def test_install_round_trip_keeps_other_servers_and_keys(tmp_path: Path):
    path = tmp_path / ".claude.json"
    path.write_text(json.dumps(CLAUDE_STATE, indent=2))
    path.chmod(0o600)
    original = path.read_text()

    report = mcp_install.install(path, sys.executable, data_dir=tmp_path / "data")
    assert report.outcome == "added" and report.backup_path is not None
    assert report.backup_path.read_text() == original  # the backup is the file as it was
    data = json.loads(path.read_text())
    ours = data["mcpServers"]["nous"]
    assert ours == {
        "type": "stdio",
        "command": os.path.abspath(sys.executable),
        "args": ["-I", "-m", "nous_assets.cli", "mcp", "--data-dir", str(tmp_path / "data")],
        "env": {},
    }
    assert {k: v for k, v in data.items() if k != "mcpServers"} == {
        k: v for k, v in CLAUDE_STATE.items() if k != "mcpServers"
    }
    assert {k: v for k, v in data["mcpServers"].items() if k != "nous"} == CLAUDE_STATE["mcpServers"]
    assert path.stat().st_mode & 0o777 == 0o600  # Claude Code's private state stays private

    again = mcp_install.install(path, sys.executable, data_dir=tmp_path / "data")
    assert again.outcome == "unchanged" and again.backup_path is None
    assert len(_backups(path)) == 1 and json.loads(path.read_text()) == data

    moved = mcp_install.install(path, sys.executable, data_dir=tmp_path / "elsewhere", db_path=tmp_path / "x.db")
    assert moved.outcome == "updated"
    args = json.loads(path.read_text())["mcpServers"]["nous"]["args"]
    assert args[-4:] == ["--data-dir", str(tmp_path / "elsewhere"), "--db-path", str(tmp_path / "x.db")]

    assert mcp_install.uninstall(path) == ["nous"]
    assert json.loads(path.read_text()) == CLAUDE_STATE
    assert mcp_install.uninstall(path) == []


def test_a_different_server_called_nous_is_never_overwritten(tmp_path: Path):
    path = tmp_path / ".mcp.json"
    theirs = {"mcpServers": {"nous": {"type": "stdio", "command": "nous-other", "args": []}}}
    path.write_text(json.dumps(theirs))
    with pytest.raises(ConfigError, match="a different MCP server is already called 'nous'"):
        mcp_install.install(path, sys.executable, data_dir=tmp_path)
    assert json.loads(path.read_text()) == theirs and not _backups(path)
    report = mcp_install.install(path, sys.executable, data_dir=tmp_path, name="nous-memory")
    assert report.outcome == "added"
    assert set(json.loads(path.read_text())["mcpServers"]) == {"nous", "nous-memory"}
    assert mcp_install.uninstall(path) == ["nous-memory"]  # only ours, whatever its name
    assert json.loads(path.read_text()) == theirs


@pytest.mark.parametrize("content", ["{not json", "[1, 2]", '{"mcpServers": []}'])
def test_a_malformed_file_is_refused_untouched(tmp_path: Path, content: str):
    path = tmp_path / ".claude.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=str(path)):
        mcp_install.install(path, sys.executable, data_dir=tmp_path)
    assert path.read_text() == content and not _backups(path)


def test_user_scope_follows_claude_config_dir_like_claude_code():
    assert mcp_install.user_config_path(None, Path("/home/me")) == Path("/home/me/.claude.json")
    assert mcp_install.user_config_path("/cfg", Path("/home/me")) == Path("/cfg/.claude.json")
    assert mcp_install.user_config_path("/home/me/.claude", Path("/home/me")) == Path("/home/me/.claude/.claude.json")


def test_cli_install_and_uninstall_for_a_project(nous_env, tmp_path: Path, capsys):
    project = tmp_path / "app"
    project.mkdir()
    assert main(["mcp", "install", "--project", str(project)]) == 0
    out = capsys.readouterr().out
    assert "added" in out and str(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db") in out
    servers = json.loads((project / ".mcp.json").read_text())["mcpServers"]
    assert servers["nous"]["args"][-2:] == ["--data-dir", nous_env["NOUS_DATA_DIR"]]
    assert main(["mcp", "install", "--project", str(project)]) == 0
    assert "already installed" in capsys.readouterr().out
    assert main(["mcp", "uninstall", "--project", str(project)]) == 0
    assert "removed 1" in capsys.readouterr().out
    assert json.loads((project / ".mcp.json").read_text()) == {}


def test_cli_user_scope_writes_claude_config_dir_file(nous_env, capsys):
    assert main(["mcp", "install"]) == 0
    path = Path(nous_env["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    assert "nous" in json.loads(path.read_text())["mcpServers"]
    assert main(["mcp", "install", "--project", "/tmp", "--data-dir", "/x"]) != 0
    assert "--data-dir/--db-path are for the server itself" in capsys.readouterr().err


def test_cli_reports_a_malformed_file_in_one_line(nous_env, tmp_path: Path, capsys):
    (tmp_path / ".mcp.json").write_text("{oops")
    assert main(["mcp", "install", "--project", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nous: config error:") and "Traceback" not in err and len(err.strip().splitlines()) == 1


def claude_binary() -> Path | None:
    found = sorted((REPO / ".e2e" / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    return found[0] if found and os.access(found[0], os.X_OK) else None


@pytest.mark.slow
@pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/ (npm unavailable?)")
def test_real_claude_code_connects_to_the_installed_server(nous_env, tmp_path: Path):
    """`claude mcp get` starts every configured server and checks it answers MCP's initialize."""
    assert main(["init"]) == 0
    assert main(["mcp", "install"]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_"))}
    env.update(HOME=nous_env["HOME"], CLAUDE_CONFIG_DIR=nous_env["CLAUDE_CONFIG_DIR"], DISABLE_AUTOUPDATER="1")
    proc = subprocess.run([str(claude_binary()), "mcp", "get", "nous"], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)  # fmt: skip
    out = proc.stdout + proc.stderr
    assert "Scope: User config" in out and "-m nous_assets.cli mcp --data-dir" in out
    assert "Connected" in out, out


def test_a_server_without_a_database_says_what_to_do(start_server, nous_env, tmp_path: Path):
    """Claude Code may start the server before the first backfill: it serves, and each tool says why it cannot
    answer in one line (no crash, no database created)."""
    data = Path(nous_env["NOUS_DATA_DIR"])
    env = {"HOME": nous_env["HOME"], "CLAUDE_CONFIG_DIR": nous_env["CLAUDE_CONFIG_DIR"]}
    with start_server(data, env, tmp_path / "stderr.log") as client:
        assert len(client.tools()) == 5
        result = client.call("recall", {"query": "how did we fix the build"})
        kept = client.call("remember", {"text": "we release on Thursdays"})
    assert result.is_error and "cortex.db" in result.content[0].text
    assert kept.is_error and "cortex.db" in kept.content[0].text and "\n" not in kept.content[0].text.strip()
    assert not (data / "cortex.db").exists()
    log = (tmp_path / "stderr.log").read_text()
    assert "no database at" in log and "Traceback" not in log

"""Register ``nous mcp`` where Claude Code reads MCP servers, and remove it again.

Claude Code keeps stdio servers under ``mcpServers`` (name -> ``{"type": "stdio", "command", "args",
"env"}``) in two files we write (what ``claude mcp add --scope user|project`` writes, checked against
Claude Code 2.1.330):

* user scope: ``~/.claude.json``, or ``$CLAUDE_CONFIG_DIR/.claude.json`` whenever ``CLAUDE_CONFIG_DIR`` is
  set (even to ``~/.claude``) — a large file of Claude Code's own state, so every other key is preserved;
* project scope: ``.mcp.json`` at the project's root (meant to be shared; it then records this machine's
  interpreter and data dir, so user scope is the default).

Our entry runs this interpreter with ``-I -m nous_assets.cli mcp`` (isolated: the project's directory,
where Claude Code starts servers, cannot shadow our package) and records the data dir (``--data-dir``, and
``--db-path`` when the database lives elsewhere) as ``nous hooks install`` does, so the server reads the
same ``cortex.db`` whatever environment Claude Code has. It is recognised by those arguments, whatever its
name: re-installing updates it in place, uninstalling removes exactly it, and a different server that
happens to be called ``nous`` is never overwritten. The file is backed up before any change and replaced
atomically (the writer ``nous hooks install`` uses).
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.errors import ConfigError
from nous_assets.hooks import read_claude_json, write_with_backup
from resolver.paths import DATA_DIR_OPTION, DB_NAME, DB_PATH_OPTION

SERVER_NAME = "nous"
MODULE_ARGS = ("-m", "nous_assets.cli", "mcp")


@dataclass(frozen=True)
class McpInstallReport:
    path: Path
    name: str
    outcome: str  # added | updated | unchanged
    backup_path: Path | None = None


def user_config_path(claude_config_dir: str | None, home: Path) -> Path:
    """Claude Code's user-scope file: ``$CLAUDE_CONFIG_DIR/.claude.json`` when that variable is set, else
    ``~/.claude.json``."""
    if claude_config_dir:
        return Path(claude_config_dir).expanduser() / ".claude.json"
    return Path(home).expanduser() / ".claude.json"


def project_config_path(project_dir: str | Path) -> Path:
    """The project-scope file, ``DIR/.mcp.json``."""
    return Path(project_dir).expanduser().resolve() / ".mcp.json"


def server_entry(python: str, *, data_dir: str | Path, db_path: str | Path | None = None) -> dict[str, Any]:
    """The ``mcpServers`` value that starts ``nous mcp`` with ``python`` on the given data."""
    if os.sep not in python:
        python = shutil.which(python) or python
    data = _absolute(data_dir)
    args = ["-I", *MODULE_ARGS, DATA_DIR_OPTION, data]
    if db_path is not None and _absolute(db_path) != os.path.join(data, DB_NAME):
        args += [DB_PATH_OPTION, _absolute(db_path)]
    return {"type": "stdio", "command": os.path.abspath(python), "args": args, "env": {}}


def _absolute(path: str | Path) -> str:
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


def is_ours(entry: Any) -> bool:
    """Whether an ``mcpServers`` value starts ``nous_assets.cli mcp``."""
    if not isinstance(entry, dict) or not isinstance(entry.get("args"), list):
        return False
    args = [a for a in entry["args"] if isinstance(a, str)]
    n = len(MODULE_ARGS)
    return any(tuple(args[i : i + n]) == MODULE_ARGS for i in range(len(args) - n + 1))


def installed(path: Path) -> dict[str, dict[str, Any]]:
    """Our entries in ``path`` by server name (empty when the file is absent)."""
    servers = _load(Path(path)).get("mcpServers", {})
    return {name: entry for name, entry in servers.items() if is_ours(entry)}


def install(
    path: Path, python: str, *, data_dir: str | Path, db_path: str | Path | None = None, name: str = SERVER_NAME
) -> McpInstallReport:
    """Add or update our server in ``path``; idempotent, other servers and keys untouched, backup first.

    Raises :class:`ConfigError` (naming the file) for a file that is not a JSON object, an ``mcpServers`` that
    is not an object, or a server called ``name`` that is not ours.
    """
    path = Path(path)
    data = _load(path)
    servers = data.setdefault("mcpServers", {})
    current = servers.get(name)
    if current is not None and not is_ours(current):
        raise ConfigError(
            f"{path}: a different MCP server is already called {name!r}; nothing was changed "
            "(choose another name with --name)"
        )
    wanted = server_entry(python, data_dir=data_dir, db_path=db_path)
    others = [n for n, entry in servers.items() if n != name and is_ours(entry)]
    if current == wanted and not others and path.exists():
        return McpInstallReport(path, name, "unchanged")
    for other in others:  # one Nous server per file: an install under a new name replaces the old one
        del servers[other]
    outcome = "added" if current is None and not others else "updated"
    servers[name] = wanted
    return McpInstallReport(path, name, outcome, write_with_backup(path, data))


def uninstall(path: Path) -> list[str]:
    """Remove our entries (and an ``mcpServers`` they leave empty); the names removed. Backup first."""
    path = Path(path)
    if not path.exists():
        return []
    data = _load(path)
    servers = data.get("mcpServers", {})
    removed = [name for name, entry in servers.items() if is_ours(entry)]
    if removed:
        for name in removed:
            del servers[name]
        if not servers:
            del data["mcpServers"]
        write_with_backup(path, data)
    return removed


def _load(path: Path) -> dict[str, Any]:
    return read_claude_json(path, "Claude Code's MCP configuration", "mcpServers")

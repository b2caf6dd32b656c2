"""Recall on demand: ``nous mcp`` (the MCP server Claude Code starts) and ``nous mcp install|uninstall``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from nous_assets.cli.common import AddCommand
from nous_assets.errors import NousError
from nous_assets.settings import Settings, load_settings


def _served_settings(settings: Settings, args: argparse.Namespace) -> Settings:
    """The settings the server runs with: the data dir recorded in its command wins over the environment
    (Claude Code's environment rarely has NOUS_DATA_DIR), as for the hooks."""
    if not args.data_dir and not args.db_path:
        return settings
    env = dict(os.environ)
    if args.data_dir:
        env["NOUS_DATA_DIR"] = args.data_dir
        env.pop("NOUS_DB_PATH", None)  # a recorded data dir means its cortex.db unless a database is recorded too
    if args.db_path:
        env["NOUS_DB_PATH"] = args.db_path
    return load_settings(env)


def _config_path(args: argparse.Namespace) -> Path:
    from nous_assets.mcp_server.install import project_config_path, user_config_path

    if args.project:
        return project_config_path(args.project)
    return user_config_path(os.environ.get("CLAUDE_CONFIG_DIR"), Path.home())


def cmd_mcp(settings: Settings, args: argparse.Namespace) -> int:
    if args.action == "serve":
        from nous_assets.mcp_server.server import serve

        served = _served_settings(settings, args)
        if not served.db_path.exists():
            print(f"nous mcp: no database at {served.db_path} yet; tools will say so until `nous run` or "
                  "`nous backfill` creates it", file=sys.stderr)  # fmt: skip
        serve(served)
        return 0
    if args.data_dir or args.db_path:
        raise NousError("--data-dir/--db-path are for the server itself; install records the current data dir")
    from nous_assets.mcp_server.install import install, uninstall

    path = _config_path(args)
    if args.action == "install":
        report = install(path, sys.executable, data_dir=settings.data_dir, db_path=settings.db_path, name=args.name)
        what = {"added": "added", "updated": "updated", "unchanged": "already installed"}[report.outcome]
        print(f"Nous MCP server {report.name!r} in {path}: {what}"
              + (f" (backup: {report.backup_path})" if report.backup_path else ""))  # fmt: skip
        print(f"it reads {settings.db_path} (recorded in the command); tools: recall, explain, timeline, predict, "
              "remember. Restart Claude Code (or run /mcp) to connect.")  # fmt: skip
        if args.project:
            print("note: .mcp.json is meant to be shared, and this entry names this machine's paths; "
                  "Claude Code asks each user to approve project servers")  # fmt: skip
    else:
        removed = uninstall(path)
        print(f"removed {len(removed)} Nous MCP server entr{'y' if len(removed) == 1 else 'ies'} from {path}"
              + (f" ({', '.join(removed)})" if removed else ""))  # fmt: skip
    return 0


def register(add: AddCommand) -> None:
    """The ``mcp`` subparser."""
    p = add(
        "mcp",
        cmd_mcp,
        "Recall on demand: an MCP server (stdio) giving Claude the tools recall (memories and transcript excerpts "
        "for a question, with dates, sources and score breakdown), explain (why a memory exists and how it "
        "changed), timeline (a project's sessions, decisions and learnings around a day), predict (what "
        "followed a similar action before) and remember (a learning the user asks Claude to keep, as an event with "
        "source agent, guarded and listed by `nous review`). `nous mcp` serves (Claude Code starts it); "
        "`nous mcp install` registers it in Claude Code's MCP configuration (backup first, idempotent, other "
        "servers untouched), `nous mcp uninstall` removes it.",
    )
    p.add_argument("action", nargs="?", choices=["serve", "install", "uninstall"], default="serve",
                   help="serve over stdin/stdout (default), install or uninstall")  # fmt: skip
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true",
                       help="user scope (default): ~/.claude.json, or $CLAUDE_CONFIG_DIR/.claude.json when set")
    where.add_argument("--project", metavar="DIR", help="project scope: DIR/.mcp.json")
    p.add_argument("--name", default="nous", help="the server's name in Claude Code (default nous)")
    p.add_argument("--data-dir", metavar="DIR", help="serve: the data dir to read (install records it)")
    p.add_argument("--db-path", metavar="FILE", help="serve: the database, when not DIR/cortex.db")

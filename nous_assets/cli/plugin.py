"""``nous plugin install``: write Nous as a local Claude Code plugin (hooks, MCP server, slash commands)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from nous_assets.cli.common import AddCommand
from nous_assets.settings import Settings

HELP = (
    "Write Nous as a local Claude Code plugin in one folder (default: <data dir>/claude-plugin): the SessionStart, "
    "Stop and PreCompact hooks exactly as `nous hooks install` writes them, the MCP server as `nous mcp install` "
    "registers it, and the slash commands /nous:review, /nous:status, /nous:metrics, /nous:packet and "
    "/nous:forget, which run this nous on this data dir. Load it for one session with `claude --plugin-dir DIR`, "
    "or for good with `claude plugin marketplace add DIR` then `claude plugin install nous@nous-local` (the folder "
    "is its own marketplace). Use the plugin instead of `nous hooks install` + `nous mcp install`, not with them "
    "(the hook would run twice). Re-running updates the folder in place and reports what changed."
)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("nous")
    except PackageNotFoundError:
        return "0.0.0"


def cmd_plugin(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.plugin import MARKETPLACE_NAME, PLUGIN_NAME, default_directory, install

    directory = Path(args.dir) if args.dir else default_directory(settings)
    report = install(directory, sys.executable, data_dir=settings.data_dir, db_path=settings.db_path,
                     version=_version(), with_prompt_hook=args.with_prompt_hook)  # fmt: skip
    if report.changed:
        parts = [f"wrote {len(report.written)} file(s)"] + ([f"removed {', '.join(report.removed)}"]
                                                           if report.removed else [])  # fmt: skip
        print(f"Nous plugin in {report.directory}: {'; '.join(parts)}, {len(report.unchanged)} unchanged")
    else:
        print(f"Nous plugin in {report.directory}: already up to date ({len(report.unchanged)} files)")
    print(f"it runs {sys.executable} on {settings.db_path}. Load it with:\n"
          f"  claude --plugin-dir {report.directory}            (this session only)\n"
          f"  claude plugin marketplace add {report.directory} && claude plugin install "
          f"{PLUGIN_NAME}@{MARKETPLACE_NAME}")  # fmt: skip
    print("commands: /nous:review /nous:status /nous:metrics /nous:packet /nous:forget; MCP tools: recall, "
          "explain, timeline, predict, remember. If `nous hooks install` or `nous mcp install` ran before, "
          "remove those entries (`nous hooks uninstall`, `nous mcp uninstall`) so nothing runs twice.")  # fmt: skip
    return 0


def register(add: AddCommand) -> None:
    """The ``plugin`` subparser."""
    p = add("plugin", cmd_plugin, HELP)
    p.add_argument("action", choices=["install"], help="install: write (or update) the plugin folder")
    p.add_argument("--dir", metavar="DIR", help="the plugin folder (default: <data dir>/claude-plugin)")
    p.add_argument("--with-prompt-hook", action="store_true",
                   help="also the UserPromptSubmit hook, as `nous hooks install --with-prompt-hook`")  # fmt: skip

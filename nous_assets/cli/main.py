"""The ``nous`` entry point: the parser assembled from the command groups, and error handling.

Every command reads the same :class:`~nous_assets.settings.Settings`; user-facing failures
(:class:`~nous_assets.errors.NousError`) print one ``nous: error: …`` line and exit non-zero
instead of a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from nous_assets.cli import (
    archive,
    bench,
    database,
    ingest,
    maintenance,
    mcp,
    metrics,
    packet,
    plugin,
    review,
    run,
    search,
    serve,
)
from nous_assets.cli.common import EXIT_CONFIG, EXIT_ERROR, Handler
from nous_assets.cli.interrupts import restore as restore_interrupts
from nous_assets.errors import ConfigError, NousError
from nous_assets.filemodes import restrict_umask
from nous_assets.settings import load_settings

# Command groups in the order ``nous --help`` lists them; each module's ``register`` adds its subparsers.
GROUPS = (database, archive, ingest, run, serve, search, packet, review, maintenance, metrics, mcp, plugin, bench)


def build_parser() -> argparse.ArgumentParser:
    """``nous`` and its subcommands, one group module at a time."""
    parser = argparse.ArgumentParser(
        prog="nous",
        description=(
            "Nous: local-first associative memory for Claude Code. Reads session transcripts, keeps "
            "learnings in an immutable bi-temporal event log (cortex.db) and injects relevant ones at "
            "session start."
        ),
        epilog=(
            "Environment: CLAUDE_CONFIG_DIR (default $HOME/.claude), NOUS_DATA_DIR "
            "(default ${XDG_DATA_HOME:-$HOME/.local/share}/nous), NOUS_DB_PATH, NOUS_ARCHIVE_DIR, "
            "NOUS_PROJECT_GLOB, NOUS_ENABLE_USERPROMPTSUBMIT, NOUS_REEXTRACT_ON_VERSION_CHANGE, "
            "NOUS_CONFIG_FILE (default $CLAUDE_CONFIG_DIR/nous/config.json)."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    for group in GROUPS:
        group.register(add)
    return parser


def _show_warnings() -> None:
    """Warnings from the pipeline (e.g. symlink loops met by discovery) as ``nous: warning: …`` lines."""
    import logging

    log = logging.getLogger("nous_assets")
    if not any(getattr(h, "nous_cli", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("nous: warning: %(message)s"))
        handler.setLevel(logging.WARNING)
        handler.nous_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run one ``nous`` command; returns the exit status (errors as one line on stderr, never a traceback)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    restore_interrupts()  # a Ctrl-C while importing exited quietly (cli/interrupts.py); from here it is handled
    restrict_umask()  # everything the command (and `dagster dev` under `nous run`) creates is private
    _show_warnings()
    settings = None
    try:
        settings = load_settings()
        return int(args.handler(settings, args) or 0)
    except ConfigError as exc:
        print(f"nous: config error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except NousError as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("nous: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # storage failures from any layer (SQLite, Dagster's SQLAlchemy, files): one line
        from nous_assets.errors import storage_error

        mapped = storage_error(exc, settings.db_path if settings else None)
        if mapped is None:
            raise
        print(f"nous: error: {mapped}", file=sys.stderr)
        return EXIT_ERROR



if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

"""The ``nous`` command, one module per command group.

``common`` (exit codes, progress line, store session, ``--project``), ``database`` (init, status, project,
replay, memories, config, migrate-legacy, queue), ``ingest`` (backfill, reextract), ``serve`` (run),
``search`` (search, feedback), ``review``, ``maintenance`` (hooks, doctor, redact), ``mcp`` (the MCP server and its
install), ``bench``; ``main`` assembles the parser and turns failures into one ``nous: error: …`` line.
"""

from nous_assets.cli.interrupts import quiet_while_starting

quiet_while_starting()  # before the heavy imports below

from nous_assets.cli.common import project_arg  # noqa: E402
from nous_assets.cli.main import build_parser, main  # noqa: E402

__all__ = ["build_parser", "main", "project_arg"]

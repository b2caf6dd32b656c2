"""What every command group shares: exit codes, the progress line, the store session, ``--project``.

Commands open the store through :func:`open_store` (a context manager), so a command body says what it
does with the database and the closing is written once.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

from nous_assets.settings import Settings

if TYPE_CHECKING:
    from nous_assets.store.db import Connection

EXIT_ERROR = 1
EXIT_CONFIG = 2

Handler = Callable[[Settings, argparse.Namespace], int]
AddCommand = Callable[[str, Handler, str], argparse.ArgumentParser]
"""Adds one subcommand (name, handler, help) to the ``nous`` parser; each group's ``register`` gets one."""

PROJECT_HELP = "a project id (write ids that start with '-' as --project=-home-me-app) or its directory"


class Progress:
    """A one-line progress report on stderr (only redrawn on a terminal)."""

    def __init__(self, label: str, total: int | None = None, stream=None) -> None:
        self.label, self.total = label, total
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.tty = self.stream.isatty()
        self._last = 0.0

    def update(self, done: int, extra: str = "") -> None:
        now = time.monotonic()
        if not self.tty or now - self._last < 0.2:
            return
        self._last = now
        rate = done / max(now - self.start, 1e-9)
        pct = f" {100 * done / self.total:5.1f}%" if self.total else ""
        self.stream.write(
            f"\r{self.label}: {done:,}{'/' + format(self.total, ',') if self.total else ''}{pct} "
            f"({rate:,.0f}/s) {extra}\x1b[K"
        )
        self.stream.flush()

    def done(self, summary: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{self.label}: {summary} in {time.monotonic() - self.start:.1f}s\n")


def export_env(name: str, value: str | Path) -> None:
    """Hand a setting to the processes this command starts: the CLI is the one writer of ``os.environ``.

    Dagster's webserver, daemon and run workers load the code location afresh and read their settings
    (``DAGSTER_HOME``, ``NOUS_PROJECT_GLOB``) from the environment they inherit.
    """
    os.environ[name] = str(value)


@contextmanager
def open_store(settings: Settings, *, create: bool = False) -> Iterator[Connection]:
    """cortex.db for one command, closed however the command ends; ``create`` also creates/migrates it."""
    from nous_assets.store.db import open_db

    conn = open_db(
        settings.db_path, create=create, migrate_schema=create, busy_timeout_ms=settings.db_busy_timeout_ms
    )
    try:
        yield conn
    finally:
        conn.close()


def project_arg(value: str) -> str:
    """A project id, from an id or from a directory (``.``, ``~/src/app``, ``/abs``): a directory in a git
    repository names the repository's project (its main checkout), read from its ``.git`` files."""
    from resolver.project import default_project, read_repository

    if value.startswith(("/", "~", ".")):
        path = str(Path(value).expanduser().resolve())
        return default_project(path, read_repository(path))
    return value


def canonical(conn: Connection, project: str | None) -> str | None:
    """``--project`` as the store names it: a Claude Code folder id maps to its repository's project."""
    from nous_assets.store.projection.identity import canonical_project

    return canonical_project(conn, project)


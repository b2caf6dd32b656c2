"""Tool arguments checked before anything is read: types, ranges, sizes, dates and projects.

The MCP layer validates JSON types against each tool's schema; these checks hold the rest (a query of a
megabyte, a budget of a billion characters, a date that is not one, a project Nous has never seen) and
say in one sentence what to send instead. A project is named by id or by directory, and a directory is
mapped to its project from what Nous recorded (``project_aliases``), never by reading the disk.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

from nous_assets.store.db import Connection
from nous_assets.store.projection.identity import canonical_project
from nous_assets.store.reads import project_timeline
from nous_assets.timeutil import normalize_time, to_iso
from resolver.project import lookup, project_id_from_cwd

MAX_QUERY_CHARS = 2000
MAX_PROJECT_CHARS = 1024
MAX_TIME_CHARS = 64
KNOWN_SHOWN = 12  # projects listed in the error for an unknown one


class InputError(ValueError):
    """An argument the caller must change; the message says how."""


def validation_line(errors: list[dict]) -> str:
    """Pydantic's report on a tool's arguments as one line: the first field and what it must be (no input values,
    which are the caller's data, and no documentation URL)."""
    if not errors:
        return "invalid arguments"
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ())) or "arguments"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return " ".join(f"{where}: {first.get('msg', 'invalid')}{more}".split())[:300]


def text(value: object, name: str, *, max_chars: int) -> str:
    """A non-blank string of at most ``max_chars`` characters, stripped."""
    if not isinstance(value, str):
        raise InputError(f"{name} must be a string")
    value = value.strip()
    if not value:
        raise InputError(f"{name} must not be empty")
    if len(value) > max_chars:
        raise InputError(f"{name} is {len(value):,} characters; at most {max_chars:,} are accepted")
    if "\x00" in value:
        raise InputError(f"{name} must not contain NUL characters")
    return value


def bounded(value: object, name: str, low: int, high: int) -> int:
    """An integer in ``[low, high]`` (a bool is not an integer here)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{name} must be an integer")
    if not low <= value <= high:
        raise InputError(f"{name} must be between {low:,} and {high:,}, got {value:,}")
    return value


def instant(value: str | None, name: str) -> str | None:
    """An ISO-8601 date or timestamp as canonical UTC text; None stays None."""
    if value is None:
        return None
    raw = text(value, name, max_chars=MAX_TIME_CHARS)
    try:
        return normalize_time(raw)
    except ValueError:
        raise InputError(f"{name} must be an ISO-8601 date or time such as 2026-02-11 or 2026-02-11T14:30Z") from None


def day(value: str, name: str) -> date:
    """A calendar day from ``YYYY-MM-DD`` (or any ISO-8601 timestamp: its UTC day)."""
    canonical = instant(value, name)
    assert canonical is not None
    return date.fromisoformat(canonical[:10])


def day_window(center: date, days: int) -> tuple[str, str]:
    """``[center - days, center + days + 1)`` as canonical UTC instants (whole days)."""
    start = datetime.combine(center - timedelta(days=days), datetime.min.time(), tzinfo=UTC)
    end = datetime.combine(center + timedelta(days=days + 1), datetime.min.time(), tzinfo=UTC)
    return to_iso(start), to_iso(end)


def project(conn: Connection, value: str | None, *, required: bool = False) -> str | None:
    """The canonical project for a project id, a directory (absolute, ``~/…``) or ``.`` (the server's cwd:
    Claude Code starts it in the project's directory); None when not given and not ``required``."""
    if value is None:
        if required:
            raise InputError("project is required: a project id or the project's directory")
        return None
    raw = text(value, "project", max_chars=MAX_PROJECT_CHARS)
    if raw == "." or raw.startswith(("/", "~")):
        path = os.path.normpath(os.path.expanduser(os.getcwd() if raw == "." else raw))
        found = lookup(conn, path, None) or canonical_project(conn, project_id_from_cwd(path))
    else:
        found = canonical_project(conn, raw)
    known = project_timeline.known_projects(conn)
    if found not in known:
        shown = ", ".join(known[:KNOWN_SHOWN]) + (" …" if len(known) > KNOWN_SHOWN else "")
        raise InputError(f"no project {raw!r} in Nous's memory; known projects: {shown or 'none yet'}")
    return found

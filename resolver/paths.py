"""Where Nous keeps its data: the one definition, used by the hooks and by ``nous_assets.settings``.

Standard library only, so the resolver can use it; the pipeline's :func:`~nous_assets.settings.load_settings`
calls these same functions with its environment, so the hook and the pipeline can never disagree on a path.

Claude Code runs hooks with its own environment, which rarely has ``NOUS_DATA_DIR``: a data dir set
for ``make run`` alone would leave the hook reading the default location, finding nothing and
injecting nothing. So ``nous hooks install`` records the data dir (and the database, when it is not
``<data dir>/cortex.db``) in the hook command itself (``… -m resolver session-start --data-dir DIR``),
and :func:`record` makes those recorded paths win over the environment for this process. With nothing
recorded (an older install, a hand-written command) the environment and the defaults apply as before.
"""

from __future__ import annotations

import os
from pathlib import Path

DB_NAME = "cortex.db"
WAKE_NAME = "wake"  # touched by the Stop hook; the next sensor tick scans at once
SPOOL_NAME = "access-spool.jsonl"  # injections the hook could not log while the database was busy

DATA_DIR_OPTION = "--data-dir"
DB_PATH_OPTION = "--db-path"
_OPTIONS = {DATA_DIR_OPTION: "data_dir", DB_PATH_OPTION: "db_path"}

_recorded: dict[str, Path] = {}  # set once by the hook entry point from its command line


def parse_options(args: list[str]) -> dict[str, str]:
    """``{"data_dir": …, "db_path": …}`` from ``--data-dir DIR`` / ``--data-dir=DIR`` style arguments.

    Unknown arguments are ignored and a value-less option is dropped: the hook must never fail on its
    own command line (an install from a newer version may add options).
    """
    found: dict[str, str] = {}
    i = 0
    while i < len(args):
        arg = args[i]
        name, eq, value = arg.partition("=")
        if name in _OPTIONS:
            if not eq:
                value = args[i + 1] if i + 1 < len(args) else ""
                i += 1
            if value:
                found[_OPTIONS[name]] = value
        i += 1
    return found


def record(options: dict[str, str]) -> None:
    """Use the paths recorded in the hook command (see the module doc) instead of the environment's."""
    _recorded.clear()
    for key in ("data_dir", "db_path"):
        if options.get(key):
            _recorded[key] = Path(options[key]).expanduser()


def data_dir(env: dict[str, str] | None = None) -> Path:
    if env is None:
        if "data_dir" in _recorded:
            return _recorded["data_dir"]
        env = os.environ  # type: ignore[assignment]
    if env.get("NOUS_DATA_DIR"):
        return Path(env["NOUS_DATA_DIR"]).expanduser()
    home = Path(env.get("HOME") or Path.home())
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share").expanduser() / "nous"


def db_path(env: dict[str, str] | None = None) -> Path:
    if env is None:
        if "db_path" in _recorded:
            return _recorded["db_path"]
        if "data_dir" in _recorded:  # install records the database only when it is elsewhere
            return _recorded["data_dir"] / DB_NAME
        env = os.environ  # type: ignore[assignment]
    return Path(env["NOUS_DB_PATH"]).expanduser() if env.get("NOUS_DB_PATH") else data_dir(env) / DB_NAME


def wake_marker(env: dict[str, str] | None = None) -> Path:
    return data_dir(env) / WAKE_NAME


def spool_path(env: dict[str, str] | None = None) -> Path:
    return data_dir(env) / SPOOL_NAME


def archive_dir(env: dict[str, str] | None = None) -> Path:
    if env is None:
        env = os.environ  # type: ignore[assignment]
    return Path(env["NOUS_ARCHIVE_DIR"]).expanduser() if env.get("NOUS_ARCHIVE_DIR") else data_dir(env) / "archive"


TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


def is_true(value: str | None) -> bool:
    """A flag variable's value as a boolean (the same words the settings accept); unset is false."""
    return (value or "").strip().lower() in TRUE_WORDS

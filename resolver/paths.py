"""Where Nous keeps its data: the one definition, used by the hooks and by ``nous_assets.settings``.

Standard library only, so the resolver can use it; the pipeline's :func:`~nous_assets.settings.load_settings`
calls these same functions with its environment, so the hook and the pipeline can never disagree on a path.

Claude Code runs hooks with its own environment, which rarely has ``NOUS_DATA_DIR``: a data dir set
for ``make run`` alone would leave the hook reading the default location, finding nothing and
injecting nothing. So ``nous hooks install`` records the data dir (and the database, when it is not
``<data dir>/cortex.db``) in the hook command itself (``… resolver/launch.py session-start --data-dir DIR``),
and :func:`record` makes those recorded paths win over the environment for this process. With nothing
recorded (an older install, a hand-written command) the environment and the defaults apply as before.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False  # not ``typing.TYPE_CHECKING``: importing typing costs the hook ~3 ms
if TYPE_CHECKING:  # pathlib is imported only when a Path is asked for: the hook runs on the *_str twins
    from pathlib import Path

DB_NAME = "cortex.db"
WAKE_NAME = "wake"  # touched by the Stop hook; the next sensor tick scans at once
SPOOL_NAME = "access-spool.jsonl"  # injections the hook could not log while the database was busy

DATA_DIR_OPTION = "--data-dir"
DB_PATH_OPTION = "--db-path"
_OPTIONS = {DATA_DIR_OPTION: "data_dir", DB_PATH_OPTION: "db_path"}

_recorded: dict[str, str] = {}  # set once by the hook entry point from its command line


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
            _recorded[key] = os.path.expanduser(options[key])


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


def data_dir_str(env: dict[str, str] | None = None) -> str:
    """:func:`data_dir` as a string, without importing :mod:`pathlib` (the hook's start-up budget)."""
    if env is None:
        if "data_dir" in _recorded:
            return _recorded["data_dir"]
        env = os.environ  # type: ignore[assignment]
    if env.get("NOUS_DATA_DIR"):
        return os.path.expanduser(env["NOUS_DATA_DIR"])
    home = env.get("HOME") or os.path.expanduser("~")
    return os.path.join(os.path.expanduser(env.get("XDG_DATA_HOME") or os.path.join(home, ".local", "share")), "nous")


def db_path_str(env: dict[str, str] | None = None) -> str:
    """:func:`db_path` as a string, without importing :mod:`pathlib`."""
    if env is None:
        if "db_path" in _recorded:
            return _recorded["db_path"]
        if "data_dir" in _recorded:  # install records the database only when it is elsewhere
            return os.path.join(_recorded["data_dir"], DB_NAME)
        env = os.environ  # type: ignore[assignment]
    if env.get("NOUS_DB_PATH"):
        return os.path.expanduser(env["NOUS_DB_PATH"])
    return os.path.join(data_dir_str(env), DB_NAME)


def data_dir(env: dict[str, str] | None = None) -> Path:
    return _path(data_dir_str(env))


def db_path(env: dict[str, str] | None = None) -> Path:
    return _path(db_path_str(env))


def wake_marker(env: dict[str, str] | None = None) -> Path:
    return _path(os.path.join(data_dir_str(env), WAKE_NAME))


def spool_path(env: dict[str, str] | None = None) -> Path:
    return _path(os.path.join(data_dir_str(env), SPOOL_NAME))


def archive_dir(env: dict[str, str] | None = None) -> Path:
    if env is None:
        env = os.environ  # type: ignore[assignment]
    if env.get("NOUS_ARCHIVE_DIR"):
        return _path(os.path.expanduser(env["NOUS_ARCHIVE_DIR"]))
    return _path(os.path.join(data_dir_str(env), "archive"))


TRUE_WORDS = frozenset({"1", "true", "yes", "on"})
FALSE_WORDS = frozenset({"0", "false", "no", "off", ""})


def is_true(value: str | None) -> bool:
    """A flag variable's value as a boolean (the same words the settings accept); unset is false."""
    return (value or "").strip().lower() in TRUE_WORDS

"""Install and remove Nous's Claude Code hooks in a ``settings.json`` (user or project scope).

Our entries are command hooks running ``<python> -I -S <abs path>/resolver/launch.py <hook>``: ``-S`` skips
``site`` (the venv's ``.pth`` files and editable-install finder, most of a bare interpreter's start-up) and the
launcher puts only the resolver's parent folder on ``sys.path``, so the hook starts faster than
``python -I -c pass``. Older installs wrote ``<python> -I -m resolver <hook>``; both shapes are recognised
(:func:`is_ours`, :func:`command_parts`), so re-installing replaces an old entry in place (a new interpreter
path, the new shape, new timeouts) and uninstalling removes exactly ours. Everything else in the file, other
hooks in the same event or matcher group included, is preserved. Timeouts are in seconds, as Claude Code expects.

``-I`` (isolated mode) keeps the project's own directory off ``sys.path``: Claude Code runs hooks in the
project's directory, and a ``resolver/`` folder there must not shadow ours.

The command also records where the data is (``--data-dir DIR``, plus ``--db-path FILE`` when the database
is not ``DIR/cortex.db``): Claude Code's environment rarely carries ``NOUS_DATA_DIR``, and a hook that
looked only there would silently find no database. Re-installing rewrites the paths; uninstalling removes
them with the entries. The SessionStart matcher covers every source Claude Code sends, ``fork`` included.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from nous_assets.errors import ConfigError
from resolver import paths as _resolver_paths
from resolver.paths import DATA_DIR_OPTION, DB_PATH_OPTION, parse_options

MARKER = "-m resolver "  # the older shape, ``<python> -I -m resolver <hook>``
LAUNCHER = Path(_resolver_paths.__file__).resolve().parent / "launch.py"  # the resolver this install imports
_LAUNCHER_WORD = re.compile(r"(?:^|[/\\])resolver[/\\]launch\.py$")
_LAUNCHER_IN_COMMAND = re.compile(r"[/\\]resolver[/\\]launch\.py['\"]?(?:\s|$)")
SESSION_START_MATCHER = "startup|resume|clear|compact|fork"


@dataclass(frozen=True)
class HookSpec:
    event: str
    command: str  # the resolver sub-command
    timeout: int  # seconds
    matcher: str | None = None


HOOKS = (
    HookSpec("SessionStart", "session-start", 5, SESSION_START_MATCHER),
    HookSpec("Stop", "stop", 2),
    HookSpec("PreCompact", "pre-compact", 2),
)
PROMPT_HOOK = HookSpec("UserPromptSubmit", "user-prompt-submit", 2)


@dataclass
class InstallReport:
    settings_path: Path
    backup_path: Path | None = None
    added: list[str] = field(default_factory=list)
    updated: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def default_settings_path(settings: Any = None, project_dir: str | Path | None = None) -> Path:
    """``<project_dir>/.claude/settings.json`` for project scope, else ``$CLAUDE_CONFIG_DIR/settings.json``
    (``settings.claude_config_dir``; ``~/.claude`` when neither is given)."""
    if project_dir is not None:
        return Path(project_dir).expanduser().resolve() / ".claude" / "settings.json"
    config_dir = getattr(settings, "claude_config_dir", None)
    if config_dir is None:
        config_dir = os.environ.get("CLAUDE_CONFIG_DIR") or Path.home() / ".claude"
    return Path(config_dir).expanduser() / "settings.json"


def resolver_command(
    python: str, hook: str, *, data_dir: str | Path | None = None, db_path: str | Path | None = None
) -> str:
    """The shell command Claude Code runs for ``hook`` (absolute paths, quoted if needed).

    A bare name (``python3``) is looked up on PATH; symlinks are kept, so a venv's interpreter stays the venv's.
    ``data_dir`` / ``db_path`` are recorded as ``--data-dir`` / ``--db-path`` (the database only when it
    is not ``<data_dir>/cortex.db``, the resolver's default for a recorded data dir).
    """
    if os.sep not in python:
        python = shutil.which(python) or python
    command = f"{shlex.quote(os.path.abspath(python))} -I -S {shlex.quote(str(LAUNCHER))} {hook}"
    if data_dir is not None:
        data_dir = _absolute(data_dir)
        command += f" {DATA_DIR_OPTION} {shlex.quote(data_dir)}"
        if db_path is not None and _absolute(db_path) != os.path.join(data_dir, "cortex.db"):
            command += f" {DB_PATH_OPTION} {shlex.quote(_absolute(db_path))}"
    elif db_path is not None:
        command += f" {DB_PATH_OPTION} {shlex.quote(_absolute(db_path))}"
    return command


def _absolute(path: str | Path) -> str:
    return os.path.abspath(os.path.expanduser(os.fspath(path)))


def command_parts(command: str) -> tuple[str | None, str | None, dict[str, str]]:
    """(interpreter, resolver sub-command, recorded paths) of one of our hook commands, in either shape
    (``… resolver/launch.py <hook>`` or the older ``… -m resolver <hook>``); Nones if unparsable."""
    try:
        words = shlex.split(command)
    except ValueError:
        return None, None, {}
    at = next((i for i, word in enumerate(words) if i and _LAUNCHER_WORD.search(word)), None)
    if at is None:
        try:
            at = words.index("resolver", 1)
        except ValueError:
            return (words[0] if words else None), None, {}
        if words[at - 1] != "-m":
            return words[0], None, {}
    hook = words[at + 1] if at + 1 < len(words) else None
    return words[0], hook, parse_options(words[at + 2 :])


def resolver_version(python: str) -> str | None:
    """``nous-resolver N`` when ``python`` can run the hook as installed, else None (worth a warning)."""
    command = shlex.split(resolver_command(python, "--version"))
    try:
        proc = subprocess.run(command, capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    out = proc.stdout.strip()
    return out if proc.returncode == 0 and out.startswith("nous-resolver") else None


def is_ours(entry: Any) -> bool:
    """A hook entry that runs our resolver, in the launcher shape or the older ``-m resolver`` one."""
    if not isinstance(entry, dict) or not isinstance(entry.get("command"), str):
        return False
    command = entry["command"]
    return MARKER in command or _LAUNCHER_IN_COMMAND.search(command) is not None


def install_hooks(
    settings_path: Path,
    python: str,
    *,
    with_prompt_hook: bool = False,
    data_dir: str | Path | None = None,
    db_path: str | Path | None = None,
) -> InstallReport:
    """Merge our hooks into ``settings_path``; idempotent. Backs the file up before any change.

    ``data_dir`` / ``db_path`` are recorded in every command (see :func:`resolver_command`).
    Without ``with_prompt_hook`` a UserPromptSubmit entry of ours left by an earlier install is removed.
    Raises :class:`ConfigError` (naming the file) when the file is not a JSON object or ``hooks`` is malformed.
    """
    settings_path = Path(settings_path)
    data = _load(settings_path)
    hooks = data.setdefault("hooks", {})
    report = InstallReport(settings_path)
    wanted = [*HOOKS, PROMPT_HOOK] if with_prompt_hook else list(HOOKS)
    for spec in wanted:
        outcome = _ensure(hooks, spec, resolver_command(python, spec.command, data_dir=data_dir, db_path=db_path))
        getattr(report, outcome).append(spec.event)
    if not with_prompt_hook and _remove_ours(hooks, PROMPT_HOOK.event):
        report.removed.append(PROMPT_HOOK.event)
    if report.changed or not settings_path.exists():
        report.backup_path = write_with_backup(settings_path, data)
    return report


def installed_hooks(settings_path: Path) -> dict[str, list[tuple[str | None, dict]]]:
    """Our entries in ``settings_path``: event -> [(group matcher, entry)]; empty when the file is absent.

    Raises :class:`ConfigError` like :func:`install_hooks` for a malformed file.
    """
    found: dict[str, list[tuple[str | None, dict]]] = {}
    for event, groups in _load(Path(settings_path)).get("hooks", {}).items():
        for group in groups:
            if isinstance(group, dict) and isinstance(group.get("hooks"), list):
                found.setdefault(event, []).extend((group.get("matcher"), e) for e in group["hooks"] if is_ours(e))
    return {event: entries for event, entries in found.items() if entries}


def uninstall_hooks(settings_path: Path) -> int:
    """Remove our entries (and the groups, events and ``hooks`` key they leave empty); the count removed."""
    settings_path = Path(settings_path)
    if not settings_path.exists():
        return 0
    data = _load(settings_path)
    hooks = data.get("hooks")
    if not isinstance(hooks, dict):
        return 0
    removed = sum(_remove_ours(hooks, event) for event in list(hooks))
    if removed:
        if not hooks:
            del data["hooks"]
        write_with_backup(settings_path, data)
    return removed


def read_claude_json(path: Path, what: str, key: str) -> dict[str, Any]:
    """A Claude Code JSON file as an object ({} when missing or empty) whose ``key`` is an object if present.

    Every refusal is one line naming the file, and nothing is changed: install never overwrites a file it
    could not read. Shared by the hook installer and ``nous mcp install``.
    """
    if not path.exists():
        return {}
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read {what}: {exc}") from None
    if not text.strip():
        return {}
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"{path}: not valid JSON ({exc}); fix it first, nothing was changed") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a JSON object at the top level; nothing was changed")
    if not isinstance(data.get(key, {}), dict):
        raise ConfigError(f"{path}: key '{key}' must be an object; nothing was changed")
    return data


def _load(path: Path) -> dict:
    data = read_claude_json(path, "Claude Code settings", "hooks")
    for event, groups in data.get("hooks", {}).items():
        if not isinstance(groups, list):
            raise ConfigError(f"{path}: key 'hooks.{event}' must be a list; nothing was changed")
    return data


def _ensure(hooks: dict, spec: HookSpec, command: str) -> str:
    """Make ``spec`` present exactly once in ``hooks[spec.event]``; 'added', 'updated' or 'unchanged'."""
    groups = hooks.setdefault(spec.event, [])
    desired = {"type": "command", "command": command, "timeout": spec.timeout}
    found = [
        (group, entry)
        for group in groups
        if isinstance(group, dict) and isinstance(group.get("hooks"), list)
        for entry in group["hooks"]
        if is_ours(entry)
    ]
    home = next((group for group, _ in found if group.get("matcher") == spec.matcher), None)
    if home is not None:
        keep = next(entry for group, entry in found if group is home)
        if len(found) == 1 and all(keep.get(k) == v for k, v in desired.items()):
            return "unchanged"
        keep.update(desired)
        for group, entry in found:
            if entry is not keep:
                group["hooks"].remove(entry)
        _drop_empty_groups(groups, {id(g) for g, _ in found})
        return "updated"
    for group, entry in found:
        group["hooks"].remove(entry)
    _drop_empty_groups(groups, {id(g) for g, _ in found})
    new_group: dict[str, Any] = {"matcher": spec.matcher} if spec.matcher is not None else {}
    new_group["hooks"] = [desired]
    groups.append(new_group)
    return "updated" if found else "added"


def _remove_ours(hooks: dict, event: str) -> int:
    """Remove our entries from ``hooks[event]``, then the groups and the event they leave empty."""
    groups = hooks.get(event)
    if not isinstance(groups, list):
        return 0
    removed, touched = 0, set()
    for group in groups:
        if isinstance(group, dict) and isinstance(group.get("hooks"), list):
            mine = [entry for entry in group["hooks"] if is_ours(entry)]
            for entry in mine:
                group["hooks"].remove(entry)
            if mine:
                removed += len(mine)
                touched.add(id(group))
    _drop_empty_groups(groups, touched)
    if removed and not groups:
        del hooks[event]
    return removed


def _drop_empty_groups(groups: list, touched: set[int]) -> None:
    groups[:] = [g for g in groups if not (id(g) in touched and not g.get("hooks"))]


def write_with_backup(path: Path, data: dict) -> Path | None:
    """Back up the current file (if any), then replace it atomically; returns the backup's path."""
    path.parent.mkdir(parents=True, exist_ok=True)
    backup = None
    if path.exists():
        stamp = time.strftime("%Y%m%d-%H%M%S")
        backup = path.with_name(f"{path.name}.bak-{stamp}")
        counter = 1
        while backup.exists():
            backup = path.with_name(f"{path.name}.bak-{stamp}-{counter}")
            counter += 1
        shutil.copy2(path, backup)
    tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    try:
        with open(tmp, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, ensure_ascii=False)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        if backup is not None:
            shutil.copymode(backup, tmp)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return backup

"""Where Nous keeps its data, resolved exactly like ``nous_assets.settings`` (standard library only)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    if env.get("NOUS_DATA_DIR"):
        return Path(env["NOUS_DATA_DIR"]).expanduser()
    home = Path(env.get("HOME") or Path.home())
    return Path(env.get("XDG_DATA_HOME") or home / ".local" / "share").expanduser() / "nous"


def db_path(env: dict[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    return Path(env["NOUS_DB_PATH"]).expanduser() if env.get("NOUS_DB_PATH") else data_dir(env) / "cortex.db"


def wake_marker(env: dict[str, str] | None = None) -> Path:
    return data_dir(env) / "wake"

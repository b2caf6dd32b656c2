"""The Dagster instance Nous runs in: ``$DAGSTER_HOME`` (default ``$NOUS_DATA_DIR/dagster``) configured
by the repository's ``dagster.yaml``.

The repo's file is the configuration: one run at a time, a pool limit on embedding, telemetry off.
Copying it only when missing (as before) meant a changed repo config never applied, so the instance
file is rewritten whenever it differs, after backing up the one it replaces (it may hold user edits).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from nous_assets.datadir import check_data_dir
from nous_assets.settings import Settings

REPO_DAGSTER_YAML = Path(__file__).resolve().parents[2] / "dagster.yaml"


def dagster_home(settings: Settings) -> Path:
    """``$DAGSTER_HOME``, else ``$NOUS_DATA_DIR/dagster``."""
    return Path(os.environ.get("DAGSTER_HOME") or settings.data_dir / "dagster").expanduser()


def sync_instance_config(home: Path, source: Path = REPO_DAGSTER_YAML) -> Path | None:
    """Make ``home/dagster.yaml`` equal to ``source``; returns the backup of a different file it replaced."""
    home.mkdir(parents=True, exist_ok=True)
    target = home / "dagster.yaml"
    wanted = source.read_bytes()
    backup = None
    if target.exists():
        if target.read_bytes() == wanted:
            return None
        backup = home / f"dagster.yaml.{time.strftime('%Y%m%d-%H%M%S')}.bak"
        backup.write_bytes(target.read_bytes())
    tmp = home / "dagster.yaml.tmp"
    tmp.write_bytes(wanted)
    tmp.replace(target)
    return backup


def ensure_dagster_home(settings: Settings) -> tuple[Path, Path | None]:
    """The instance directory, holding the repo's config; (home, backup of a replaced config or None).

    The caller points ``DAGSTER_HOME`` at it for the processes it starts (the CLI does, in one place).

    Checks first that the data directory and Dagster's storage can be written (one clear line, not a
    SQLAlchemy traceback, when they are read-only or full).
    """
    home = dagster_home(settings)
    check_data_dir(settings, home)
    backup = sync_instance_config(home) if REPO_DAGSTER_YAML.exists() else None
    return home, backup

"""Project identity shared by the hook and the pipeline (standard library only).

Claude Code stores a session under ``projects/<encoded cwd>/``, where the encoding replaces
every character that is not an ASCII letter or digit with ``-``. Using that folder name as
``project_id`` lets the SessionStart hook derive the project from ``cwd`` without a lookup.
"""

from __future__ import annotations

import re

_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")


def project_id_from_cwd(cwd: str) -> str:
    """Encode a working directory the way Claude Code names its project folder."""
    return _NON_ALNUM.sub("-", cwd.rstrip("/") or "/")

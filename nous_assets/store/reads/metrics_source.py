"""What process mining reads from cortex.db, through a read-only connection.

DuckDB 2.0's ``sqlite_scanner`` is not bundled with the wheel and would be downloaded at run time (and no
package on the index ships it for this DuckDB version), so the metrics read these columns here, through
SQLite's own read-only mode (``file:…?mode=ro``: no write, no lock held past a read), and hand them to
DuckDB as Arrow data. Each reader returns columns (name -> values) for a DataFrame.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nous_assets.store.db import Connection, sqlite3

Columns = dict[str, list[Any]]


@contextlib.contextmanager
def read_only(db_path: Path, busy_timeout_ms: int = 30_000) -> Iterator[Connection]:
    """cortex.db opened read-only (a missing file is an error, never created)."""
    if not Path(db_path).is_file():
        raise FileNotFoundError(f"no database at {db_path}; run `nous init` first")
    conn = sqlite3.connect(f"file:{db_path}?mode=ro", uri=True, isolation_level=None, check_same_thread=False)
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        yield conn
    finally:
        conn.close()


def _columns(conn: Connection, sql: str, names: tuple[str, ...]) -> Columns:
    cursor = conn.cursor()
    cursor.row_factory = None
    rows = cursor.execute(sql).fetchall()
    return {name: [r[i] for r in rows] for i, name in enumerate(names)}


EVENT_COLUMNS = ("event_id", "learning_id", "event_type", "happened", "session_id", "project_id", "domain", "reason",
                 "relearn")  # fmt: skip


def events(conn: Connection) -> Columns:
    """Every live event: when it happened (valid time, else recorded time), where, and what kind of signal.

    ``domain`` is the extraction's domain (kind when it has none); ``relearn`` is 1 for a re-extraction (a
    reinforcement with reason "relearned" or a ``relearn`` record).
    """
    return _columns(
        conn,
        "SELECT event_id, learning_id, event_type, coalesce(valid_from, transaction_time), session_id, project_id, "
        "coalesce(json_extract(payload_json, '$.domain'), json_extract(payload_json, '$.kind')), "
        "json_extract(payload_json, '$.reason'), "
        "CASE WHEN event_type = 'LearningReinforced' AND (json_extract(payload_json, '$.reason') = 'relearned' "
        "OR json_extract(payload_json, '$.relearn') IS NOT NULL) THEN 1 ELSE 0 END "
        "FROM learning_events ORDER BY event_id",
        EVENT_COLUMNS,
    )


MEMORY_COLUMNS = ("id", "learning_id", "project_id", "domain", "reinforcement_score", "learned_at", "accessed_at",
                  "valid_until", "contradiction_count")  # fmt: skip


def memories(conn: Connection) -> Columns:
    """The projection as it stands (archived memories are gone from it; superseded ones have ``valid_until``)."""
    return _columns(
        conn,
        "SELECT id, learning_id, project_id, coalesce(domain, kind, 'unknown'), reinforcement_score, "
        "coalesce(valid_from, created_at), accessed_at, valid_until, contradiction_count FROM memories ORDER BY id",
        MEMORY_COLUMNS,
    )


ACCESS_COLUMNS = ("memory_id", "session_id", "was_useful", "accessed_at", "source")


def accesses(conn: Connection) -> Columns:
    """Every injection (and ``nous feedback`` rating, source 'feedback') with its verdict (NULL: not judged)."""
    return _columns(
        conn,
        "SELECT memory_id, session_id, was_useful, accessed_at, source FROM access_log ORDER BY id",
        ACCESS_COLUMNS,
    )

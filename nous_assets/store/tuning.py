"""``consolidation_tuning``: the thresholds consolidation tuned from its quality, as an append-only trail (the
value in force is the latest row's; none: the configured one). The rules are :mod:`nous_assets.consolidate.tuning`."""

from __future__ import annotations

import json
from typing import Any

from nous_assets.store.db import Connection


def current(conn: Connection, parameter: str) -> float | None:
    """The value last tuned for ``parameter``, or None when it never moved."""
    row = conn.execute(
        "SELECT new_value FROM consolidation_tuning WHERE parameter = ? ORDER BY id DESC LIMIT 1", (parameter,)
    ).fetchone()
    return None if row is None else float(row[0])


def record(conn: Connection, parameter: str, old: float, new: float, reason: str, metrics: dict[str, Any],
           at: str) -> None:  # fmt: skip
    """Append one move (the caller holds the transaction)."""
    conn.execute(
        "INSERT INTO consolidation_tuning(parameter, old_value, new_value, reason, metrics_json, at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (parameter, old, new, reason, json.dumps(metrics, sort_keys=True), at),
    )


def history(conn: Connection, parameter: str, limit: int = 20) -> list[dict[str, Any]]:
    """The latest moves of ``parameter``, newest first."""
    rows = conn.execute(
        "SELECT old_value, new_value, reason, at FROM consolidation_tuning WHERE parameter = ? ORDER BY id DESC "
        "LIMIT ?", (parameter, limit)).fetchall()  # fmt: skip
    return [{"old": r[0], "new": r[1], "reason": r[2], "at": r[3]} for r in rows]

"""``memory_stale``: memories whose citations no longer resolve in the project's checkout (the SQL side).

Packet building decides (:mod:`nous_assets.retrieve.stale_check`); this module only stores its verdict per
project and reads it back for packets and ``nous review``. The rows are derived: replacing a project's rows
is the only write, and an empty table is refilled by the next packet build.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from nous_assets.store.db import Connection


@dataclass(frozen=True)
class Stale:
    memory_id: int
    project_id: str
    unresolved: list[dict[str, str]]  # [{"kind": "path", "value": "scripts/release.sh"}, …]
    checkout: str
    checked_at: str


def checkable(conn: Connection, project_id: str) -> list[tuple[int, str]]:
    """(id, text to check) of a project's memories that could be injected: its own ones, not refuted or
    superseded (a global memory cites other projects' files)."""
    rows = conn.execute(
        "SELECT id, content || ' ' || coalesce(source_ref, '') FROM memories WHERE project_id = ? "
        "AND scope = 'project' AND status NOT IN ('refuted', 'superseded', 'hypothesis') ORDER BY id",
        (project_id,),
    )
    return [(int(i), str(t)) for i, t in rows]


def replace(conn: Connection, project_id: str, found: Iterable[Stale]) -> bool:
    """Make the project's rows ``found``; True when the set of stale memories changed."""
    before = set(ids(conn, project_id))
    conn.execute("DELETE FROM memory_stale WHERE project_id = ?", (project_id,))
    rows = [(s.memory_id, project_id, json.dumps(s.unresolved), s.checkout, s.checked_at) for s in found]
    conn.executemany(
        "INSERT OR REPLACE INTO memory_stale(memory_id, project_id, unresolved_json, checkout, checked_at) "
        "VALUES (?, ?, ?, ?, ?)",
        rows,
    )
    return before != {r[0] for r in rows}


def ids(conn: Connection, project_id: str | None = None) -> list[int]:
    sql, params = "SELECT memory_id FROM memory_stale", ()
    if project_id is not None:
        sql, params = sql + " WHERE project_id = ?", (project_id,)
    return [int(r[0]) for r in conn.execute(sql + " ORDER BY memory_id", params)]


def listed(conn: Connection, project_id: str | None = None) -> list[tuple[Stale, str]]:
    """(stale row, the memory's content) for ``nous review``, by memory id."""
    sql = (
        "SELECT s.memory_id, s.project_id, s.unresolved_json, s.checkout, s.checked_at, m.content "
        "FROM memory_stale s JOIN memories m ON m.id = s.memory_id"
    )
    params: tuple = ()
    if project_id is not None:
        sql, params = sql + " WHERE s.project_id = ?", (project_id,)
    return [
        (Stale(int(r[0]), r[1], json.loads(r[2]), r[3], r[4]), r[5])
        for r in conn.execute(sql + " ORDER BY s.memory_id", params)
    ]

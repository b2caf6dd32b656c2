"""Bi-temporal reads: what the system knew (transaction time) and what was true (valid time).

* as-of T: replay only events recorded at or before T — the knowledge state at T, including
  supersessions and archivals that had happened by then (not just ``created_at <= T``).
* as-at T: memories whose validity window contains T (``valid_from`` NULL = unknown start,
  ``valid_until`` NULL = still valid).
* both: the as-of state filtered by as-at.
"""

from __future__ import annotations

from nous_assets.store.db import Connection
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, Memory, Policy, project_in_memory
from nous_assets.store.sqlite.projection import replay_events
from nous_assets.timeutil import normalize_time


def valid_at(memory: Memory, t: str) -> bool:
    return (memory.valid_from is None or memory.valid_from <= t) and (
        memory.valid_until is None or memory.valid_until > t
    )


def _current(conn: Connection, project_id: str | None) -> list[Memory]:
    sql = f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories"
    params: tuple = ()
    if project_id is not None:
        sql += " WHERE project_id = ?"
        params = (project_id,)
    memories = {
        r["id"]: Memory(**{c: r[c] for c in MEMORY_COLUMNS}) for r in conn.execute(sql + " ORDER BY id", params)
    }
    for memory_id, concept in conn.execute("SELECT memory_id, concept FROM concepts"):
        if memory_id in memories:
            memories[memory_id].concepts.add(concept)
    return list(memories.values())


def query_memories(
    conn: Connection,
    *,
    as_of: str | None = None,
    as_at: str | None = None,
    project_id: str | None = None,
    policy: Policy | None = None,
) -> list[Memory]:
    """Memories known as of ``as_of`` (default: now, from the live projection) valid at ``as_at``."""
    as_of_t = normalize_time(as_of)
    as_at_t = normalize_time(as_at)
    if as_of_t is None:
        memories = _current(conn, project_id)
    else:
        memories = project_in_memory(replay_events(conn, until_tx_time=as_of_t), policy).active()
        if project_id is not None:
            memories = [m for m in memories if m.project_id == project_id]
    if as_at_t is not None:
        memories = [m for m in memories if valid_at(m, as_at_t)]
    return memories

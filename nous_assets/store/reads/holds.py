"""``memory_holds``: the memories the packet guard keeps out of injection, and why (the SQL side).

The verdicts themselves come from :mod:`nous_assets.safety`; this module only reads memories and
review events and writes the derived rows, so the table can be dropped and recomputed at any time.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from nous_assets.store.db import Connection

_CHUNK = 900
APPROVED = "approved"
HELD = "held"


@dataclass(frozen=True)
class Hold:
    """One guarded memory: held out of packets, or approved by the user for this exact content."""

    memory_id: int
    learning_id: str
    project_id: str
    scope: str
    status: str
    reason: str
    findings: list[dict[str, Any]]
    content_sha256: str
    guard_version: str
    checked_at: str


@dataclass(frozen=True)
class HeldMemory:
    """A hold with what ``nous review`` shows next to it."""

    hold: Hold
    content: str
    kind: str | None
    source_session: str
    learned_at: str
    claim: str = ""  # the memory's status: how far its evidence backs it (verified … hypothesis, refuted)


@dataclass(frozen=True)
class MemoryText:
    memory_id: int
    learning_id: str
    project_id: str
    scope: str
    content: str


def _chunks(items: Sequence[Any]) -> Iterable[Sequence[Any]]:
    for i in range(0, len(items), _CHUNK):
        yield items[i : i + _CHUNK]


def newest_memory_event(conn: Connection) -> int:
    return int(conn.execute("SELECT coalesce(max(last_event_id), 0) FROM memories").fetchone()[0])


def memories_changed_since(conn: Connection, event_id: int, upper: int) -> list[MemoryText]:
    """Memories created or changed by events in ``(event_id, upper]`` (content refreshes bump ``last_event_id``)."""
    rows = conn.execute(
        "SELECT id, learning_id, project_id, scope, content FROM memories "
        "WHERE last_event_id > ? AND last_event_id <= ? ORDER BY id",
        (event_id, upper),
    ).fetchall()
    return [MemoryText(*tuple(r)) for r in rows]


def approved_hashes(conn: Connection, learning_ids: Sequence[str]) -> dict[str, set[str]]:
    """Per learning, the content hashes the user approved in review (``LearningValidated``, source user_review)."""
    out: dict[str, set[str]] = {}
    for chunk in _chunks(sorted(set(learning_ids))):
        rows = conn.execute(
            "SELECT learning_id, json_extract(payload_json, '$.review.content_sha256') FROM learning_events "
            f"WHERE learning_id IN ({','.join('?' * len(chunk))}) AND event_type = 'LearningValidated' "
            "AND source = 'user_review' AND json_extract(payload_json, '$.review.decision') = 'approved'",
            list(chunk),
        ).fetchall()
        for learning_id, digest in rows:
            if digest:
                out.setdefault(learning_id, set()).add(digest)
    return out


def save(conn: Connection, holds: Sequence[Hold], released: Sequence[int]) -> None:
    """Upsert ``holds`` and drop the rows of ``released`` memories (the caller holds the transaction)."""
    conn.executemany(
        "INSERT INTO memory_holds(memory_id, learning_id, project_id, scope, status, reason, findings_json, "
        "content_sha256, guard_version, checked_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
        "ON CONFLICT(memory_id) DO UPDATE SET learning_id = excluded.learning_id, project_id = excluded.project_id, "
        "scope = excluded.scope, status = excluded.status, reason = excluded.reason, "
        "findings_json = excluded.findings_json, content_sha256 = excluded.content_sha256, "
        "guard_version = excluded.guard_version, checked_at = excluded.checked_at",
        [
            (h.memory_id, h.learning_id, h.project_id, h.scope, h.status, h.reason,
             json.dumps(h.findings, sort_keys=True), h.content_sha256, h.guard_version, h.checked_at)
            for h in holds
        ],  # fmt: skip
    )
    for chunk in _chunks(list(released)):
        conn.execute(f"DELETE FROM memory_holds WHERE memory_id IN ({','.join('?' * len(chunk))})", list(chunk))


def current(conn: Connection, memory_ids: Sequence[int]) -> dict[int, tuple[str, str, str]]:
    """memory id -> (status, project_id, scope) of the existing rows among ``memory_ids``."""
    out: dict[int, tuple[str, str, str]] = {}
    for chunk in _chunks(list(memory_ids)):
        rows = conn.execute(
            f"SELECT memory_id, status, project_id, scope FROM memory_holds "
            f"WHERE memory_id IN ({','.join('?' * len(chunk))})",
            list(chunk),
        ).fetchall()
        out.update({r[0]: (r[1], r[2], r[3]) for r in rows})
    return out


def prune(conn: Connection) -> list[tuple[str, str]]:
    """Drop rows whose memory is gone (archived, rejected); returns their (project_id, scope)."""
    gone = conn.execute(
        "SELECT memory_id, project_id, scope FROM memory_holds WHERE memory_id NOT IN (SELECT id FROM memories)"
    ).fetchall()
    save(conn, [], [r[0] for r in gone])
    return [(r[1], r[2]) for r in gone]


def ids(conn: Connection, status: str = HELD) -> set[int]:
    """Every memory with this status: ``held`` (kept out of packets) or ``approved`` (by the user)."""
    return {r[0] for r in conn.execute("SELECT memory_id FROM memory_holds WHERE status = ?", (status,))}


def learning_ids(conn: Connection, status: str = HELD) -> set[str]:
    """The learnings of every memory with this status (what an observer's note about a learning is keyed by)."""
    return {r[0] for r in conn.execute("SELECT learning_id FROM memory_holds WHERE status = ?", (status,))}


def count_held(conn: Connection, project_id: str | None = None) -> int:
    """Held memories a packet for ``project_id`` could otherwise pick (its own and every global one)."""
    if project_id is None:
        return int(conn.execute("SELECT count(*) FROM memory_holds WHERE status = ?", (HELD,)).fetchone()[0])
    return int(
        conn.execute(
            "SELECT count(*) FROM memory_holds WHERE status = ? AND (project_id = ? OR scope = 'global')",
            (HELD, project_id),
        ).fetchone()[0]
    )


def _hold(row: Any) -> Hold:
    return Hold(
        memory_id=row["memory_id"],
        learning_id=row["learning_id"],
        project_id=row["project_id"],
        scope=row["scope"],
        status=row["status"],
        reason=row["reason"],
        findings=json.loads(row["findings_json"]),
        content_sha256=row["content_sha256"],
        guard_version=row["guard_version"],
        checked_at=row["checked_at"],
    )


def get(conn: Connection, memory_id: int) -> Hold | None:
    row = conn.execute("SELECT * FROM memory_holds WHERE memory_id = ?", (memory_id,)).fetchone()
    return _hold(row) if row else None


def listing(conn: Connection, *, statuses: Sequence[str] = (HELD,), project_id: str | None = None) -> list[HeldMemory]:
    """Holds with their memory's content, kind, source session and learned date, newest first."""
    where = [f"h.status IN ({','.join('?' * len(statuses))})"]
    params: list[Any] = list(statuses)
    if project_id is not None:
        where.append("h.project_id = ?")
        params.append(project_id)
    rows = conn.execute(
        "SELECT h.*, m.content, m.kind, m.source_session, coalesce(m.valid_from, m.created_at) AS learned_at, "
        "m.status AS claim "
        f"FROM memory_holds h JOIN memories m ON m.id = h.memory_id WHERE {' AND '.join(where)} "
        "ORDER BY learned_at DESC, h.memory_id DESC",
        params,
    ).fetchall()
    return [HeldMemory(_hold(r), r["content"], r["kind"], r["source_session"], r["learned_at"], r["claim"])
            for r in rows]  # fmt: skip

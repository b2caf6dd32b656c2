"""Materialises the event log into ``memories``, ``concepts``, event ``edges`` and the FTS index.

Incremental by default: each batch reads the checkpoint, the next events, and only the rows
those events touch, applies :class:`~nous_assets.store.projection.memory_state.Projection`, writes the
changes and advances the checkpoint — all in one ``BEGIN IMMEDIATE`` transaction, so two
projectors can never apply the same event twice and a crash never leaves half a batch.
A full rebuild is the same loop from ``event_id = 0``; ``verify`` replays into a scratch
database and diffs it against the live projection. Every path applies events under their canonical
project (:class:`~nous_assets.store.projection.identity.ProjectMap`; ``verify`` copies the aliases it needs).
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from nous_assets.store.db import Connection, atomic, open_db
from nous_assets.store.log.archive import copy_events
from nous_assets.store.log.events import StoredEvent
from nous_assets.store.projection import identity
from nous_assets.store.projection.identity import project_map
from nous_assets.store.projection.memory_state import MEMORY_COLUMNS, Memory, Policy, Projection
from nous_assets.store.search import owners
from nous_assets.store.search.fts_query import query_words
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso

PROJECTOR_NAME = "memories"
DEFAULT_BATCH = 20_000
_CHUNK = 900  # bound on SQL parameters per IN (...) list

_UPSERT_MEMORY = (
    f"INSERT INTO memories({', '.join(MEMORY_COLUMNS)}) VALUES ({', '.join('?' * len(MEMORY_COLUMNS))}) "
    "ON CONFLICT(id) DO UPDATE SET " + ", ".join(f"{c} = excluded.{c}" for c in MEMORY_COLUMNS if c != "id")
)
_UPSERT_EDGE = (
    "INSERT INTO edges(source_id, target_id, rel_type, weight, origin, created_at) VALUES (?, ?, ?, ?, 'event', ?) "
    "ON CONFLICT(source_id, target_id, rel_type) DO UPDATE SET weight = excluded.weight, origin = 'event'"
)


@dataclass
class ProjectionStats:
    events: int = 0
    batches: int = 0
    upserted: int = 0
    deleted: int = 0
    orphans: int = 0
    last_event_id: int = 0


def get_checkpoint(conn: Connection, name: str = PROJECTOR_NAME) -> int:
    row = conn.execute("SELECT last_event_id FROM projection_checkpoints WHERE projector_name = ?", (name,)).fetchone()
    return int(row[0]) if row else 0


def set_checkpoint(conn: Connection, event_id: int, name: str = PROJECTOR_NAME) -> None:
    conn.execute(
        "INSERT INTO projection_checkpoints(projector_name, last_event_id, updated_at) VALUES (?, ?, ?) "
        "ON CONFLICT(projector_name) DO UPDATE SET last_event_id = excluded.last_event_id, "
        "updated_at = excluded.updated_at",
        (name, event_id, now_iso()),
    )


def reinforcement_score(conn: Connection, memory_id: int) -> float | None:
    """The projected reinforcement score of one memory (what ``nous feedback`` reports), None if not projected."""
    row = conn.execute("SELECT reinforcement_score FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return None if row is None else float(row[0])


def fts_concepts(concepts: Iterable[str]) -> str:
    return " | ".join(sorted(concepts))


def _chunks(items: list, size: int = _CHUNK) -> Iterable[list]:
    for i in range(0, len(items), size):
        yield items[i : i + size]


def _memory_from_row(row) -> Memory:
    return Memory(**{c: row[c] for c in MEMORY_COLUMNS})


def referenced(events: Iterable[StoredEvent]) -> tuple[set[str], set[int]]:
    """The learning ids and memory ids ``events`` point at (supersession, contradiction, edge targets): rows a
    projection batch must load besides the events' own (both backends' projectors use this)."""
    ref_lids: set[str] = set()
    ref_ids: set[int] = set()
    for e in events:
        p = e.payload
        if e.event_type == "LearningSuperseded":
            ref_lids.add(p["superseded_by"])
        elif e.event_type == "LearningContradicted":
            ref_lids.add(p["contradicted_with"])
        elif e.event_type == "LearningExtracted":
            for edge in p.get("edges", ()):
                target = edge.get("target_id", edge.get("target"))
                (ref_lids.add if isinstance(target, str) else ref_ids.add)(target)
    return ref_lids, ref_ids


def _load_state(conn: Connection, events: list[StoredEvent], policy: Policy) -> Projection:
    """Pre-load exactly the rows (and referenced ids) that ``events`` can touch."""
    state = Projection(policy)
    lids = sorted({e.learning_id for e in events})
    ref_lids, ref_ids = referenced(events)
    loaded: dict[int, Memory] = {}
    for chunk in _chunks(lids):
        marks = ",".join("?" * len(chunk))
        for row in conn.execute(f"SELECT * FROM memories WHERE learning_id IN ({marks})", chunk):
            mem = _memory_from_row(row)
            loaded[mem.id] = mem
    ids = sorted(loaded)
    for chunk in _chunks(ids):
        marks = ",".join("?" * len(chunk))
        for memory_id, concept in conn.execute(
            f"SELECT memory_id, concept FROM concepts WHERE memory_id IN ({marks})", chunk
        ):
            loaded[memory_id].concepts.add(concept)
    for mem in loaded.values():
        state.memories[mem.learning_id] = mem
        state.by_id[mem.id] = mem.learning_id
    missing_lids = sorted(ref_lids - set(state.memories))
    for chunk in _chunks(missing_lids):
        marks = ",".join("?" * len(chunk))
        for memory_id, lid in conn.execute(
            f"SELECT id, learning_id FROM memories WHERE learning_id IN ({marks})", chunk
        ):
            state.known_lids[lid] = memory_id
    for chunk in _chunks(sorted(ref_ids)):
        marks = ",".join("?" * len(chunk))
        state.known_ids.update(r[0] for r in conn.execute(f"SELECT id FROM memories WHERE id IN ({marks})", chunk))
    return state


def _flush(conn: Connection, state: Projection, maintain_fts: bool = True) -> tuple[int, int]:
    """Write the batch's changes; returns (memories upserted, memories deleted)."""
    deleted = sorted(state.deleted_ids)
    for chunk in _chunks(deleted):
        marks = ",".join("?" * len(chunk))
        conn.execute(f"DELETE FROM memories WHERE id IN ({marks})", chunk)
        conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({marks})", chunk)
    alive = [m for lid in sorted(state.touched) if (m := state.memories.get(lid)) is not None]
    conn.executemany(_UPSERT_MEMORY, [m.row() for m in alive])
    conn.executemany(
        "INSERT OR IGNORE INTO concepts(memory_id, concept, owner) VALUES (?, ?, ?)",
        [
            (mem.id, concept, owners.concept_owner(mem.project_id, mem.scope))
            for lid, concepts in state.new_concepts.items()
            if (mem := state.memories.get(lid)) is not None
            for concept in sorted(concepts)
        ],
    )
    if maintain_fts:
        for chunk in _chunks([m.id for m in alive]):
            conn.execute(f"DELETE FROM memories_fts WHERE rowid IN ({','.join('?' * len(chunk))})", chunk)
        conn.executemany(
            "INSERT INTO memories_fts(rowid, content, concepts, owner) VALUES (?, ?, ?, ?)",
            [(m.id, m.content, fts_concepts(m.concepts), owners.memory_token(m.project_id, m.scope)) for m in alive],
        )
    conn.executemany(
        _UPSERT_EDGE,
        [(s, t, r, w, created) for (s, t, r), (w, created) in sorted(state.live_edges().items())],
    )
    return len(alive), len(deleted)


def project(
    conn: Connection,
    *,
    policy: Policy | None = None,
    batch_size: int = DEFAULT_BATCH,
    to_id: int | None = None,
    progress: Callable[[ProjectionStats], None] | None = None,
    maintain_fts: bool = True,
) -> ProjectionStats:
    """Apply every event after the checkpoint (up to ``to_id``); a no-op when caught up.

    ``maintain_fts=False`` is for full rebuilds, which index everything once at the end.
    """
    policy = policy or Policy()
    stats = ProjectionStats(last_event_id=get_checkpoint(conn))
    projects = project_map(conn)
    while True:
        with atomic(conn):
            last = get_checkpoint(conn)
            upper = to_id if to_id is not None else 2**62
            events = projects.apply(SqliteEventStore(conn).page(last, upper, batch_size))
            if not events:
                stats.last_event_id = last
                return stats
            state = _load_state(conn, events, policy)
            state.apply_all(events)
            upserted, deleted = _flush(conn, state, maintain_fts)
            set_checkpoint(conn, events[-1].event_id)
        stats.events += len(events)
        stats.batches += 1
        stats.upserted += upserted
        stats.deleted += deleted
        stats.orphans += state.orphans
        stats.last_event_id = events[-1].event_id
        if progress:
            progress(stats)


def reset_projection(conn: Connection) -> None:
    """Empty every table derived from the event log (never the log itself)."""
    with atomic(conn):
        conn.execute("DELETE FROM edges")
        conn.execute("DELETE FROM concepts")
        conn.execute("DELETE FROM memories")
        conn.execute("DELETE FROM memories_fts")
        set_checkpoint(conn, 0)


_SECONDARY_INDEXES = ("memories", "concepts", "edges")


def _bulk_write(conn: Connection, state: Projection) -> None:
    """Write a whole in-memory projection into empty tables, secondary indexes rebuilt once at the end.

    Appending rows in key order and sorting each index once is several times faster than
    maintaining every index row by row, which is what makes a 1M-event replay fit in a minute.
    """
    indexes = conn.execute(
        "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND sql IS NOT NULL AND tbl_name IN "
        f"({','.join('?' * len(_SECONDARY_INDEXES))})",
        _SECONDARY_INDEXES,
    ).fetchall()
    for name, _ in indexes:
        conn.execute(f'DROP INDEX "{name}"')
    active = state.active()
    conn.executemany(
        f"INSERT INTO memories({', '.join(MEMORY_COLUMNS)}) VALUES ({', '.join('?' * len(MEMORY_COLUMNS))})",
        (m.row() for m in active),
    )
    conn.executemany(
        "INSERT INTO concepts(memory_id, concept, owner) VALUES (?, ?, ?)",
        ((m.id, c, owners.concept_owner(m.project_id, m.scope)) for m in active for c in sorted(m.concepts)),
    )
    conn.executemany(
        "INSERT INTO edges(source_id, target_id, rel_type, weight, origin, created_at) VALUES (?, ?, ?, ?, 'event', ?)",
        ((s, t, r, w, created) for (s, t, r), (w, created) in sorted(state.live_edges().items())),
    )
    conn.executemany(
        "INSERT INTO memories_fts(rowid, content, concepts, owner) VALUES (?, ?, ?, ?)",
        ((m.id, m.content, fts_concepts(m.concepts), owners.memory_token(m.project_id, m.scope)) for m in active),
    )
    for _, sql in indexes:
        conn.execute(sql)


def rebuild(
    conn: Connection,
    *,
    policy: Policy | None = None,
    batch_size: int = 50_000,
    progress: Callable[[ProjectionStats], None] | None = None,
    events_from: Connection | None = None,
) -> ProjectionStats:
    """Full replay from event 0 in memory, written in one transaction: readers see the old projection
    until it commits. Uses the same :class:`Projection` semantics as the incremental path.

    ``events_from`` reads the events from another database (all tiers gathered in a scratch file by
    ``nous replay --include-archives``) instead of the live log."""
    stats = ProjectionStats()
    state = Projection(policy, track_changes=False)
    conn.execute("PRAGMA temp_store = MEMORY")  # index builds sort in memory, not in temp files
    projects = project_map(conn)
    with atomic(conn):
        reset_projection(conn)
        for batch in SqliteEventStore(events_from or conn).replay_batches(0, batch_size=batch_size):
            batch = projects.apply(batch)
            state.apply_all(batch)
            stats.events += len(batch)
            stats.batches += 1
            stats.last_event_id = batch[-1].event_id
            if progress:
                progress(stats)
        _bulk_write(conn, state)
        set_checkpoint(conn, stats.last_event_id)
    stats.upserted = sum(1 for m in state.memories.values() if m is not None)
    stats.deleted = len(state.deleted_ids)
    stats.orphans = state.orphans
    return stats


# -- verification ----------------------------------------------------------------------------
Snapshot = dict[str, list[tuple]]


def snapshot(conn: Connection) -> Snapshot:
    """Everything the event log determines, in a comparable form (no wall-clock columns)."""
    return {
        "memories": [tuple(r) for r in conn.execute(f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories ORDER BY id")],
        "concepts": [tuple(r) for r in conn.execute("SELECT memory_id, concept FROM concepts ORDER BY 1, 2")],
        "edges": [
            tuple(r)
            for r in conn.execute(
                "SELECT source_id, target_id, rel_type, weight, created_at FROM edges WHERE origin = 'event' "
                "ORDER BY 1, 2, 3"
            )
        ],
        "memories_fts": [
            tuple(r) for r in conn.execute("SELECT rowid, content, concepts FROM memories_fts ORDER BY 1")
        ],
    }


def diff_snapshots(live: Snapshot, replayed: Snapshot, limit: int = 20) -> list[str]:
    """Human-readable differences, at most ``limit`` per table."""
    out: list[str] = []
    for table in live:
        a, b = live[table], replayed[table]
        if a == b:
            continue
        if table == "memories":
            la, lb = {r[0]: r for r in a}, {r[0]: r for r in b}
            lines = [f"memories: id {i} only in live projection" for i in sorted(la.keys() - lb.keys())]
            lines += [f"memories: id {i} only in replay" for i in sorted(lb.keys() - la.keys())]
            for i in sorted(la.keys() & lb.keys()):
                cols = [c for c, x, y in zip(MEMORY_COLUMNS, la[i], lb[i], strict=True) if x != y]
                if cols:
                    detail = ", ".join(
                        f"{c}: live={la[i][MEMORY_COLUMNS.index(c)]!r} replay={lb[i][MEMORY_COLUMNS.index(c)]!r}"
                        for c in cols
                    )
                    lines.append(f"memories: id {i} differs ({detail})")
        else:
            sa, sb = set(a), set(b)
            lines = [f"{table}: only in live {r!r}" for r in sorted(sa - sb, key=repr)]
            lines += [f"{table}: only in replay {r!r}" for r in sorted(sb - sa, key=repr)]
        out.extend(lines[:limit])
        if len(lines) > limit:
            out.append(f"{table}: … {len(lines) - limit} more differences")
    return out


@dataclass
class VerifyReport:
    checkpoint: int
    events_replayed: int
    memories: int
    differences: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.differences


def verify(
    conn: Connection,
    *,
    policy: Policy | None = None,
    scratch_dir: Path | None = None,
    batch_size: int = DEFAULT_BATCH,
    cold_segments: Sequence[Path] = (),
) -> VerifyReport:
    """Replay the log up to the live checkpoint into a scratch database and diff the projections.

    ``cold_segments`` are decompressed archive segments whose events join the replay (all tiers)."""
    checkpoint = get_checkpoint(conn)
    with tempfile.TemporaryDirectory(prefix="nous-verify-", dir=scratch_dir) as tmp:
        scratch_path = Path(tmp) / "replay.db"
        scratch = open_db(scratch_path, create=True)
        try:
            scratch.close()
            conn.execute("ATTACH DATABASE ? AS scratch", (str(scratch_path),))
            try:
                with atomic(conn):
                    conn.execute(
                        "INSERT INTO scratch.learning_events SELECT * FROM main.learning_events WHERE event_id <= ?",
                        (checkpoint,),
                    )
                    conn.execute("INSERT INTO scratch.project_aliases SELECT * FROM main.project_aliases")
            finally:
                conn.execute("DETACH DATABASE scratch")
            scratch = open_db(scratch_path)
            for segment in cold_segments:
                copy_events(scratch, segment)
            stats = project(scratch, policy=policy, batch_size=batch_size)
            with atomic(conn, immediate=False):  # one read snapshot of the live projection
                live = snapshot(conn)
            replayed = snapshot(scratch)
        finally:
            scratch.close()
    return VerifyReport(
        checkpoint=checkpoint,
        events_replayed=stats.events,
        memories=len(replayed["memories"]),
        differences=diff_snapshots(live, replayed),
    )


def replay_events(conn: Connection, *, until_tx_time: str | None = None) -> Iterable[StoredEvent]:
    """All events in event_id order, optionally only those recorded at or before ``until_tx_time``, each
    under its canonical project (as the projection applies them)."""
    projects = project_map(conn)
    for event in SqliteEventStore(conn).replay(0):
        if until_tx_time is None or event.transaction_time <= until_tx_time:
            yield projects.apply((event,))[0]


class SqliteProjectionStore:
    """``memories`` + FTS5 (this module's functions, over one connection)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def project(self, *, policy: Policy | None = None, batch_size: int = DEFAULT_BATCH) -> ProjectionStats:
        return project(self.conn, policy=policy, batch_size=batch_size)

    def rebuild(self, *, policy: Policy | None = None) -> ProjectionStats:
        return rebuild(self.conn, policy=policy)

    def checkpoint(self) -> int:
        return get_checkpoint(self.conn)

    def snapshot(self) -> Snapshot:
        return snapshot(self.conn)

    def memory(self, memory_id: int) -> Memory | None:
        row = self.conn.execute(
            f"SELECT {', '.join(MEMORY_COLUMNS)} FROM memories WHERE id = ?", (memory_id,)
        ).fetchone()
        if row is None:
            return None
        mem = Memory(*row)
        mem.concepts = {r[0] for r in self.conn.execute("SELECT concept FROM concepts WHERE memory_id = ?", (mem.id,))}
        return mem

    def search_text(self, query: str, top_k: int) -> list[int]:
        words = query_words(query)
        if not words or top_k <= 0:
            return []
        rows = self.conn.execute(
            "SELECT rowid FROM memories_fts WHERE memories_fts MATCH ? "
            "ORDER BY bm25(memories_fts, 1.0, 1.0, 0.0), rowid LIMIT ?",  # the owner column never ranks
            ("{content concepts} : (" + " OR ".join(f'"{w}"' for w in words) + ")", top_k),
        ).fetchall()
        return [int(r[0]) for r in rows]

    def aliases(self) -> identity.Aliases:
        return identity.read_aliases(self.conn)

    def replace_aliases(self, aliases: identity.Aliases, *, now: str) -> dict[int, tuple[str, str]]:
        """What ``identity.update.refresh`` does with resolved aliases; a changed session's folders are
        found in the identity evidence and in the event log (a tenant fed through the providers has no
        evidence tables)."""
        with atomic(self.conn):
            moved = identity.replace_aliases(self.conn, aliases, now)
            sessions = sorted(alias for (kind, alias) in moved if kind == "session")
            folders = {alias for (kind, alias) in moved if kind == "folder"}
            folders |= identity.folders_of_sessions(self.conn, sessions)
            for i in range(0, len(sessions), 500):
                chunk = sessions[i : i + 500]
                marks = ",".join("?" * len(chunk))
                sql = f"SELECT DISTINCT project_id FROM learning_events WHERE session_id IN ({marks})"
                folders.update(r[0] for r in self.conn.execute(sql, chunk))
            remapped = identity.remap_memories(self.conn, identity.project_map(self.conn), folders)
            identity.mark_packets_stale(self.conn, {p for pair in remapped.values() for p in pair})
        return remapped

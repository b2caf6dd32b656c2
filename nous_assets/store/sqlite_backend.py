"""The SQLite providers: thin adapters that bind the existing ``store`` modules to one ``cortex.db``.

Nothing here changes behaviour: every method calls the module function the pipeline already uses (the
same SQL, the same transactions), so the default deployment stays exactly what it was. A ``cortex.db``
holds one tenant, so tenant isolation on SQLite is one file per tenant.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from nous_assets.store import cursors, edges, identity, injection_cache, interventions, projector, queue, vectors
from nous_assets.store.db import Connection, atomic
from nous_assets.store.events import AppendResult, EventStore, LearningEvent, StoredEvent
from nous_assets.store.injection_cache import PacketRow
from nous_assets.store.interventions import Active, Candidate
from nous_assets.store.memory_state import MEMORY_COLUMNS, Memory, Policy
from nous_assets.store.projector import ProjectionStats, Snapshot
from nous_assets.store.protocols import CachedPacket, query_words
from nous_assets.store.queue import QueueItem

__all__ = [
    "SqliteCacheStore",
    "SqliteCursorStore",
    "SqliteEventStore",
    "SqliteGraphStore",
    "SqliteIngestQueueStore",
    "SqliteInterventionStore",
    "SqliteProjectionStore",
    "SqliteVectorStore",
]


class SqliteEventStore:
    """:class:`nous_assets.store.events.EventStore` as the provider (it already has the contract's shape)."""

    def __init__(self, conn: Connection) -> None:
        self._store = EventStore(conn)

    def append(self, event: LearningEvent) -> AppendResult:
        return self._store.append(event)

    def append_many(self, events: Iterable[LearningEvent]) -> list[AppendResult]:
        return self._store.append_many(events)

    def get(self, event_id: int) -> StoredEvent | None:
        return self._store.get(event_id)

    def get_by_key(self, idempotency_key: str) -> StoredEvent | None:
        return self._store.get_by_key(idempotency_key)

    def replay(self, from_id: int = 0, *, batch_size: int = 5000, to_id: int | None = None) -> Iterator[StoredEvent]:
        return self._store.replay(from_id, batch_size=batch_size, to_id=to_id)

    def last_event_id(self) -> int:
        return self._store.last_event_id()


class SqliteProjectionStore:
    """``memories`` + FTS5 via :mod:`nous_assets.store.projector`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def project(self, *, policy: Policy | None = None, batch_size: int = projector.DEFAULT_BATCH) -> ProjectionStats:
        return projector.project(self.conn, policy=policy, batch_size=batch_size)

    def rebuild(self, *, policy: Policy | None = None) -> ProjectionStats:
        return projector.rebuild(self.conn, policy=policy)

    def checkpoint(self) -> int:
        return projector.get_checkpoint(self.conn)

    def snapshot(self) -> Snapshot:
        return projector.snapshot(self.conn)

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


def _blob(vector: Sequence[float]) -> bytes:
    return np.asarray(vector, dtype=np.float32).tobytes()


class SqliteVectorStore:
    """The sqlite-vec ``vectors`` table and ``vector_meta`` via :mod:`nous_assets.store.vectors`.

    The vec0 table has one dimension: an upsert of another dimension starts the table over (vectors are
    derived data, as ``embed.memory_embedding`` treats a model change), where PostgreSQL keeps both.
    """

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def upsert(
        self, vectors_: Mapping[int, Sequence[float]], *, model: str, content_hashes: Mapping[int, str], at: str
    ) -> int:
        if not vectors_:
            return 0
        dims = {len(v) for v in vectors_.values()}
        if len(dims) != 1:
            raise ValueError(f"vectors of one upsert must share a dimension, got {sorted(dims)}")
        (dimensions,) = dims
        with atomic(self.conn):
            table = vectors.table_sql(self.conn)
            if table is None or f"FLOAT[{dimensions}]" not in table.upper():
                vectors.recreate_table(self.conn, dimensions, exists=table is not None)
            blobs = {mid: _blob(v) for mid, v in vectors_.items()}
            return vectors.replace(self.conn, blobs, dict(content_hashes), model, dimensions, at)

    def search(
        self, query: Sequence[float], top_k: int, *, model: str, memory_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        table = vectors.table_sql(self.conn)
        if table is None or f"FLOAT[{len(query)}]" not in table.upper():
            return []  # the table holds one dimension: no stored vector can be of this one
        hits = vectors.knn(self.conn, _blob(query), top_k, memory_ids=memory_ids, model=model, dimensions=len(query))
        return [(mid, float(d)) for mid, d in hits if d is not None]

    def delete(self, memory_ids: Iterable[int]) -> int:
        ids = sorted(set(memory_ids))
        if not ids or vectors.table_sql(self.conn) is None:
            return 0
        with atomic(self.conn):
            marks = ",".join("?" * len(ids))
            self.conn.execute(f"DELETE FROM vectors WHERE memory_id IN ({marks})", ids)
            return self.conn.execute(f"DELETE FROM vector_meta WHERE memory_id IN ({marks})", ids).rowcount


class SqliteGraphStore:
    """The ``edges`` adjacency table via :mod:`nous_assets.store.edges`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def add_edges(self, rel_type: str, edges_: Iterable[tuple[int, int, float]], *, at: str) -> None:
        with atomic(self.conn):
            edges.upsert_derived(self.conn, rel_type, edges_, at)

    def traverse(
        self, seeds: Sequence[int], max_depth: int, *, hop_decay: float, symmetric: Sequence[str]
    ) -> dict[int, float]:
        return edges.proximity(self.conn, seeds, max_depth, hop_decay=hop_decay, symmetric=symmetric)


class SqliteCacheStore:
    """``injection_cache`` via :mod:`nous_assets.store.injection_cache`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def put(self, project_id: str, rows: Sequence[PacketRow]) -> None:
        injection_cache.replace_packets(self.conn, project_id, rows)

    def get(self, cache_key: str) -> CachedPacket | None:
        row = injection_cache.packet(self.conn, cache_key)
        return None if row is None else CachedPacket(*row)

    def invalidate(self, cache_keys: Iterable[str]) -> int:
        return injection_cache.delete_keys(self.conn, cache_keys)

    def built_versions(self) -> dict[str, int]:
        return injection_cache.built_versions(self.conn)


class SqliteIngestQueueStore:
    """``ingest_events`` via :mod:`nous_assets.store.queue` (its defaults, its transactions)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def enqueue(self, **artifact: Any) -> tuple[QueueItem, bool]:
        return queue.enqueue(self.conn, **artifact)

    def claim(self, worker_id: str, **kwargs: Any) -> list[QueueItem]:
        return queue.claim(self.conn, worker_id, **kwargs)

    def heartbeat(self, ingest_id: int, worker_id: str, **kwargs: Any) -> bool:
        return queue.heartbeat(self.conn, ingest_id, worker_id, **kwargs)

    def complete(self, ingest_id: int, worker_id: str, now: str | None = None) -> bool:
        return queue.complete(self.conn, ingest_id, worker_id, now)

    def fail(self, ingest_id: int, worker_id: str, error: str, **kwargs: Any) -> str:
        return queue.fail(self.conn, ingest_id, worker_id, error, **kwargs)

    def sweep_expired(self, **kwargs: Any) -> int:
        return queue.sweep_expired(self.conn, **kwargs)

    def requeue_dead_letter(self, ingest_id: int | None = None, now: str | None = None) -> int:
        return queue.requeue_dead_letter(self.conn, ingest_id, now)

    def get(self, ingest_id: int) -> QueueItem | None:
        return queue.get(self.conn, ingest_id)

    def counts(self) -> dict[str, int]:
        return queue.counts(self.conn)


class SqliteInterventionStore:
    """The intervention tables via :mod:`nous_assets.store.interventions`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def append_candidates(self, candidates: Sequence[Candidate]) -> int:
        with atomic(self.conn):
            return interventions.insert_candidates(self.conn, candidates)

    def add_transition(self, candidate_id: str, to_state: str, reason: str, at: str, *, actor: str = "reducer") -> None:
        with atomic(self.conn):
            interventions.add_transition(self.conn, candidate_id, to_state, reason, at, actor=actor)

    def transitions(self, candidate_id: str) -> list[tuple[str, str, str, str, str]]:
        return interventions.transitions(self.conn, candidate_id)

    def upsert_active(self, candidate: Candidate, *, expires_at: str, cooldown_until: str, at: str) -> None:
        with atomic(self.conn):
            interventions.activate(self.conn, candidate, expires_at=expires_at, cooldown_until=cooldown_until, at=at)

    def resolve(self, now: str, project_id: str | None = None) -> list[Active]:
        return interventions.current(self.conn, now, project_id)


class SqliteCursorStore:
    """``ingest_cursors`` and ``ingest_file_partitions`` via :mod:`nous_assets.store.cursors`."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def get(self, path: str) -> cursors.Cursor | None:
        return cursors.get_cursor(self.conn, path)

    def set(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> None:
        cursors.set_cursor(self.conn, path, inode, offset, mtime, now)

    def promote(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> bool:
        return cursors.promote(self.conn, path, inode, offset, mtime, now)

    def rewind(self, path: str, inode: str, mtime: str | None, now: str | None = None) -> None:
        cursors.rewind(self.conn, path, inode, mtime, now)

    def delete(self, path: str) -> int:
        return cursors.delete_cursor(self.conn, path)

    def record_day_progress(
        self, path: str, inode: str, date: str, scanned_offset: int, completed_offset: int, now: str
    ) -> None:
        with atomic(self.conn):
            cursors.record_day_progress(self.conn, path, inode, date, scanned_offset, completed_offset, now)

    def completed_offset(self, path: str, inode: str, date: str) -> int | None:
        return cursors.completed_offset(self.conn, path, inode, date)

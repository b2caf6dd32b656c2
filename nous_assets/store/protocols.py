"""The spec's backend provider contracts ("Backend Provider Contracts") as structural protocols.

A service (``nous serve``), the push/pull clients and the pipeline talk to storage through these seven
providers, so swapping SQLite (one ``cortex.db`` per developer, the default) for PostgreSQL (one shared
database, many tenants) is configuration, not code. Each provider is bound to one tenant when it is
opened (:func:`nous_assets.store.backend.open_backend`): no method takes a tenant, so no caller can reach
another tenant's rows by passing the wrong one. A ``cortex.db`` holds exactly one tenant; PostgreSQL keys
every row by ``tenant_id`` and filters every query on it.

The shapes follow what the SQLite modules already do (``events``, ``projector``, ``queue``, ``vectors``,
``edges``, ``injection_cache``, ``interventions``): same value types, same idempotency and validation
rules, so one contract suite (``tests/store/contract``) holds both implementations to the same behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

from nous_assets.store.ingest.cursors import Cursor
from nous_assets.store.log.events import AppendResult, LearningEvent, StoredEvent
from nous_assets.store.packet_row import CachedPacket, PacketRow
from nous_assets.store.projection.identity import Aliases
from nous_assets.store.projection.memory_state import Memory, Policy
from nous_assets.store.sqlite.interventions import Active, InterventionCandidate
from nous_assets.store.sqlite.projection import ProjectionStats, Snapshot
from nous_assets.store.sqlite.queue import QueueItem


@runtime_checkable
class EventStore(Protocol):
    """The immutable event log: validated, idempotent appends; ordered replay by ``event_id``."""

    def append(self, event: LearningEvent) -> AppendResult:
        """Append one event; a known ``idempotency_key`` returns the stored event with ``created=False``."""
        ...

    def append_many(self, events: Iterable[LearningEvent]) -> list[AppendResult]:
        """Validate all, then write all new ones in one transaction (all or none); raises InvalidEventError."""
        ...

    def get(self, event_id: int) -> StoredEvent | None: ...

    def get_by_key(self, idempotency_key: str) -> StoredEvent | None: ...

    def replay(self, from_id: int = 0, *, batch_size: int = 5000, to_id: int | None = None) -> Iterator[StoredEvent]:
        """Events with ``from_id < event_id <= to_id`` in ``event_id`` order (never client time)."""
        ...

    def last_event_id(self) -> int: ...


@runtime_checkable
class ProjectionStore(Protocol):
    """Current memories projected from the log (one definition of what an event means: ``memory_state``)."""

    def project(self, *, policy: Policy | None = None, batch_size: int = 20_000) -> ProjectionStats:
        """Apply every event after the checkpoint, batch by batch, each batch atomic with its checkpoint."""
        ...

    def rebuild(self, *, policy: Policy | None = None) -> ProjectionStats:
        """Empty the projection and replay the whole log into it (readers see old or new, never half)."""
        ...

    def checkpoint(self) -> int:
        """The last ``event_id`` the projection reflects."""
        ...

    def snapshot(self) -> Snapshot:
        """Everything the log determines (memories, concepts, event edges, full-text rows), comparable."""
        ...

    def memory(self, memory_id: int) -> Memory | None: ...

    def search_text(self, query: str, top_k: int) -> list[int]:
        """Ids of memories matching ``query`` by full-text search, best first."""
        ...

    def aliases(self) -> Aliases:
        """{(kind, alias): (project, evidence)}: the project identity the projection maps events through."""
        ...

    def replace_aliases(self, aliases: Aliases, *, now: str) -> dict[int, tuple[str, str]]:
        """Make the aliases ``aliases``, move the memories whose project changed and mark both projects'
        packets stale, atomically, so the live projection equals a replay; {memory id: (old, new project)}."""
        ...


@runtime_checkable
class VectorStore(Protocol):
    """Memory embeddings and cosine k-nearest-neighbour search."""

    def upsert(
        self, vectors: Mapping[int, Sequence[float]], *, model: str, content_hashes: Mapping[int, str], at: str
    ) -> int:
        """Store (replace) the vectors of existing memories; returns how many were written."""
        ...

    def search(
        self, query: Sequence[float], top_k: int, *, model: str, memory_ids: Sequence[int] | None = None
    ) -> list[tuple[int, float]]:
        """(memory_id, cosine distance) of the ``top_k`` nearest vectors of ``model``, nearest first."""
        ...

    def delete(self, memory_ids: Iterable[int]) -> int: ...


@runtime_checkable
class GraphStore(Protocol):
    """Edges between memories: derived writes and the weighted bounded walk retrieval reads."""

    def add_edges(self, rel_type: str, edges: Iterable[tuple[int, int, float]], *, at: str) -> None:
        """Write derived (source, target, weight) edges; an edge the event log wrote is never overwritten."""
        ...

    def traverse(
        self, seeds: Sequence[int], max_depth: int, *, hop_decay: float, symmetric: Sequence[str]
    ) -> dict[int, float]:
        """{memory id: best path weight} within ``max_depth`` hops of ``seeds`` (seeds left out)."""
        ...


@runtime_checkable
class CacheStore(Protocol):
    """Precomputed injection packets: written by the cache builder, read on the hook path."""

    def put(self, project_id: str, rows: Sequence[PacketRow]) -> None:
        """Replace every packet of ``project_id`` with ``rows`` atomically."""
        ...

    def get(self, cache_key: str) -> CachedPacket | None: ...

    def invalidate(self, cache_keys: Iterable[str]) -> int: ...

    def built_versions(self) -> dict[str, int]:
        """{project: oldest ``built_from_event_id`` of its packets}: what a rebuild must refresh."""
        ...


@runtime_checkable
class IngestQueueStore(Protocol):
    """The durable ingest queue: idempotent enqueue, leased claims, heartbeats, backoff, dead letters."""

    def enqueue(
        self,
        *,
        source: str,
        project_id: str,
        session_id: str,
        transcript_path: str,
        file_inode: str | None,
        file_offset: int,
        payload: dict[str, Any],
        idempotency_key: str,
        now: str | None = None,
    ) -> tuple[QueueItem, bool]: ...

    def claim(
        self, worker_id: str, *, limit: int = 10, lease_seconds: float = ..., now: str | None = None
    ) -> list[QueueItem]:
        """Lease up to ``limit`` due items; concurrent claimers get disjoint sets."""
        ...

    def heartbeat(self, ingest_id: int, worker_id: str, *, lease_seconds: float = ..., now: str | None = None) -> bool:
        ...

    def complete(self, ingest_id: int, worker_id: str, now: str | None = None) -> bool:
        """The spec's ``ack``: False (nothing written) when the lease was lost."""
        ...

    def fail(
        self,
        ingest_id: int,
        worker_id: str,
        error: str,
        *,
        max_attempts: int = ...,
        backoff_base_seconds: float = ...,
        now: str | None = None,
    ) -> str: ...

    def sweep_expired(
        self, *, backoff_base_seconds: float = ..., max_attempts: int = ..., now: str | None = None
    ) -> int: ...

    def requeue_dead_letter(self, ingest_id: int | None = None, now: str | None = None) -> int: ...

    def get(self, ingest_id: int) -> QueueItem | None: ...

    def counts(self) -> dict[str, int]: ...


@runtime_checkable
class InterventionStore(Protocol):
    """Immutable intervention candidates, one active intervention per dedupe key, and the audit trail."""

    def append_candidates(self, candidates: Sequence[InterventionCandidate]) -> int:
        """Append the candidates not seen before (same id: nothing written); how many were new."""
        ...

    def add_transition(self, candidate_id: str, to_state: str, reason: str, at: str, *, actor: str = "reducer") -> None:
        """Append one state change (from the candidate's current state) to the audit trail."""
        ...

    def transitions(self, candidate_id: str) -> list[tuple[str, str, str, str, str]]:
        """(from, to, reason, actor, at) of one candidate, in order."""
        ...

    def upsert_active(self, candidate: InterventionCandidate, *, expires_at: str, cooldown_until: str, at: str) -> None:
        """Make ``candidate`` the active intervention of its dedupe key."""
        ...

    def resolve(self, now: str, project_id: str | None = None) -> list[Active]:
        """Unexpired interventions a packet of ``project_id`` carries, highest priority first."""
        ...


@runtime_checkable
class CursorStore(Protocol):
    """Per-file ingest cursors and per-day file progress (:mod:`nous_assets.store.ingest.cursors`).

    A cursor says how far a transcript (path + inode) has been durably ingested, so a restart re-reads
    rather than skips; :meth:`promote` only moves forward, :meth:`rewind` handles a file truncated in place.
    """

    def get(self, path: str) -> Cursor | None:
        """The most recently updated cursor of ``path`` (older ones are earlier inodes of a rotated file)."""
        ...

    def set(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> None: ...

    def promote(self, path: str, inode: str | None, offset: int, mtime: str | None, now: str | None = None) -> bool:
        """Move the cursor of ``(path, inode)`` forward to ``offset``; False (untouched) when it is already there."""
        ...

    def rewind(self, path: str, inode: str, mtime: str | None, now: str | None = None) -> None:
        """Back to 0, and what was completed for the inode's old bytes forgotten (truncated in place)."""
        ...

    def delete(self, path: str) -> int: ...

    def record_day_progress(
        self, path: str, inode: str, date: str, scanned_offset: int, completed_offset: int, now: str
    ) -> None:
        """How far ``path`` was scanned for ``date``; its completed offset only ever grows."""
        ...

    def completed_offset(self, path: str, inode: str, date: str) -> int | None: ...

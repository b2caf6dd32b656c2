"""The spec's backend provider contracts ("Backend Provider Contracts") as structural protocols.

What runs on either backend (``nous serve``, team mode, the push/pull clients) talks to storage through these
providers, so swapping SQLite (one ``cortex.db`` per developer, the default) for PostgreSQL (one shared
database, many tenants) is configuration, not code. The contract is sized to what PostgreSQL serves (the
team's log of record, its projection and packets, interventions; see
:mod:`nous_assets.store`): graph walks and file cursors are the laptop pipeline's, called on SQLite through
the modules of ``store/`` directly, so they are not in it; the ingest queue is only where something extracts
(``Backend.queue`` is None on PostgreSQL). Each provider is bound
to one tenant when it is opened (:func:`nous_assets.store.backend.open_backend`): no method takes a tenant,
so no caller can reach another tenant's rows by passing the wrong one. A ``cortex.db`` holds exactly one
tenant; PostgreSQL keys every row by ``tenant_id`` and filters every query on it.

The shapes follow the SQLite providers (``store/sqlite/``, ``store/search/vectors``): same value types, same
idempotency and validation rules, so one contract suite (``tests/store/contract``) holds both implementations
to the same behaviour.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, Protocol, runtime_checkable

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
    """The ingest queue's enqueue side (``POST /v1/artifacts``): idempotent, validated, never resurrecting a
    finished key. Only where something extracts (``Capabilities.extracts``: SQLite, whose pipeline drains it);
    claims, leases and dead letters are that worker's (:mod:`nous_assets.store.sqlite.queue`)."""

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

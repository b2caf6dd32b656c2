"""Read-only health figures for ``nous doctor``: is the injection cache current, when did ingest last run."""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.db import Connection


@dataclass(frozen=True)
class CacheHealth:
    """Packets versus the memories they were built from, per project (the global packet is project ``*``)."""

    packets: int
    projects: int  # projects that have memories
    stale: tuple[str, ...]  # built from an event older than the newest of their memories (or global ones)
    missing: tuple[str, ...]  # memories but no packet at all
    newest_packet_at: str | None
    newest_memory_event: int


@dataclass(frozen=True)
class IngestHealth:
    last_completed_at: str | None  # newest completed ingest queue item
    last_event_at: str | None  # newest learning event's transaction time
    events: int
    failed: int
    dead_letter: int


def cache_health(conn: Connection) -> CacheHealth:
    """Compare each project's packets (``built_from_event_id``) with its memories' newest event.

    A packet is current when it was built from at least the newest ``last_event_id`` among the project's
    memories and the global-scope ones: the same stamp the cache builder writes.
    """
    newest_global = conn.execute(
        "SELECT coalesce(max(last_event_id), 0) FROM memories WHERE scope = 'global'"
    ).fetchone()[0]
    versions = {
        project: max(int(newest), int(newest_global))
        for project, newest in conn.execute("SELECT project_id, max(last_event_id) FROM memories GROUP BY project_id")
    }
    if newest_global:
        versions["*"] = int(newest_global)
    built = dict(
        conn.execute(
            "SELECT project_id, min(built_from_event_id) FROM injection_cache WHERE cache_key NOT LIKE 'alias:%' "
            "GROUP BY project_id"
        ).fetchall()
    )
    packets, newest_at = conn.execute("SELECT count(*), max(created_at) FROM injection_cache").fetchone()
    return CacheHealth(
        packets=int(packets),
        projects=len([p for p in versions if p != "*"]),
        stale=tuple(sorted(p for p, v in versions.items() if p in built and int(built[p]) < v)),
        missing=tuple(sorted(p for p in versions if p not in built)),
        newest_packet_at=newest_at,
        newest_memory_event=max(versions.values(), default=0),
    )


def ingest_health(conn: Connection) -> IngestHealth:
    """When the pipeline last completed work, and how much is failing."""
    completed = conn.execute("SELECT max(updated_at) FROM ingest_events WHERE status = 'completed'").fetchone()[0]
    events, last_event = conn.execute("SELECT count(*), max(transaction_time) FROM learning_events").fetchone()
    counts = dict(
        conn.execute(
            "SELECT status, count(*) FROM ingest_events WHERE status IN ('failed', 'dead_letter') GROUP BY status"
        ).fetchall()
    )
    return IngestHealth(
        last_completed_at=completed,
        last_event_at=last_event,
        events=int(events),
        failed=int(counts.get("failed", 0)),
        dead_letter=int(counts.get("dead_letter", 0)),
    )

"""The tenant's working database: the team's whole log projected once, the laptop's lifecycle run over it, its
packets written to the tenant's ``CacheStore`` (``nous pull`` fetches them).

There is one packet builder (:func:`~nous_assets.retrieve.cache_build.build_cache`, SQL over a ``cortex.db``),
so the tenant has a working ``cortex.db`` under the team staging root (``.tenants/<tenant>/``), and that is
where the team's events are projected, once: developers' runs write their events into it (extraction compares
each learning with the team's memories there) and publish them from it to the PostgreSQL tenant, the log of
record, without projecting them there; this module copies what other writers put in the tenant's log (``nous
push``, another staging root) into the working database with the generic EventStore-to-EventStore copy of
:mod:`~nous_assets.store.log.event_publish` (keys, uuids and times kept; checkpointed, so a run copies only what
is new). Then the tenant's steps of the ingest step list run on it
(:data:`~nous_assets.team.steps.TENANT_STEPS`: retention, project, embed, link, NLI, interventions, packets,
the functions a laptop's assets call); the events they write (decay, archival, contradictions) are published
back to the tenant, the log of record; the working database's packets then replace, project by project,
those of the tenant's ``CacheStore``.

Ids differ between the two logs (a memory's id is the id of the event that extracted it), so the memory ids
of a packet and its ``built_from_event_id`` are translated to the tenant's event ids through the idempotency
keys: a packet on PostgreSQL names the tenant's memories and the tenant's newest event it reflects.

A project's packets are written only when they differ from what the tenant holds, and a project the working
database no longer has packets for is emptied: a re-run with nothing new writes nothing. Developers of one
tenant share its working database; a file lock makes their runs take turns on it.

The working database has no lake (transcripts stay in each developer's staging folder), so the packets are the
default fingerprint per project (and the global packet); branch and checkout packets, which need the lake's
profile of a project, are not built in team mode: the resolver falls back to the default packet.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import astuple, dataclass, replace
from pathlib import Path

from nous_assets.errors import NousError
from nous_assets.pipeline.run import IngestRun
from nous_assets.pipeline.steps import run_steps
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, atomic, open_db
from nous_assets.store.log.event_publish import publish_events, publish_staging, valid_checkpoint
from nous_assets.store.packet_row import PacketRow
from nous_assets.store.protocols import CacheStore, EventStore
from nous_assets.store.sqlite import cache as injection_cache
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import get_checkpoint, set_checkpoint
from nous_assets.team.steps import TENANT_STEPS

MIRRORS_DIR = ".tenants"
"""Folder of the tenant mirrors under the team staging root: a developer folder never starts with a dot."""

MIRROR_CHECKPOINT = "tenant_mirror"
"""Named checkpoint (``projection_checkpoints``) of the mirror: the tenant's last event id it holds."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


@dataclass
class TenantPackets:
    """What one run did: events copied into the working database, the tenant's steps on it, the events they
    wrote published back, packets written to the tenant."""

    tenant_id: str
    mirror: Path
    events_mirrored: int = 0
    events_already_mirrored: int = 0
    tenant_last_event_id: int = 0
    events_projected: int = 0
    retention_events: int = 0
    memories_embedded: int = 0
    memories_left_to_embed: int = 0
    edges_written: int = 0
    contradictions_found: int = 0
    interventions_active: int = 0
    events_published: int = 0
    projects_rebuilt: int = 0
    projects_written: int = 0
    projects_unchanged: int = 0
    projects_emptied: int = 0
    packets_written: int = 0


def mirror_dir(staging_root: Path, tenant_id: str) -> Path:
    """The tenant's mirror folder: its id when that is a plain folder name, else a readable name plus a hash
    (a tenant id may hold ``/`` or ``..``; it must never leave the mirrors folder)."""
    name = tenant_id
    if not _SAFE_NAME.fullmatch(tenant_id):
        readable = re.sub(r"[^A-Za-z0-9_.-]", "-", tenant_id).strip(".-")[:40] or "tenant"
        name = f"{readable}-{hashlib.blake2b(tenant_id.encode(), digest_size=8).hexdigest()}"
    return staging_root / MIRRORS_DIR / name


def mirror_settings(settings: Settings, folder: Path) -> Settings:
    """``settings`` pointed at the mirror (its own cortex.db; no lake: packets take the default fingerprint)."""
    return replace(settings, data_dir=folder, db_path=folder / "cortex.db", archive_dir=folder / "archive")


@contextlib.contextmanager
def working_db(settings: Settings, staging_root: Path) -> Iterator[Connection]:
    """The tenant's working cortex.db (created on first use), closed afterwards: developers' runs write their
    events into it while a tenant run holds the lock (SQLite's write lock makes the writers take turns)."""
    local = mirror_settings(settings, mirror_dir(staging_root, settings.tenant_id))
    local.data_dir.mkdir(parents=True, exist_ok=True, mode=0o700)
    conn = open_db(local.db_path, create=True, busy_timeout_ms=local.db_busy_timeout_ms)
    try:
        yield conn
    finally:
        conn.close()


@contextlib.contextmanager
def mirror_lock(folder: Path) -> Iterator[None]:
    """Serialise the runs of a tenant's developers on its mirror (the per-developer run limit does not)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    with open(folder / ".lock", "a") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def mirror_events(tenant: EventStore, conn: Connection) -> tuple[int, int, int]:
    """Copy the tenant's events the mirror lacks into it: (copied, already there, tenant's last event id).

    The checkpoint is written after each batch the mirror committed; one naming an event the mirror does not
    hold (a mirror deleted and recreated) is ignored and everything is copied again, which the keys make safe.
    """
    mirror = SqliteEventStore(conn)

    def saved(last: int) -> None:
        with atomic(conn):
            set_checkpoint(conn, last, MIRROR_CHECKPOINT)

    after = valid_checkpoint(tenant, mirror, get_checkpoint(conn, MIRROR_CHECKPOINT))
    stats = publish_events(tenant, mirror, after=after, on_batch=saved)
    return stats.published, stats.already_present, tenant.last_event_id()


class IdTranslator:
    """Mirror event ids -> the tenant's event ids, through the idempotency keys (memoised for one run)."""

    def __init__(self, mirror: EventStore, tenant: EventStore) -> None:
        self.mirror, self.tenant = mirror, tenant
        self._ids: dict[int, int] = {}

    def __call__(self, mirror_id: int) -> int:
        if mirror_id not in self._ids:
            event = self.mirror.get(mirror_id)
            found = self.tenant.get_by_key(event.idempotency_key) if event is not None else None
            if found is None:
                raise NousError(
                    f"the tenant mirror holds event {mirror_id}, which the tenant lacks (the tenant was reset?): "
                    "delete the mirror folder and rerun to rebuild it from the tenant's log"
                )
            self._ids[mirror_id] = found.event_id
        return self._ids[mirror_id]


def tenant_row(row: PacketRow, to_tenant: IdTranslator) -> PacketRow:
    """A mirror packet with its memory ids and ``built_from_event_id`` in the tenant's event ids."""
    key, project_id, scope, fingerprint, text, ids_json, chars, built_from, created = row
    ids = [to_tenant(int(i)) for i in json.loads(ids_json)]
    built = to_tenant(built_from) if built_from else 0
    return (key, project_id, scope, fingerprint, text, json.dumps(ids), chars, built, created)


def _held_by_tenant(cache: CacheStore, built: dict[str, int], project_id: str, rows: list[PacketRow]) -> bool:
    """Does the tenant already hold these packets (every key with the same columns, and no packet of the
    project built from an older event, which would be a stale extra the protocol cannot list)?"""
    if built.get(project_id) != min(r[7] for r in rows):
        return False
    for row in rows:
        got = cache.get(row[0])
        if got is None or astuple(got) != row:
            return False
    return True


def publish_packets(conn: Connection, tenant: EventStore, cache: CacheStore, stats: TenantPackets) -> None:
    """Replace each project's packets in the tenant's cache with the mirror's where they differ; empty the
    projects the mirror has no packets for (their memories moved to another project or were archived)."""
    to_tenant = IdTranslator(SqliteEventStore(conn), tenant)
    by_project: dict[str, list[PacketRow]] = {}
    for row in injection_cache.all_packets(conn):
        by_project.setdefault(row[1], []).append(tenant_row(row, to_tenant))
    built = cache.built_versions()
    for project_id, rows in sorted(by_project.items()):
        if _held_by_tenant(cache, built, project_id, rows):
            stats.projects_unchanged += 1
            continue
        cache.put(project_id, rows)
        stats.projects_written += 1
        stats.packets_written += len(rows)
    for project_id in sorted(set(built) - set(by_project)):
        cache.put(project_id, [])
        stats.projects_emptied += 1


def tenant_steps(conn: Connection, settings: Settings, stats: TenantPackets, *, source: str, worker: str) -> None:
    """:data:`~nous_assets.team.steps.TENANT_STEPS` over the working database (no days: it has no lake)."""
    before = get_checkpoint(conn)
    done = run_steps(IngestRun(settings, conn, [], source, worker), TENANT_STEPS)
    # retention projects what was copied before it judges (as on a laptop), then `project` what it wrote: the
    # ids of the working database are consecutive (nothing is deleted from it), so the checkpoint counts both
    stats.events_projected = get_checkpoint(conn) - before
    stats.retention_events = done["retention"].events_written
    embedded = done["embed"].memories
    stats.memories_embedded, stats.memories_left_to_embed = embedded.embedded, embedded.remaining
    stats.edges_written = done["link"].relates_to + done["link"].causes
    stats.contradictions_found = done["nli"].stats.contradictions
    stats.interventions_active = done["interventions"].active
    stats.projects_rebuilt = done["packets"].projects_rebuilt


def build_tenant_packets(
    settings: Settings,
    staging_root: Path,
    tenant: EventStore,
    cache: CacheStore,
    *,
    source: str = "fs_watch",
    worker: str = "nous-team",
) -> TenantPackets:
    """Copy what is new in the tenant's log into its working database, run the tenant's steps there, publish
    the events they wrote back to the tenant, write the packets to the tenant's cache.

    ``settings`` are the developer's (policy, embedding and retrieval settings; ``tenant_id`` names the
    tenant); ``tenant`` and ``cache`` are that tenant's providers.
    """
    folder = mirror_dir(staging_root, settings.tenant_id)
    local = mirror_settings(settings, folder)
    stats = TenantPackets(settings.tenant_id, folder / "cortex.db")
    with mirror_lock(folder), working_db(settings, staging_root) as conn:
        stats.events_mirrored, stats.events_already_mirrored, stats.tenant_last_event_id = mirror_events(tenant, conn)
        tenant_steps(conn, local, stats, source=source, worker=worker)
        stats.events_published = publish_staging(conn, tenant, settings.tenant_id).published
        publish_packets(conn, tenant, cache, stats)
    return stats

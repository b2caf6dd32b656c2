"""``nous pull``: copy the developer's precomputed injection packets from ``nous serve`` into ``cortex.db``.

The SessionStart hook keeps reading a local file and never waits on the network: pull is the only step that
talks to the server. Every page is fetched first; then each project's packets replace the local ones of
that project in one transaction (the resolver sees the old set or the new, never a mix). A server that is
down leaves the local cache as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

from nous_assets.service.client import Client
from nous_assets.service.push import identity_of, whoami
from nous_assets.store.db import Connection, atomic
from nous_assets.store.injection_cache import PacketRow
from nous_assets.store.protocols import CachedPacket
from nous_assets.store.sqlite_backend import SqliteCacheStore

PAGE = 200
_ROW = tuple(f.name for f in fields(CachedPacket))  # a PacketRow's columns, in order


@dataclass
class PullReport:
    packets: int = 0
    projects: list[str] = field(default_factory=list)


def fetch(client: Client, *, project_id: str | None, progress: Callable[[int], None] | None = None) -> list[dict]:
    """Every packet the server holds for the token's tenant (or one project of it), page by page."""
    me = whoami(client)
    identity = identity_of(me, "pull", "fs_reconcile", project_id)
    packets: list[dict[str, Any]] = []
    after = ""
    while True:
        _, answer = client.post("/v1/packets", {"identity": identity, "project_id": project_id, "after": after,
                                                "limit": PAGE})  # fmt: skip
        packets += answer.get("packets", [])
        if progress:
            progress(len(packets))
        after = answer.get("next_after")
        if not after:
            return packets


def store(conn: Connection, packets: list[dict]) -> PullReport:
    """Replace each pulled project's local packets with the server's, all in one transaction."""
    by_project: dict[str, list[PacketRow]] = {}
    for p in packets:
        by_project.setdefault(p["project_id"], []).append(tuple(p[k] for k in _ROW))  # type: ignore[arg-type]
    cache = SqliteCacheStore(conn)
    with atomic(conn):
        for project, rows in sorted(by_project.items()):
            cache.put(project, rows)
    return PullReport(packets=len(packets), projects=sorted(by_project))

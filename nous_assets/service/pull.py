"""``nous pull``: copy the developer's precomputed injection packets from ``nous serve`` into ``cortex.db``.

The SessionStart hook keeps reading a local file and never waits on the network: pull is the only step that
talks to the server. Every page is fetched first; then each project's packets replace the local ones of
that project in one transaction (the resolver sees the old set or the new, never a mix). A server that is
down leaves the local cache as it was.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nous_assets.service.client import Client
from nous_assets.service.push import whoami
from nous_assets.store.db import Connection, atomic
from nous_assets.store.injection_cache import PacketRow
from nous_assets.store.sqlite_backend import SqliteCacheStore
from nous_assets.timeutil import now_iso

PAGE = 200
_ROW = ("cache_key", "project_id", "scope", "fingerprint_json", "packet_text", "memory_ids_json", "char_count",
        "built_from_event_id", "created_at")  # fmt: skip


@dataclass
class PullReport:
    packets: int = 0
    projects: list[str] = field(default_factory=list)


def fetch(client: Client, *, project_id: str | None, progress: Callable[[int], None] | None = None) -> list[dict]:
    """Every packet the server holds for the token's tenant (or one project of it), page by page."""
    me = whoami(client)
    identity = {"project_id": project_id or "*", "session_id": f"pull:{now_iso()}", "client_id": me["client_id"],
                "event_source": "fs_reconcile", "tenant_id": me["tenant_id"]}  # fmt: skip
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

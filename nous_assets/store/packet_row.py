"""The injection packet row: what the cache builder writes, ``nous pull`` copies and the service pages out.

Declared here once for both backends (``injection_cache`` on SQLite, its tenant-keyed twin on PostgreSQL): a
row is :data:`PacketRow` as it is written and :class:`CachedPacket` as a reader gets it, the same nine columns
in the same order. The resolver reads the SQLite table with its own stdlib-only query
(``resolver/cache_read.py``): it may import nothing of ``nous_assets``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

#: :class:`CachedPacket` as a tuple (``dataclasses.astuple``), the form the cache builder writes:
#: (cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, char_count,
#:  built_from_event_id, created_at)
PacketRow = tuple[str, str, str, str, str, str, int, int, str]


@dataclass(frozen=True)
class CachedPacket:
    """One ``injection_cache`` row as a reader (the resolver, ``nous pull``) gets it."""

    cache_key: str
    project_id: str
    scope: str
    fingerprint_json: str
    packet_text: str
    memory_ids_json: str
    char_count: int
    built_from_event_id: int
    created_at: str


#: The row's columns in order, as SQL names them on either backend (``SELECT {PACKET_COLUMNS} FROM injection_cache``).
PACKET_COLUMNS = ", ".join(f.name for f in fields(CachedPacket))

"""``nous pull``: copy the developer's precomputed injection packets from ``nous serve`` into ``cortex.db``.

The SessionStart hook keeps reading a local file and never waits on the network: pull is the only step that
talks to the server. Every page is fetched first; then each project's packets replace the local ones of
that project in one transaction (the resolver sees the old set or the new, never a mix). A server that is
down leaves the local cache as it was.

The server is not trusted any more than a transcript is: its packets end up in a new session's context. Each
answer must be the contract's (:class:`~nous_assets.service.models.PacketsResponse`, checked by the client), its
cursor must move on, its packets must belong where they say, and there is a ceiling on pages and packets; any
breach stops the pull with one line before anything is written. Each packet then passes :func:`recheck`, the
same sanitiser, guard and redactor a locally built packet passes, and the hook's size limit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from nous_assets.capture.redact import redact
from nous_assets.safety.guard import classify
from nous_assets.safety.sanitize import sanitize
from nous_assets.service.client import Client
from nous_assets.service.push import identity_of, whoami
from nous_assets.store.db import Connection, atomic
from nous_assets.store.packet_row import CachedPacket, PacketRow
from nous_assets.store.sqlite.cache import SqliteCacheStore
from resolver.hook_io import MAX_CONTEXT_CHARS

if TYPE_CHECKING:  # pydantic is imported only when a pull runs
    from nous_assets.service.models import PacketOut

PAGE = 200
MAX_PACKETS = 10_000  # far beyond a tenant's projects times their checkouts; a server that never ends is refused
MAX_PAGES = 1_000
MAX_FIELD_CHARS = 64 * 1024  # every field but the text (cut by recheck): the hook parses them at each session start
MAX_EVENT_ID = 2**63 - 1  # what SQLite's INTEGER holds
ROUTE = "/v1/packets"


@dataclass
class Pulled:
    """The re-checked rows of one pull and what the re-check took out."""

    rows: list[PacketRow] = field(default_factory=list)
    projects: set[str] = field(default_factory=set)  # every project the server sent, kept packets or not
    lines_removed: int = 0  # lines the guard holds
    lines_cut: int = 0  # lines past the hook's size limit
    dropped: int = 0  # packets with nothing left to say


@dataclass
class PullReport:
    packets: int = 0
    projects: list[str] = field(default_factory=list)
    lines_removed: int = 0
    lines_cut: int = 0
    dropped: int = 0


def recheck(text: str) -> tuple[str, int, int]:
    """(text, lines held, lines cut): ``text`` cleaned line by line as a local packet is, so a server (or whoever
    wrote to it) can put nothing in the hook's output that a local memory could not. A line the guard holds is
    removed (whatever marks it carries: an approval in review is the server's word); lines past the hook's limit
    are cut whole. The text is "" when no line is left, or when every bullet was held (a heading says nothing)."""
    kept: list[str] = []
    held = cut = 0
    size = -1
    for raw in text.splitlines():
        line = sanitize(raw)  # one line each, as every memory becomes; the guard reads it before redaction hides it
        if classify(line).held:
            held += 1
            continue
        line = redact(line)
        if cut or size + 1 + len(line) > MAX_CONTEXT_CHARS:
            cut += 1
            continue
        kept.append(line)
        size += 1 + len(line)
    bullets = any(line.startswith("- ") for line in kept)
    if not any(kept) or (held and not bullets):
        return "", held, cut
    return "\n".join(kept), held, cut


def _admit(client: Client, packet: PacketOut, project_id: str | None, seen: set[str]) -> None:
    """Refuse a packet that is not where it says it is: another project than asked for, a key outside its project
    (the local store replaces a project's packets by key prefix), a key twice, an oversized field."""
    where = f"packet {packet.cache_key[:80]!r}"
    if project_id is not None and packet.project_id != project_id:
        raise client.error(ROUTE, f"{where} of another project than --project asked for")
    if not packet.cache_key.startswith(f"{packet.project_id}:") or "%" in packet.project_id:
        raise client.error(ROUTE, f"{where} whose key is not of its project")
    if packet.cache_key in seen:
        raise client.error(ROUTE, f"{where} twice")
    sizes = (packet.cache_key, packet.project_id, packet.scope, packet.fingerprint_json, packet.memory_ids_json,
             packet.created_at)  # fmt: skip
    if any(len(value) > MAX_FIELD_CHARS for value in sizes) or not 0 <= packet.built_from_event_id <= MAX_EVENT_ID:
        raise client.error(ROUTE, f"{where} with a field out of bounds")
    seen.add(packet.cache_key)


def _take(pulled: Pulled, packet: PacketOut) -> None:
    pulled.projects.add(packet.project_id)
    text, held, cut = recheck(packet.packet_text)
    pulled.lines_removed += held
    pulled.lines_cut += cut
    if not text:
        pulled.dropped += 1
        return
    row = CachedPacket(**packet.model_dump())
    pulled.rows.append(dataclasses.astuple(dataclasses.replace(row, packet_text=text, char_count=len(text))))


def fetch(client: Client, *, project_id: str | None, progress: Callable[[int], None] | None = None) -> Pulled:
    """Every packet the server holds for the token's tenant (or one project of it), page by page, re-checked as
    it arrives (memory holds re-checked packets, not the server's); raises the client's errors, writes nothing."""
    from nous_assets.service.models import PacketsResponse

    identity = identity_of(whoami(client), "pull", "fs_reconcile", project_id)
    pulled = Pulled()
    seen: set[str] = set()
    after, cursors = "", {""}
    for _ in range(MAX_PAGES):
        page = client.call(ROUTE, {"identity": identity, "project_id": project_id, "after": after, "limit": PAGE},
                           PacketsResponse)  # fmt: skip
        if len(page.packets) > PAGE:
            raise client.error(ROUTE, f"{len(page.packets)} packets for a page of {PAGE}")
        for packet in page.packets:
            _admit(client, packet, project_id, seen)
            _take(pulled, packet)
        if len(seen) > MAX_PACKETS:
            raise client.error(ROUTE, f"more than {MAX_PACKETS:,} packets; refused")
        if progress:
            progress(len(seen))
        if page.next_after is None:
            return pulled
        if page.next_after in cursors or not page.packets:
            raise client.error(ROUTE, f"a next_after that does not move on ({page.next_after[:80]!r})")
        after = page.next_after
        cursors.add(after)
    raise client.error(ROUTE, f"more than {MAX_PAGES:,} pages; refused")


def store(conn: Connection, pulled: Pulled) -> PullReport:
    """Replace each pulled project's local packets with the server's, all in one transaction (a project whose
    every packet the re-check dropped is emptied: the server's current word for it is "nothing safe")."""
    by_project: dict[str, list[PacketRow]] = {project: [] for project in pulled.projects}
    for row in pulled.rows:
        by_project.setdefault(row[1], []).append(row)
    cache = SqliteCacheStore(conn)
    with atomic(conn):
        for project, rows in sorted(by_project.items()):
            cache.put(project, rows)
    return PullReport(packets=len(pulled.rows), projects=sorted(by_project), lines_removed=pulled.lines_removed,
                      lines_cut=pulled.lines_cut, dropped=pulled.dropped)  # fmt: skip

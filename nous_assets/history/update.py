"""What a project's whole history shows, in the event log: its brief, and the paths its sessions removed.

For every project with turns on the run's days, all of its sessions are read back from the lake (every day,
subagents included) and :func:`~nous_assets.brief.mine_brief` mines the brief. Each item is a memory on the slot
``brief:<key>`` (``brief:cmd:test``, ``brief:gate``, ``brief:layout`` …), written as events like every memory:

* a new item, or an item whose content changed, is a ``LearningExtracted`` whose learning id and idempotency key
  come from (project, slot, content): the same brief mined again writes nothing, on any machine;
* the value it replaces is closed by a ``LearningSuperseded`` (by the brief itself, not by the generic slot
  rule, so an item whose evidence started earlier still replaces the one it outgrew);
* an item the history no longer shows (a command that now fails, a path that was removed) is closed by a status
  weakening (``superseded``) with the reason.

The items carry their status (``verified``, ``stated``, ``observed``) and evidence (the sessions, the turns, how
many successful runs) in the payload, so a replay of the log gives the same brief.

The same read of the history supersedes what a file's removal made stale: a memory of the project that cites a
path one of its sessions later deleted or moved away (``rm``, ``git rm``, ``git mv``, ``mv``) gets a status
weakening (``superseded``, the command as evidence), unless it was learned after the removal or in the same
session (it may say where the file went). Running after extraction, over the whole history, makes the outcome the
same whatever order sessions were extracted in.
"""

from __future__ import annotations

import hashlib
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.brief.item import SLOT, BriefItem
from nous_assets.brief.mine import mine_brief
from nous_assets.capture.lake import session_folders, session_turns
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.extract.rules.evidence import Removal, cites, removed_paths
from nous_assets.extract.rules.session import build_streams
from nous_assets.ids import learning_id_for
from nous_assets.status import SUPERSEDED
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection.identity import project_map
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.search import memory_lookup
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project as project_events

VERSION = "brief-1"
KIND = {"commands": "command", "gate": "workflow", "procedures": "workflow", "rules": "convention",
        "layout": "architecture"}  # fmt: skip
TYPE = {"command": "knowledge", "workflow": "learning", "convention": "learning", "architecture": "knowledge"}


@dataclass
class HistoryStats:
    projects: int = 0
    items: int = 0
    learned: int = 0  # new or changed items
    replaced: int = 0
    retired: int = 0  # items the history no longer shows
    removed_paths: int = 0
    superseded_by_removal: int = 0
    events_written: int = 0


def update_projects(
    conn: Connection,
    lake_dir: Path,
    days: Iterable[str],
    *,
    source: str,
    policy: Policy | None = None,
    log: Connection | None = None,
) -> HistoryStats:
    """Record the brief and the removals of every project with turns on ``days`` (see the module docstring). Each
    project is compared with the projection brought up to date under the same write lock, as extraction does.

    ``conn`` holds the projects' identity; ``log`` the event log and its projection when it is elsewhere (team
    mode: the tenant's working database), else ``conn``.
    """
    stats = HistoryStats()
    pmap = project_map(conn)
    conn = log or conn
    touched = {pmap.of(folder, session) for folder, session in session_folders(lake_dir, days)}
    if not touched:
        return stats
    project_of = {s: pmap.of(f, s) for f, s in session_folders(lake_dir) if pmap.of(f, s) in touched}
    turns_of: dict[str, list] = defaultdict(list)
    for turn in session_turns(lake_dir, project_of):  # one read of the lake for every touched project
        turns_of[project_of[turn.session_id]].append(turn)
    for project in sorted(touched):
        batches = _batches(turns_of[project])
        items = mine_brief(batches)
        removals = [r for b in batches for stream in build_streams(b) for r in removed_paths(stream)]
        with atomic(conn):
            project_events(conn, policy=policy)
            events = brief_events(conn, project, items, source=source, stats=stats)
            events += removal_events(conn, project, removals, source=source, stats=stats)
            stats.events_written += sum(r.created for r in SqliteEventStore(conn).append_many(events))
        stats.projects += 1
        stats.items += len(items)
    return stats


def _batches(turns: list) -> list[SessionBatch]:
    by_session: dict[str, list] = defaultdict(list)
    for t in turns:
        by_session[t.session_id].append(t)
    return [
        SessionBatch(ts[0].project_id, session, (ts[0].timestamp or "")[:10], tuple(ts))
        for session, ts in sorted(by_session.items())
    ]


def _key(project: str, slot: str, content: str) -> str:
    return hashlib.sha256(f"{VERSION}|{project}|{slot}|{content}".encode()).hexdigest()


def brief_events(
    conn: Connection, project: str, items: list[BriefItem], *, source: str, stats: HistoryStats | None = None
) -> list[LearningEvent]:
    """The events that make the project's held brief equal ``items``."""
    stats = stats or HistoryStats()
    held = memory_lookup.by_slot_prefix(conn, project, SLOT)
    events: list[LearningEvent] = []
    for item in items:
        slot = SLOT + item.key
        key = _key(project, slot, item.content)
        lid = learning_id_for(key)
        current = held.pop(slot, None)
        if current is not None and current[0] == lid:
            continue
        events.append(LearningEvent("LearningExtracted", lid, _payload(item, slot), item.last_session, project,
                                    source, key, valid_from=item.first_seen or None))  # fmt: skip
        stats.learned += 1
        if current is not None:
            payload = {"superseded_by": lid, "reason": "the project brief changed", "slot": slot}
            replace_key = hashlib.sha256(f"brief-replace:{current[0]}:{lid}".encode()).hexdigest()
            events.append(LearningEvent("LearningSuperseded", current[0], payload, item.last_session, project,
                                        source, replace_key, valid_until=item.last_seen or None))  # fmt: skip
            stats.replaced += 1
    gone = [{"status": SUPERSEDED, "what": "the project's history no longer shows it"}]
    for lid, _content in (held[slot] for slot in sorted(held)):
        payload = {"reinforcement_delta": -0.2, "reason": SUPERSEDED, "status": SUPERSEDED, "evidence": gone}
        retire_key = hashlib.sha256(f"brief-retire:{lid}".encode()).hexdigest()
        session = items[-1].last_session if items else "brief"
        events.append(LearningEvent("LearningWeakened", lid, payload, session, project, source, retire_key))
        stats.retired += 1
    return events


def _payload(item: BriefItem, slot: str) -> dict[str, Any]:
    kind = KIND[item.section]
    concepts = extract_concepts(item.content, item.paths, pad=[item.section, "project brief"])
    summary = {"status": item.status, "what": f"{item.runs} supporting uses in {len(item.sessions)} session(s)",
               "sessions": list(item.sessions)[:12]}  # fmt: skip
    return {
        "content": item.content,
        "extractor_version": VERSION,
        "concepts": concepts,
        "edges": [],
        "type": TYPE[kind],
        "kind": kind,
        "domain": infer_domain(item.content, concepts)[:64],
        "scope": "project",
        "temporal_confidence": "high",
        "provenance": _provenance(item),
        "slot": slot[:160],
        "source_ref": (item.paths[0] if item.paths else "")[:120],
        "status": item.status,
        "evidence": [summary, *item.evidence][:16],
    }


def _provenance(item: BriefItem) -> dict[str, Any]:
    """The item's evidence lines in one transcript file (the latest proof's), like any memory's provenance."""
    path, offsets, uuids = item.source
    prov: dict[str, Any] = {"session_id": item.last_session, "uuids": list(uuids), "line_offsets": list(offsets)}
    return {**prov, "source_path": path} if path else prov


def _root(session: str) -> str:
    return session.split("#", 1)[0]  # a session's subagents are that session


def removal_events(
    conn: Connection, project: str, removals: list[Removal], *, source: str, stats: HistoryStats | None = None
) -> list[LearningEvent]:
    """Status weakenings of the project's memories that cite a path a later session removed (not the brief's own:
    the miner already leaves removed paths out of it, and a changed item replaces the old one)."""
    stats = stats or HistoryStats()
    stats.removed_paths += len(removals)
    out: list[LearningEvent] = []
    seen: set[str] = set()
    for removal in sorted(removals, key=lambda r: (r.at, r.path)):
        for lid, text, valid_from, session in memory_lookup.citing(conn, project, removal.path, except_slots=SLOT):
            if lid in seen or _root(session) == _root(removal.session) or not cites(text, removal.path):
                continue
            if valid_from is not None and removal.at and valid_from >= removal.at:
                continue
            seen.add(lid)
            what = f"`{removal.command}` removed {removal.path} in session {removal.session[:8]}"
            payload = {"reinforcement_delta": -0.2, "reason": SUPERSEDED, "status": SUPERSEDED,
                       "evidence": [{"status": SUPERSEDED, "uuid": removal.uuid, "what": what}]}  # fmt: skip
            key = hashlib.sha256(f"removed:{lid}:{removal.path}:{removal.session}".encode()).hexdigest()
            out.append(LearningEvent("LearningWeakened", lid, payload, removal.session, project, source, key,
                                     valid_from=removal.at or None))  # fmt: skip
            stats.superseded_by_removal += 1
    return out

"""The pipeline's identity step: record what new turns say, re-resolve, move what changed project.

Called by the ``learning_events`` asset for the turns of its days, before extraction and projection, so
that events are projected (and packets built) under the canonical project. A database that has events
but never ran identity (an upgrade) is bootstrapped from every lake day once, and again once whenever the
evidence reader learns to see more (:data:`EVIDENCE_VERSION`), so days read before then are not missing it.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.identity.evidence import Evidence, PathFacts, SessionStart, from_turns
from nous_assets.identity.resolve import GitFacts, Resolution, probe_disk, resolve
from nous_assets.store.db import Connection, atomic
from nous_assets.store.projection import identity as store
from nous_assets.store.sqlite.projection import get_checkpoint, set_checkpoint
from nous_assets.timeutil import now_iso

BOOTSTRAPPED = "identity:bootstrap"
EVIDENCE_VERSION = 2  # 2: `git worktree list` output in tool results


@dataclass
class IdentityStats:
    projects: int = 0
    aliases_changed: int = 0
    memories_moved: int = 0
    bootstrapped_days: int = 0


def observe(conn: Connection, turns: Iterable[Any]) -> Evidence:
    """Record the evidence of ``turns`` (merged with what is stored; idempotent)."""
    ev = from_turns(turns)
    if ev:
        with atomic(conn):
            _write(conn, ev)
    return ev


def _write(conn: Connection, ev: Evidence) -> None:
    store.upsert_sessions(conn, [(s, v.folder, v.start_cwd, v.started_at) for s, v in sorted(ev.sessions.items())])
    store.upsert_paths(
        conn, [(p, f.as_cwd, f.has_branch, f.first_seen, f.last_seen) for p, f in sorted(ev.paths.items())]
    )
    store.add_session_paths(conn, sorted(ev.session_paths))
    store.add_worktree_adds(conn, [(b, p, w) for (b, p), w in sorted(ev.worktree_adds.items())])


def load(conn: Connection) -> tuple[Evidence, dict[str, GitFacts]]:
    """All stored evidence and the git facts recorded for directories probed earlier."""
    ev = Evidence()
    for session, folder, start, started in store.read_sessions(conn):
        ev.sessions[session] = SessionStart(folder, start, started)
    stored: dict[str, GitFacts] = {}
    for path, as_cwd, branch, first, last, main, remote in store.read_paths(conn):
        ev.paths[path] = PathFacts(bool(as_cwd), bool(branch), first, last)
        if main:
            stored[path] = GitFacts(main, remote)
    ev.session_paths = set(store.read_session_paths(conn))
    ev.worktree_adds = {(b, p): w for b, p, w in store.read_worktree_adds(conn)}
    return ev, stored


def refresh(conn: Connection, *, lake_dir: Path | None = None, probe=probe_disk) -> IdentityStats:
    """Re-resolve every alias from the stored evidence; move memories whose project changed (one transaction)."""
    stats = IdentityStats()
    if lake_dir is not None and get_checkpoint(conn, BOOTSTRAPPED) < EVIDENCE_VERSION:
        stats.bootstrapped_days = _bootstrap(conn, lake_dir)
    ev, stored = load(conn)
    resolution = resolve(ev, stored, probe)
    now = now_iso()
    with atomic(conn):
        store.set_git_facts(conn, _facts_rows(resolution), now)
        moved = store.replace_aliases(conn, resolution.aliases, now)
        stats.aliases_changed = len(moved)
        folders = {alias for (kind, alias) in moved if kind == "folder"}
        folders |= store.folders_of_sessions(conn, [alias for (kind, alias) in moved if kind == "session"])
        remapped = store.remap_memories(conn, store.project_map(conn), folders)
        stats.memories_moved = len(remapped)
        store.mark_packets_stale(conn, {p for pair in remapped.values() for p in pair})
        if lake_dir is not None:
            set_checkpoint(conn, EVIDENCE_VERSION, BOOTSTRAPPED)
    stats.projects = len({p for (kind, _), (p, _e) in resolution.aliases.items() if kind == "cwd"})
    return stats


def _facts_rows(resolution: Resolution) -> list[tuple[str, str | None, str | None]]:
    return [
        (path, facts.main if facts else None, facts.remote if facts else None)
        for path, facts in sorted(resolution.git.items())
    ]


def _bootstrap(conn: Connection, lake_dir: Path) -> int:
    """Observe every lake day once (a database that had events before identity existed)."""
    from nous_assets.capture.lake import read_turns

    days = sorted(p.parent.name.split("=", 1)[1] for p in (lake_dir / "transcripts").glob("date=*/turns.parquet"))
    for day in days:
        observe(conn, read_turns(lake_dir, day))
    return len(days)

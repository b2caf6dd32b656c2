"""SQL of project identity (migration 008): the evidence tables, the aliases, and the projection's map.

Events are never rewritten: a ``LearningExtracted`` keeps the ``project_id`` it was written with (Claude
Code's folder). The projection maps every event through :class:`ProjectMap` (its session's project, else
its folder's, else the folder itself) before applying it, so ``memories.project_id`` is the canonical
project, in a live projection and in a replay alike. When the aliases change, :func:`remap_memories`
moves the memories the changed sessions and folders created, and their packets are marked stale, so the
live projection stays equal to a replay under the new aliases.

Writers merge, never overwrite, evidence: earliest session start, earliest first sighting, unions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nous_assets.store.db import Connection

STALE_PACKET = -1  # built_from_event_id that makes the cache rebuild a project's packets


@dataclass(frozen=True)
class ProjectMap:
    """Canonical project of an event: by its session, else its folder, else the folder itself."""

    sessions: dict[str, str] = field(default_factory=dict)
    folders: dict[str, str] = field(default_factory=dict)

    def of(self, folder: str, session: str | None = None) -> str:
        if session and session in self.sessions:
            return self.sessions[session]
        return self.folders.get(folder, folder)

    def apply(self, events: Sequence[Any]) -> list[Any]:
        """``events`` (``StoredEvent``) with ``project_id`` replaced by the canonical project where it differs."""
        if not self.sessions and not self.folders:
            return list(events)
        out = []
        for ev in events:
            project = self.of(ev.project_id, ev.session_id)
            out.append(ev if project == ev.project_id else ev._replace(project_id=project))
        return out


def project_map(conn: Connection) -> ProjectMap:
    """The map the projection applies; empty on a database where identity never ran."""
    sessions: dict[str, str] = {}
    folders: dict[str, str] = {}
    for kind, alias, project in conn.execute(
        "SELECT kind, alias, project_id FROM project_aliases WHERE kind IN ('session', 'folder')"
    ):
        (sessions if kind == "session" else folders)[alias] = project
    return ProjectMap(sessions, folders)


# ---------------------------------------------------------------- evidence


def upsert_sessions(conn: Connection, rows: Iterable[tuple[str, str, str | None, str]]) -> None:
    """(session, folder, start cwd, started at): the earliest start wins (ties: one with a cwd, then by cwd)."""
    conn.executemany(
        "INSERT INTO identity_sessions(session_id, folder, start_cwd, started_at) VALUES (?, ?, ?, ?) "
        "ON CONFLICT(session_id) DO UPDATE SET folder = excluded.folder, start_cwd = excluded.start_cwd, "
        "started_at = excluded.started_at WHERE (excluded.started_at, excluded.start_cwd IS NULL, "
        "coalesce(excluded.start_cwd, '')) < (started_at, start_cwd IS NULL, coalesce(start_cwd, ''))",
        list(rows),
    )


def upsert_paths(conn: Connection, rows: Iterable[tuple[str, bool, bool, str, str]]) -> None:
    """(path, seen as cwd, gitBranch recorded, first seen, last seen), merged with what is stored."""
    conn.executemany(
        "INSERT INTO identity_paths(path, as_cwd, has_branch, first_seen, last_seen) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(path) DO UPDATE SET as_cwd = max(as_cwd, excluded.as_cwd), "
        "has_branch = max(has_branch, excluded.has_branch), first_seen = min(first_seen, excluded.first_seen), "
        "last_seen = max(last_seen, excluded.last_seen)",
        [(p, int(c), int(b), f, last) for p, c, b, f, last in rows],
    )


def add_session_paths(conn: Connection, rows: Iterable[tuple[str, str]]) -> None:
    conn.executemany("INSERT OR IGNORE INTO identity_session_paths(session_id, path) VALUES (?, ?)", list(rows))


def add_worktree_adds(conn: Connection, rows: Iterable[tuple[str, str, str]]) -> None:
    """(base cwd, worktree path, first seen)."""
    conn.executemany(
        "INSERT INTO identity_worktree_adds(base_cwd, path, first_seen) VALUES (?, ?, ?) "
        "ON CONFLICT(base_cwd, path) DO UPDATE SET first_seen = min(first_seen, excluded.first_seen)",
        list(rows),
    )


def set_git_facts(conn: Connection, rows: Iterable[tuple[str, str | None, str | None]], now: str) -> None:
    """(path, main checkout or None, remote or None) as read from disk now; only for recorded paths."""
    conn.executemany(
        "UPDATE identity_paths SET git_main = ?, git_remote = ?, probed_at = ? WHERE path = ? "
        "AND (git_main IS NOT ? OR git_remote IS NOT ? OR probed_at IS NULL)",
        [(main, remote, now, path, main, remote) for path, main, remote in rows],
    )


def read_sessions(conn: Connection) -> list[tuple[str, str, str | None, str]]:
    return [tuple(r) for r in conn.execute("SELECT session_id, folder, start_cwd, started_at FROM identity_sessions")]


def read_paths(conn: Connection) -> list[tuple]:
    """(path, as_cwd, has_branch, first_seen, last_seen, git_main, git_remote)."""
    return [
        tuple(r)
        for r in conn.execute(
            "SELECT path, as_cwd, has_branch, first_seen, last_seen, git_main, git_remote FROM identity_paths"
        )
    ]


def read_session_paths(conn: Connection) -> list[tuple[str, str]]:
    return [tuple(r) for r in conn.execute("SELECT session_id, path FROM identity_session_paths")]


def read_worktree_adds(conn: Connection) -> list[tuple[str, str, str]]:
    return [tuple(r) for r in conn.execute("SELECT base_cwd, path, first_seen FROM identity_worktree_adds")]


# ---------------------------------------------------------------- aliases


Aliases = dict[tuple[str, str], tuple[str, str]]  # (kind, alias) -> (project_id, evidence)


def read_aliases(conn: Connection) -> Aliases:
    rows = conn.execute("SELECT kind, alias, project_id, evidence FROM project_aliases")
    return {(kind, alias): (project, evidence) for kind, alias, project, evidence in rows}


def replace_aliases(conn: Connection, new: Aliases, now: str) -> Aliases:
    """Make ``project_aliases`` equal ``new``; returns the old entries whose project changed or that went
    away, plus new entries (with their new project), keyed like ``new``."""
    old = read_aliases(conn)
    gone = [key for key in old if key not in new]
    changed = {key: value for key, value in new.items() if old.get(key) != value}
    conn.executemany("DELETE FROM project_aliases WHERE kind = ? AND alias = ?", gone)
    conn.executemany(
        "INSERT INTO project_aliases(kind, alias, project_id, evidence, updated_at) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT(kind, alias) DO UPDATE SET project_id = excluded.project_id, evidence = excluded.evidence, "
        "updated_at = excluded.updated_at",
        [(kind, alias, project, evidence, now) for (kind, alias), (project, evidence) in changed.items()],
    )
    moved = {key: old[key] for key in gone}
    moved.update({key: value for key, value in changed.items() if old.get(key, (None,))[0] != value[0]})
    return moved


def remap_memories(conn: Connection, pmap: ProjectMap, folders: Iterable[str]) -> dict[int, tuple[str, str]]:
    """Give the memories created by events of ``folders`` the project ``pmap`` assigns; returns
    ``{memory id: (old project, new project)}`` for those that moved. Their holds follow."""
    moved: dict[int, tuple[str, str]] = {}
    for folder in sorted(set(folders)):
        rows = conn.execute(
            "SELECT m.id, m.project_id, e.session_id FROM learning_events e JOIN memories m ON m.id = e.event_id "
            "WHERE e.project_id = ?",
            (folder,),
        ).fetchall()
        for memory_id, current, session in rows:
            wanted = pmap.of(folder, session)
            if wanted != current:
                moved[memory_id] = (current, wanted)
    conn.executemany("UPDATE memories SET project_id = ? WHERE id = ?", [(new, i) for i, (_, new) in moved.items()])
    conn.executemany(
        "UPDATE memory_holds SET project_id = ? WHERE memory_id = ?", [(new, i) for i, (_, new) in moved.items()]
    )
    return moved


def mark_packets_stale(conn: Connection, projects: Iterable[str]) -> None:
    """Make the cache rebuild these projects' packets (they keep serving until it does)."""
    conn.executemany(
        "UPDATE injection_cache SET built_from_event_id = ? WHERE project_id = ?",
        [(STALE_PACKET, p) for p in sorted(set(projects))],
    )


def folders_of_sessions(conn: Connection, sessions: Iterable[str]) -> set[str]:
    wanted = sorted(set(sessions))
    out: set[str] = set()
    for i in range(0, len(wanted), 500):
        chunk = wanted[i : i + 500]
        marks = ",".join("?" * len(chunk))
        out.update(
            r[0] for r in conn.execute(f"SELECT folder FROM identity_sessions WHERE session_id IN ({marks})", chunk)
        )
    return out


def cwds_of(conn: Connection, project_id: str) -> list[str]:
    """The directories the project's sessions ran in, shortest first (the main checkout before its worktrees
    and subdirectories)."""
    rows = conn.execute("SELECT alias FROM project_aliases WHERE kind = 'cwd' AND project_id = ?", (project_id,))
    return sorted((r[0] for r in rows), key=lambda p: (len(p), p))


def canonical_project(conn: Connection, project_id: str | None) -> str | None:
    """The canonical project for an id a user typed: a Claude Code folder maps to its project, else as is."""
    if not project_id:
        return project_id
    try:
        row = conn.execute(
            "SELECT project_id FROM project_aliases WHERE kind = 'folder' AND alias = ?", (project_id,)
        ).fetchone()
    except Exception:  # noqa: BLE001 - a database from before migration 008 has no aliases
        return project_id
    return row[0] if row else project_id

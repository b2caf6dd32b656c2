"""Precomputed injection packets: the SessionStart hook only has to pick one.

For each project, the likely fingerprints are the branches its recent sessions ran on (plus a
branch-agnostic default), each with the project's stack and most-touched files as terms. Every
fingerprint gets a packet from :func:`~nous_assets.retrieve.search.retrieve` (the same scorer as
``nous search``), rendered by :func:`~nous_assets.retrieve.packet.format_packet` under the budget.
Packets are written once, under the canonical project (a repository: its worktrees, main checkout and
subdirectories are one project, see :mod:`nous_assets.identity`); the hook maps a session's cwd to it
through ``project_aliases``, so moved or globbed transcripts need no copies. Packets of a project that
no longer has memories (its folder now maps elsewhere) are removed. A
``global`` packet (``project_id = '*'``) carries scope-global memories for unknown projects.
A project is rebuilt only when its memories (or global ones) changed since its packets were built, or
when the packet guard's verdict on one of them changed.

Safety: first :func:`~nous_assets.safety.review.refresh_holds` records which memories the guard holds
for ``nous review``; those never enter a packet (``format_packet`` checks every bullet again, so a hold
cannot be missed). The global packet — injected into every project — carries no command, configuration
or error-fix memories: those are project-specific by nature.
"""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from nous_assets.capture.redact import redact
from nous_assets.retrieve.packet import format_packet
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.safety.guard import GUARD_VERSION
from nous_assets.safety.review import refresh_holds
from nous_assets.settings import Settings
from nous_assets.store import holds
from nous_assets.store.db import Connection, atomic, checkpoint
from nous_assets.store.identity import project_map
from nous_assets.store.projector import get_checkpoint, set_checkpoint
from nous_assets.timeutil import now_iso
from resolver.fingerprint import fingerprint_key, split_words

GLOBAL = "*"
PACKET_FORMAT = 2  # 2: recalled-notes header, source session and learned date on every bullet, guard marks
PACKETS_CHECKED = f"injection_cache:{GUARD_VERSION}:format-{PACKET_FORMAT}"
PROJECT_ONLY_KINDS = frozenset({"command", "configuration", "error_fix"})  # never in the global packet
MAX_HELD_EXTRA = 50  # retrieve up to this many more results to make up for held ones
MAX_BRANCHES = 3
PROFILE_DAYS = 30
_EXT_STACK = {
    ".py": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".rs": "rust",
    ".go": "go",
    ".ex": "elixir",
    ".exs": "elixir",
    ".rb": "ruby",
    ".java": "java",
    ".kt": "kotlin",
    ".swift": "swift",
    ".c": "c",
    ".h": "c",
    ".cpp": "cpp",
    ".sql": "sql",
    ".sh": "shell",
}


@dataclass
class Profile:
    branches: Counter = field(default_factory=Counter)
    files: Counter = field(default_factory=Counter)
    stack: set[str] = field(default_factory=set)


@dataclass
class CacheStats:
    projects_rebuilt: int = 0
    projects_unchanged: int = 0
    packets: int = 0
    largest_packet_chars: int = 0
    held: int = 0  # memories the guard keeps out of packets (awaiting `nous review`)
    held_skipped: int = 0  # times a held memory was retrieved for a packet and left out


def _paths(tool_uses_json: str) -> list[str]:
    out = []
    for _id, _name, raw in json.loads(tool_uses_json or "[]"):
        try:
            args = json.loads(raw)
        except (TypeError, ValueError):
            continue
        path = args.get("file_path") or args.get("path") if isinstance(args, dict) else None
        if isinstance(path, str) and "/" in path:
            out.append(path)
    return out


def project_profiles(
    lake_dir: Path, days: int = PROFILE_DAYS, project_of: Callable[[str, str], str] | None = None
) -> dict[str, Profile]:
    """Branches, touched files and stack per canonical project (``project_of(folder, session)``, default
    the folder), from the most recent lake days."""
    parts = sorted((lake_dir / "transcripts").glob("date=*/turns.parquet"))[-days:]
    profiles: dict[str, Profile] = defaultdict(Profile)
    for path in parts:
        frame = pl.read_parquet(path, columns=["project_id", "session_id", "git_branch", "tool_uses_json"])
        for folder, session, branch, tools in frame.iter_rows():
            prof = profiles[project_of(folder, session) if project_of else folder]
            if branch:
                prof.branches[branch] += 1
            for file in _paths(tools):
                prof.files[file] += 1
                stack = _EXT_STACK.get(Path(file).suffix.lower())
                if stack:
                    prof.stack.add(stack)
    return dict(profiles)


def fingerprints_for(profile: Profile | None) -> list[dict[str, Any]]:
    """The default fingerprint plus one per frequent branch, in the resolver's JSON shape."""
    if profile is None:
        return [{"branch": None, "stack": [], "terms": []}]
    stack = sorted(profile.stack)
    terms: list[str] = []
    for file, _ in profile.files.most_common(15):
        p = Path(file)
        for word in split_words(p.stem) + split_words(p.parent.name):
            if word not in terms:
                terms.append(word)
    base = {"branch": None, "stack": stack, "terms": terms[:30]}
    out = [base]
    for branch, _ in profile.branches.most_common(MAX_BRANCHES):
        words = [w for w in split_words(branch) if w not in terms]
        out.append({"branch": branch, "stack": stack, "terms": (words + terms)[:30]})
    return out


@dataclass(frozen=True)
class Guarded:
    """The guard's state for one build: held memories are left out, approved ones may be injected."""

    held: frozenset[int]
    approved: frozenset[int]
    extra: int  # how many more results to retrieve so held ones do not shrink a packet


def _injectable(result: Any, project_id: str, guarded: Guarded) -> bool:
    if result.memory_id in guarded.held:
        return False
    return project_id != GLOBAL or (result.kind not in PROJECT_ONLY_KINDS and result.scope == "global")


def _packet_for(
    conn: Connection, settings: Settings, project_id: str, fp: dict, embedder: Any, guarded: Guarded
) -> tuple[str, list, int]:
    """(packet text, memory ids, held memories left out) for one fingerprint."""
    text = " ".join([*(fp.get("terms") or []), *(fp.get("stack") or []), *split_words(fp.get("branch") or "")])
    query = Query.from_text(text, project_id=project_id, project_evidence=True)
    top_k = settings.retrieve.top_k
    found = retrieve(conn, query, settings, embedder=embedder, k=top_k + guarded.extra)
    results = [r for r in found if _injectable(r, project_id, guarded)][:top_k]
    title = "Nous memory" if project_id == GLOBAL else f"Nous memory for this project ({project_id})"
    packet = format_packet(
        results,
        {r.memory_id: r for r in results},
        budget_chars=settings.thresholds.injection_budget_chars,
        title=title,
        approved=guarded.approved,
    )
    skipped = sum(1 for r in found if r.memory_id in guarded.held) + len(packet.held)
    return packet.text, list(packet.memory_ids), skipped


def _version(conn: Connection, project_id: str) -> int:
    """Newest event reflected in the project's (and global) memories: the packet's freshness stamp."""
    row = conn.execute(
        "SELECT coalesce(max(last_event_id), 0) FROM memories WHERE project_id = ? OR scope = 'global'", (project_id,)
    ).fetchone()
    return int(row[0])


def _drop_vanished(conn: Connection, projects: list[str]) -> None:
    """Remove packets of projects without memories (their folders now belong to another project), and the
    per-cwd copies older versions wrote (``alias:`` keys; the hook resolves cwds through project_aliases)."""
    with atomic(conn):
        conn.execute(
            "DELETE FROM injection_cache WHERE scope = 'project' AND (cache_key LIKE 'alias:%' OR project_id NOT IN "
            "(SELECT value FROM json_each(?)))",
            (json.dumps(projects),),
        )


def build_cache(
    conn: Connection, settings: Settings, *, embedder: Any = None, lake_dir: Path | None = None, force: bool = False
) -> CacheStats:
    """(Re)build packets for every project whose memories (or their guard verdicts) changed, plus the global one."""
    stats = CacheStats()
    verdicts = refresh_holds(conn)
    # packets built before this guard version (or this packet format) were not checked by it: rebuild all once
    force = force or get_checkpoint(conn, PACKETS_CHECKED) == 0
    held = frozenset(holds.ids(conn, holds.HELD))
    approved = frozenset(holds.ids(conn, holds.APPROVED))
    stats.held = len(held)
    profiles = project_profiles(lake_dir or settings.lake_dir, project_of=project_map(conn).of)
    projects = [r[0] for r in conn.execute("SELECT DISTINCT project_id FROM memories ORDER BY 1")]
    _drop_vanished(conn, projects)
    built = dict(
        conn.execute(
            "SELECT project_id, min(built_from_event_id) FROM injection_cache WHERE cache_key NOT LIKE 'alias:%' "
            "GROUP BY project_id"
        ).fetchall()
    )
    now = now_iso()
    for project in [*projects, GLOBAL]:
        version = _version(conn, project)
        verdict_changed = verdicts.global_changed or project in verdicts.projects
        if not force and not verdict_changed and built.get(project) == version:
            stats.projects_unchanged += 1
            continue
        profile = profiles.get(project) if project != GLOBAL else None
        extra = min(MAX_HELD_EXTRA, holds.count_held(conn, None if project == GLOBAL else project))
        guarded = Guarded(held, approved, extra)
        rows = []
        for fp in fingerprints_for(profile):
            text, ids, skipped = _packet_for(conn, settings, project, fp, embedder, guarded)
            stats.held_skipped += skipped
            if not text:
                continue
            text = redact(text)  # defence in depth: memories are redacted, and so is what the hook prints
            key = f"{project}:{fingerprint_key({'project_id': project, **fp})}"
            rows.append(
                (
                    key,
                    project,
                    "global" if project == GLOBAL else "project",
                    json.dumps(fp),
                    text,
                    json.dumps(ids),
                    len(text),
                    version,
                    now,
                )
            )
        with atomic(conn):
            conn.execute("DELETE FROM injection_cache WHERE cache_key LIKE ?", (f"{project}:%",))
            conn.executemany(
                "INSERT OR REPLACE INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, "
                "memory_ids_json, char_count, built_from_event_id, created_at, expires_at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL)",
                rows,
            )
        stats.projects_rebuilt += 1
        stats.packets += len(rows)
        stats.largest_packet_chars = max([stats.largest_packet_chars, *(r[6] for r in rows)])
    with atomic(conn):
        set_checkpoint(conn, 1, PACKETS_CHECKED)
    checkpoint(conn)  # the hook reads these rows next: leave it a short WAL
    return stats

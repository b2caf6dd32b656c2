"""What the SessionStart hook would inject for a directory now, and why each line is (or is not) there.

``nous packet`` must show exactly what Claude would see, so the text comes from the resolver's own code, run
in this process (:func:`hook_context`): the same fingerprint, project resolution, cache row choice,
interventions and size cap as the hook, but no access is logged (a preview is not an injection).

``--explain`` and ``--why-not`` re-run the cache builder's own steps for the chosen row's fingerprint
(:func:`nous_assets.retrieve.cache_build.packet_plan`: the retrieval with its score breakdown, the one exclusion
rule, the packet's fill with the reason each ranked memory was left out), so a reason shown here is the rule the
build applied, not a second copy of it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from nous_assets.retrieve.confidence import confidence, sessions_of
from nous_assets.safety.forget import FORGOTTEN
from nous_assets.settings import Settings
from nous_assets.store.db import Connection


@dataclass(frozen=True)
class HookView:
    """The hook's answer for a directory: the text it would inject (empty: nothing) and where it came from."""

    text: str
    memory_ids: tuple[int, ...]
    project_id: str
    cache_key: str | None
    scope: str
    fingerprint: dict = field(default_factory=dict)


def hook_context(db_path, cwd: str, source: str = "startup", session_id: str | None = None) -> HookView:
    """The additionalContext the SessionStart hook would print for a session starting in ``cwd`` with ``source``
    (and, for resume/fork, ``session_id``), from the resolver's own function (``resolver.inject.select``, which
    the hook calls) in this process; reads only, logs nothing."""
    payload = {"hook_event_name": "SessionStart", "cwd": cwd, "source": source, "session_id": session_id or ""}
    try:
        from resolver import inject
    except ImportError:  # a resolver from before source-aware injection: the packet it picked, whole
        return _best_packet_view(db_path, cwd, source, session_id)
    found = inject.select(payload, os.fspath(db_path))
    if found is None:
        return _no_packet(db_path, cwd)
    return HookView(found.text, tuple(found.memory_ids), found.project_id, found.cache_key, found.scope,
                    found.fingerprint)  # fmt: skip


def _no_packet(db_path, cwd: str) -> HookView:
    """No packet for ``cwd``: still say which project the hook took it for (the resolver's own resolution)."""
    from resolver import cache_read, fingerprint

    fp = fingerprint.build_fingerprint(cwd)
    conn = cache_read.connect_readonly(db_path)
    try:
        project_id = cache_read.resolve_project(conn, fp)
    finally:
        conn.close()
    return HookView("", (), project_id, None, "", fp)


def _best_packet_view(db_path, cwd: str, source: str, session_id: str | None) -> HookView:
    from resolver import cache_read, fingerprint, hook_io

    fp = fingerprint.build_fingerprint(cwd)
    packet = cache_read.best_packet(db_path, fp, source, session_id=session_id)
    if packet is None:
        return HookView("", (), str(fp.get("project_id") or ""), None, "", fp)
    return HookView(hook_io.cap_context(packet.text), tuple(packet.memory_ids), packet.project_id, packet.cache_key,
                    packet.scope, fp)  # fmt: skip


def memory_lines(text: str, memory_ids: tuple[int, ...]) -> list[tuple[str, int | None]]:
    """Each line of a packet with the memory it shows (None for headings, notes and interventions): the bullets of
    the memory sections, in order, are the row's memory ids in order (``format_packet`` writes them so)."""
    out: list[tuple[str, int | None]] = []
    ids = iter(memory_ids)
    section = ""
    for line in text.split("\n"):
        if line.startswith("#"):
            section = line.lstrip("#").strip()
            out.append((line, None))
        elif line.startswith("**"):  # the packet's header, after a prepended Interventions section
            section = ""
            out.append((line, None))
        elif line.startswith("- ") and section not in ("Notes", "Interventions", ""):
            out.append((line, next(ids, None)))
        else:
            out.append((line, None))
    return out


def row_fingerprint(conn: Connection, cache_key: str | None) -> dict:
    """The fingerprint a cached packet was built for ({} when unknown)."""
    from nous_assets.store.sqlite import cache as injection_cache

    row = injection_cache.packet(conn, cache_key) if cache_key else None
    try:
        fp = json.loads(row[3]) if row and row[3] else {}
    except ValueError:
        fp = {}
    return fp if isinstance(fp, dict) else {}


def local_sessions(conn: Connection, settings: Settings, project_id: str, fp: dict) -> set[str] | None:
    """A checkout's own packet ranks the sessions that ran there first: those sessions (None for other rows)."""
    cwd = fp.get("cwd")
    if not isinstance(cwd, str) or not cwd:
        return None
    from nous_assets.retrieve.cache_build import project_profiles
    from nous_assets.store.projection.identity import project_map

    profile = project_profiles(settings.lake_dir, project_of=project_map(conn).of).get(project_id)
    return set(profile.sessions.get(cwd, set())) if profile else None


def plan_for(conn: Connection, settings: Settings, view: HookView, embedder: Any = None):
    """The cache builder's plan for the packet the hook chose (or the project's default fingerprint)."""
    from nous_assets.retrieve.cache_build import GLOBAL, packet_plan

    project = GLOBAL if view.scope == "global" else view.project_id
    fp = row_fingerprint(conn, view.cache_key) or {"branch": None, "stack": [], "terms": []}
    base = {k: v for k, v in fp.items() if k != "cwd"}
    return packet_plan(conn, settings, project, base, embedder, local_sessions(conn, settings, project, fp))


def standing(result: Any, bar: float) -> str:
    """A memory's status and evidence, as the bar reads it."""
    parts = [str(getattr(result, "status", "") or "?"), f"confidence {confidence(result):.2f} (bar {bar:.2f})",
             f"{sessions_of(result)} session(s)"]  # fmt: skip
    if getattr(result, "contradiction_count", 0):
        parts.append(f"{result.contradiction_count} contradiction(s)")
    parts.append(f"reinforcement {float(getattr(result, 'reinforcement_score', 0.5) or 0.5):.2f}")
    return " · ".join(parts)


def why_not(conn: Connection, view: HookView, memory_id: int, plan_of: Callable[[], Any]) -> str:
    """Why memory ``memory_id`` is not in the packet ``view`` (or that it is), from the build's own decisions;
    ``plan_of`` gives the build's plan (:func:`plan_for`), asked only when the store alone cannot say."""
    from nous_assets.retrieve.cache_build import GLOBAL, exclusion
    from nous_assets.store.log import event_history
    from nous_assets.store.projection.identity import canonical_project
    from nous_assets.store.search import memory_search

    if memory_id in view.memory_ids:
        return f"memory #{memory_id} is in the packet"
    row = memory_search.rows_by_id(conn, [memory_id]).get(memory_id)
    if row is None:
        reason = event_history.archive_reason(conn, memory_id)
        if reason is None:
            return f"there is no memory #{memory_id}"
        what = "forgotten" if reason.startswith(FORGOTTEN) else "archived"
        return f"memory #{memory_id} was {what}: {reason}"
    home = canonical_project(conn, row.project_id) or row.project_id
    if row.scope != "global" and view.scope != "global" and home != view.project_id:
        return f"memory #{memory_id} belongs to another project ({home}), not {view.project_id or 'this one'}"
    if row.valid_until:
        by = f" by {row.superseded_by}" if row.superseded_by else ""
        return f"memory #{memory_id} is {row.status or 'closed'}: valid until {row.valid_until[:10]}{by}"
    plan = plan_of()
    found = {r.memory_id: r for r in plan.found}
    result = found.get(memory_id, row)
    reason = exclusion(result, GLOBAL if view.scope == "global" else view.project_id, plan.guarded)
    if reason is not None:
        return f"memory #{memory_id}: {reason} [{standing(result, plan.guarded.bar)}]"
    if memory_id not in found:
        return (f"memory #{memory_id} was not among the {len(plan.found)} memories retrieved for this packet's "
                "fingerprint (too little relevance or rank for the query the build runs)")  # fmt: skip
    if memory_id in plan.packet.held:
        return f"memory #{memory_id}: held by the packet guard (answer it in `nous review`)"
    left = dict(plan.packet.left_out)
    if memory_id in left:
        return f"memory #{memory_id}: {left[memory_id]} [{standing(result, plan.guarded.bar)}]"
    if memory_id in plan.packet.memory_ids:
        return (f"memory #{memory_id} would enter now, but the cached packet was built before: it comes in at the "
                "next packet build")  # fmt: skip
    return f"memory #{memory_id}: left out of the packet (no single reason recorded)"


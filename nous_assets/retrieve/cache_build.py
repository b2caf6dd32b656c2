"""Precomputed injection packets: the SessionStart hook only has to pick one.

For each project, the likely fingerprints are the branches its recent sessions ran on (plus a
branch-agnostic default), each with the project's stack and most-touched files as terms. Every
fingerprint gets a packet from :func:`~nous_assets.retrieve.search.retrieve` (the scorer of
``nous search``; the project itself is evidence for its own memories, so all of them are ranked),
rendered by :func:`~nous_assets.retrieve.packet.format_packet`, which fills the character budget by
relevance rather than taking a fixed top k. Packets rank with their own weights (:data:`PACKET_WEIGHTS`:
the fingerprint is only a hint, re-learned and recent memories count more).
Packets are written once, under the canonical project (a repository: its worktrees, main checkout and
subdirectories are one project, see :mod:`nous_assets.identity`); the hook maps a session's cwd to it
through ``project_aliases``, so moved or globbed transcripts need no copies. Packets of a project that
no longer has memories (its folder now maps elsewhere) are removed. Each cwd that ran only some of the
project's sessions (a worktree, a subdirectory) also gets a packet of its own (fingerprint ``cwd``; the
hook prefers it for a session starting there) that ranks what was learned there first (:func:`localised`):
a session resuming work in a checkout reads that checkout's learnings, then the rest of the project's. A
``global`` packet (``project_id = '*'``) carries scope-global memories for unknown projects.
A project is rebuilt only when its memories (or global ones) changed since its packets were built, or
when the packet guard's verdict on one of them changed.

Safety: first :func:`~nous_assets.safety.review.refresh_holds` records which memories the guard holds
for ``nous review``; those never enter a packet (``format_packet`` checks every bullet again, so a hold
cannot be missed). Scope-global memories enter a packet only when they say how to work with the user
(preferences, corrections, workflow, conventions; never a command, a configuration, a diagnosis or a
stored "fact", which is usually a task prompt), and at most :data:`MAX_GLOBALS` of them; in another project's
packet only once :data:`GLOBAL_MIN_SESSIONS` sessions said it (one exchange is not a rule for every project).

Selection: a memory enters only when its status may be injected and its evidence reaches the bar
(:mod:`~nous_assets.retrieve.confidence`), not when its citations no longer resolve in the project's checkout
(:mod:`~nous_assets.retrieve.stale_check`); a line whose command does what one of the project's or the user's rules
forbids says so (:mod:`~nous_assets.retrieve.forbidden`); the budget is a ceiling, and the footer counts the rest.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from nous_assets.capture.redact import redact
from nous_assets.extract.rules.conventions import loaded_rule
from nous_assets.retrieve import native as native_memory
from nous_assets.retrieve.confidence import confidence, earns_line, sessions_of
from nous_assets.retrieve.forbidden import RULE_KINDS, broken_rule, rules_from
from nous_assets.retrieve.observations import fold, is_observation
from nous_assets.retrieve.packet import ALREADY_NATIVE, AlreadySaid, format_packet
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.retrieve.stale_check import check_project
from nous_assets.safety.guard import GUARD_VERSION, classify
from nous_assets.safety.review import refresh_holds
from nous_assets.settings import ScoringWeights, Settings
from nous_assets.status import INJECTABLE, OBSERVED
from nous_assets.store.db import Connection, atomic, checkpoint
from nous_assets.store.projection.identity import project_map
from nous_assets.store.reads import holds
from nous_assets.store.search import memory_search
from nous_assets.store.sqlite import cache as injection_cache
from nous_assets.store.sqlite import interventions as active_notes
from nous_assets.store.sqlite.projection import get_checkpoint, set_checkpoint
from nous_assets.timeutil import now_iso
from resolver.fingerprint import fingerprint_key, split_words

GLOBAL = "*"
PACKET_FORMAT = 5  # 3: fixed sections, one line per memory (when, memory, learned date, source), budget fill;
# 4: a memory a note already states is not repeated as a line; 5: nor one CLAUDE.md/MEMORY.md already states
PACKETS_CHECKED = f"injection_cache:{GUARD_VERSION}:format-{PACKET_FORMAT}"
# The only kinds a packet takes from scope-global memories: how to work with this user. Facts, commands,
# configuration and diagnoses belong to one project, and a stored global "fact" is usually a task prompt.
GLOBAL_KINDS = frozenset({"preference", "correction", "workflow", "convention"})
MAX_GLOBALS = 3  # a packet carries at most a few global memories; the rest of the budget is the project's
GLOBAL_MIN_SESSIONS = 2  # a global memory reaches other projects only once more than one session said it
# A SessionStart packet's query is only a hint (the project's most-touched files and its branch): what the
# project has learned again and again, and lately, matters more than which file names it shares with the hint.
PACKET_WEIGHTS = ScoringWeights(text=0.1, concept=0.1, vector=0.1, graph=0.05, reinforce=0.35, temporal=0.15,
                                recency=0.15)  # fmt: skip
LOCAL_BOOST = 0.2  # score added to a memory learned in the checkout a session starts in (its own packet)
CHARS_PER_CANDIDATE = 40  # retrieve budget / 40 candidates: enough for every section's share of the packet
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
    sessions: dict[str, set[str]] = field(default_factory=dict)  # cwd -> the sessions that ran there


@dataclass
class CacheStats:
    projects_rebuilt: int = 0
    projects_unchanged: int = 0
    packets: int = 0
    largest_packet_chars: int = 0
    held: int = 0  # memories the guard keeps out of packets (awaiting `nous review`)
    held_skipped: int = 0  # times a held memory was retrieved for a packet and left out
    stale: int = 0  # memories whose citations no longer resolve in their project's checkout (not injected)


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
        frame = pl.read_parquet(path, columns=["project_id", "session_id", "cwd", "git_branch", "tool_uses_json"])
        for folder, session, cwd, branch, tools in frame.iter_rows():
            prof = profiles[project_of(folder, session) if project_of else folder]
            if cwd:
                prof.sessions.setdefault(cwd, set()).add(session)
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
    notes: tuple[str, ...] = ()  # the active interventions of the packet's scope, most pressing first
    noted: frozenset[str] = frozenset()  # learnings a note already states: not repeated as a memory line
    bar: float = 0.0  # the confidence a memory's evidence must reach (thresholds.packet_min_confidence)
    stale: frozenset[int] = frozenset()  # memories whose citations no longer resolve in the project's checkout
    known: int = 0  # memories of the packet's scope: the footer says how many are not shown
    native: Any = ()  # what Claude Code itself loads for the project (CLAUDE.md, MEMORY.md), indexed: not repeated
    rules: tuple = ()  # (rule memory id, prohibition) of the project's and the user's rules (retrieve.forbidden)


def interventions_for(active: list[Any], project_id: str, limit: int) -> list[Any]:
    """The active interventions a packet of ``project_id`` carries: its own and global ones (the global
    packet: global ones only), by priority, at most ``limit``."""
    if project_id == GLOBAL:
        return active_notes.global_only(active)[:limit]
    return [a for a in active if a.scope == "global" or a.target_project_id == project_id][:limit]


def guarded_notes(notes: list[Any], held_learnings: frozenset[str]) -> list[Any]:
    """The notes a packet may carry: none about a learning the guard holds, and none whose own words the guard
    would hold (a note quotes what the user said: it leaves through the same gate as a memory line)."""
    prefix = active_notes.LEARNING_KEY
    return [a for a in notes
            if a.dedupe_key.removeprefix(prefix) not in held_learnings and not classify(a.payload_text).held]


def notes_digest(notes: list[Any]) -> str:
    """Which interventions (and texts) a packet was built with: a change rebuilds the project's packets. Saved with
    the event the build read up to, so a project whose packets came out empty is not rebuilt until either moves."""
    return hashlib.sha256(json.dumps([[a.intervention_id, a.payload_text] for a in notes]).encode()).hexdigest()


def noted_learnings(notes: list[Any]) -> frozenset[str]:
    """The learnings the notes are about (an observer's ``learning:<id>`` dedupe key)."""
    prefix = active_notes.LEARNING_KEY
    return frozenset(a.dedupe_key.removeprefix(prefix) for a in notes if a.dedupe_key.startswith(prefix))


def exclusion(result: Any, project_id: str, guarded: Guarded) -> str | None:
    """Why ``result`` may not enter a packet of ``project_id``, or None when it may: held, already a note, stale in
    the checkout, its evidence short of the bar, a global memory of the wrong kind or said once elsewhere. The one
    rule the build applies; ``nous packet --why-not`` quotes it."""
    memory_id = getattr(result, "memory_id", None) or result.id  # a retrieved result, or a memory row
    if is_observation(result):
        return "an observation: it enters only in place of two or more of its members, when it is shorter"
    if memory_id in guarded.held:
        return "held by the packet guard (answer it in `nous review`)"
    if result.learning_id in guarded.noted:
        return "a note (intervention) in the packet already says it"
    if memory_id in guarded.stale:
        return "stale: a file or command it cites no longer resolves in the project's checkout"
    if result.kind == "convention" and loaded_rule(result.content or ""):
        return f"{ALREADY_NATIVE}: a session wrote it into a file Claude Code loads into every session"
    if not earns_line(result, guarded.bar):
        status = getattr(result, "status", None) or OBSERVED
        if status not in INJECTABLE:
            return f"its status is {status}: only verified, stated and observed memories are injected"
        return (f"below the evidence bar: confidence {confidence(result):.2f} < "
                f"thresholds.packet_min_confidence {guarded.bar:.2f} ({sessions_of(result)} session(s))")  # fmt: skip
    if result.scope == "global":
        if result.kind not in GLOBAL_KINDS:
            return f"a global memory of kind {result.kind}: packets take only {', '.join(sorted(GLOBAL_KINDS))}"
        if result.project_id != project_id and sessions_of(result) < GLOBAL_MIN_SESSIONS:
            return f"a global memory learned elsewhere in fewer than {GLOBAL_MIN_SESSIONS} sessions"
        return None
    if project_id == GLOBAL:
        return "a project memory: the global packet carries only global ones"
    return None


def _injectable(result: Any, project_id: str, guarded: Guarded) -> bool:
    """Not held, not already a note, not stale in the checkout, and its evidence earns a line (:func:`exclusion`)."""
    return exclusion(result, project_id, guarded) is None


def guard_for(
    conn: Connection, settings: Settings, project_id: str, held: frozenset[int], approved: frozenset[int],
    notes: list[Any], stale_ids: frozenset[int], native: Any = None,
) -> Guarded:
    """The guard state a packet of ``project_id`` is built with (``notes``: its interventions; ``native``: what
    Claude Code loads for it, :func:`nous_assets.retrieve.native.native_for`)."""
    extra = min(MAX_HELD_EXTRA, holds.count_held(conn, None if project_id == GLOBAL else project_id))
    said = AlreadySaid(native.statements()) if native is not None else ()  # indexed once for all its packets
    rules = rules_from(memory_search.rules_in(conn, project_id, RULE_KINDS))
    return Guarded(held, approved, extra, tuple(a.payload_text for a in notes), noted_learnings(notes),
                   settings.thresholds.packet_min_confidence, stale_ids, memory_search.count_in(conn, project_id),
                   said, rules)  # fmt: skip


def _retrieved(
    conn: Connection, settings: Settings, project_id: str, fp: dict, embedder: Any, extra: int, *, explain: bool = False
) -> list[Any]:
    """Every result a packet of ``fp`` is chosen from, best first (``explain``: with the score breakdown and rank)."""
    text = " ".join([*(fp.get("terms") or []), *(fp.get("stack") or []), *split_words(fp.get("branch") or "")])
    query = Query.from_text(text, project_id=project_id, project_evidence=True)
    budget = settings.thresholds.injection_budget_chars
    wanted = max(settings.retrieve.top_k, budget // CHARS_PER_CANDIDATE)  # fill the budget, not a fixed top k
    ranking = replace(settings, retrieve=replace(settings.retrieve, weights=PACKET_WEIGHTS))
    return retrieve(conn, query, ranking, embedder=embedder, k=wanted + extra, explain=explain)


def _candidates_for(
    conn: Connection, settings: Settings, project_id: str, fp: dict, embedder: Any, guarded: Guarded
) -> tuple[list[Any], int]:
    """(injectable results best first, held memories retrieved) for one fingerprint."""
    found = _retrieved(conn, settings, project_id, fp, embedder, guarded.extra)
    results = fold([r for r in found if _injectable(r, project_id, guarded)], [r for r in found if is_observation(r)])
    return results, sum(1 for r in found if r.memory_id in guarded.held)


@dataclass
class Plan:
    """What a build would do for one fingerprint now, for ``nous packet --explain`` / ``--why-not``."""

    found: list[Any]  # every retrieved result, best first, with its score breakdown and rank
    results: list[Any]  # the injectable ones, in the order the packet is filled from
    guarded: Guarded
    packet: Any  # the rendered packet (retrieve.packet.Packet): which ids it took, which it left out and why


def packet_plan(
    conn: Connection, settings: Settings, project_id: str, fp: dict, embedder: Any = None, local: set[str] | None = None
) -> Plan:
    """The build's own steps for ``project_id`` and fingerprint ``fp`` (``local``: a checkout's sessions), reading
    the guard state as :func:`build_cache` does (held and approved memories, active notes, the last stale verdict)
    but writing nothing."""
    from nous_assets.store.reads import stale as stale_store

    held = frozenset(holds.ids(conn, holds.HELD))
    active = guarded_notes(active_notes.current(conn, now_iso()), frozenset(holds.learning_ids(conn, holds.HELD)))
    notes = interventions_for(active, project_id, settings.thresholds.intervention_max_per_packet)
    stale_ids = frozenset(stale_store.ids(conn, project_id)) if project_id != GLOBAL else frozenset()
    guarded = guard_for(conn, settings, project_id, held, frozenset(holds.ids(conn, holds.APPROVED)), notes, stale_ids,
                        native_memory.native_for(conn, settings, project_id))  # fmt: skip
    found = _retrieved(conn, settings, project_id, fp, embedder, guarded.extra, explain=True)
    results = fold([r for r in found if _injectable(r, project_id, guarded)], [r for r in found if is_observation(r)])
    return Plan(found, results, guarded, _format(settings, project_id, results, guarded, local))


def _session_of(result: Any) -> str:
    return str(result.source_session or "").split("#", 1)[0]


def localised(results: list[Any], sessions: set[str]) -> list[Any]:
    """``results`` re-ranked for a session starting in one checkout (a worktree, a subdirectory) of the project:
    what was learned there comes before what was learned elsewhere, by :data:`LOCAL_BOOST` on the score."""
    return sorted(results, key=lambda r: -(r.score + (LOCAL_BOOST if _session_of(r) in sessions else 0.0)))


def _format(settings: Settings, project_id: str, results: list[Any], guarded: Guarded, local: set[str] | None = None):
    """The packet (retrieve.packet.Packet) for ``results``; ``local``: the sessions of the checkout it is for, whose
    memories come first."""
    results = localised(results, local) if local else results
    title = "Nous memory" if project_id == GLOBAL else "Nous memory for this project"
    against = {r.memory_id: rule.mark() for r in results
               if (rule := broken_rule(r.content or "", guarded.rules, r.memory_id)) is not None}  # fmt: skip
    return format_packet(
        results,
        {r.memory_id: r for r in results},
        budget_chars=settings.thresholds.injection_budget_chars,
        title=title,
        approved=guarded.approved,
        max_global=MAX_GLOBALS,
        interventions=guarded.notes,
        known=guarded.known,
        native=guarded.native,
        marks=against,
    )


def _render(
    settings: Settings, project_id: str, results: list[Any], guarded: Guarded, local: set[str] | None = None
) -> tuple[str, list, int]:
    """(packet text, memory ids, held memories left out by the packet's own guard check); ``local``: the
    sessions of the checkout the packet is for, whose memories come first."""
    packet = _format(settings, project_id, results, guarded, local)
    return redact(packet.text), list(packet.memory_ids), len(packet.held)  # redacted again: defence in depth


def _checkouts(profile: Profile | None) -> list[tuple[str, set[str]]]:
    """(cwd, its sessions) for each cwd that ran some but not all of the project's sessions."""
    if profile is None or len(profile.sessions) < 2:
        return []
    everything = set().union(*profile.sessions.values())
    return [(cwd, local) for cwd, local in sorted(profile.sessions.items()) if local != everything]


def _checkout_rows(
    settings: Settings,
    project: str,
    profile: Profile | None,
    fp: dict,
    results: list[Any],
    guarded: Guarded,
    version: int,
    now: str,
) -> list[tuple]:
    """One injection_cache row per checkout of the project: its packet ranks what was learned there first."""
    rows = []
    for cwd, local in _checkouts(profile):
        text, ids, _ = _render(settings, project, results, guarded, local)
        if text:
            key = f"{project}:cwd:{hashlib.blake2b(cwd.encode(), digest_size=8).hexdigest()}"
            row_fp = {**fp, "cwd": cwd}
            rows.append((key, project, "project", json.dumps(row_fp), text, json.dumps(ids), len(text), version, now))
    return rows


def _version(conn: Connection, project_id: str) -> int:
    """Newest event reflected in the project's (and global) memories: the packet's freshness stamp."""
    return memory_search.latest_event_id(conn, project_id)


def _drop_vanished(conn: Connection, projects: list[str]) -> None:
    """Remove packets of projects without memories (their folders now belong to another project), and the
    per-cwd copies older versions wrote (``alias:`` keys; the hook resolves cwds through project_aliases)."""
    injection_cache.drop_vanished(conn, projects)


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
    projects = memory_search.project_ids(conn)
    _drop_vanished(conn, projects)
    built = injection_cache.built_versions(conn)
    now = now_iso()
    active = guarded_notes(active_notes.current(conn, now), frozenset(holds.learning_ids(conn, holds.HELD)))
    digests = active_notes.packet_digests(conn)
    for project in [*projects, GLOBAL]:
        version = _version(conn, project)
        stale_ids, stale_changed = check_project(conn, project) if project != GLOBAL else (frozenset(), False)
        stats.stale += len(stale_ids)
        native = native_memory.native_for(conn, settings, project)
        verdict_changed = verdicts.global_changed or project in verdicts.projects or stale_changed \
            or native_memory.changed(conn, project, native)  # fmt: skip
        notes = interventions_for(active, project, settings.thresholds.intervention_max_per_packet)
        # what the packets were built from, even when they came out empty; the row count moves when a memory is
        # archived (rejected, forgotten, decayed), which leaves the newest projected event where it was
        digest = f"{version}:{memory_search.rows_in(conn, project)}:{notes_digest(notes)}"
        same = digests.get(project) == digest and built.get(project, version) == version
        if not force and not verdict_changed and same:
            stats.projects_unchanged += 1
            continue
        profile = profiles.get(project) if project != GLOBAL else None
        guarded = guard_for(conn, settings, project, held, approved, notes, stale_ids, native)
        rows = []
        for fp in fingerprints_for(profile):
            results, held_found = _candidates_for(conn, settings, project, fp, embedder, guarded)
            text, ids, held_left = _render(settings, project, results, guarded)
            stats.held_skipped += held_found + held_left
            if not text:
                continue
            key = f"{project}:{fingerprint_key({'project_id': project, **fp})}"
            scope = "global" if project == GLOBAL else "project"
            rows.append((key, project, scope, json.dumps(fp), text, json.dumps(ids), len(text), version, now))
            if fp.get("branch") is None:  # the default fingerprint: each checkout's own packet re-ranks its results
                rows += _checkout_rows(settings, project, profile, fp, results, guarded, version, now)
        with atomic(conn):  # the packets and the interventions they carry, together
            injection_cache.replace_packets(conn, project, rows)
            active_notes.save_packet_digest(conn, project, digest, now)
            native_memory.record(conn, project, native)
        stats.projects_rebuilt += 1
        stats.packets += len(rows)
        stats.largest_packet_chars = max([stats.largest_packet_chars, *(r[6] for r in rows)])
    with atomic(conn):
        set_checkpoint(conn, 1, PACKETS_CHECKED)
    checkpoint(conn)  # the hook reads these rows next: leave it a short WAL
    return stats

"""What ``nous review`` lists besides held memories: the lifecycle's open questions, each with its evidence.

* **contradictions** — ``nli_results`` pairs labelled contradiction whose memories are both current;
* **re-learning flags** — re-learning decisions that want a look (``payload.relearn``: a queued rewrite, an
  injection failure, a near-miss that was kept apart);
* **injection failures** — memories learned in ``intervention_relearn_sessions`` or more sessions that no
  session start ever carried (``access_log``);
* **interventions** — the active interventions, with the reasons, confidence and evidence of each;
* **stale** — memories whose citations (a file, script, npm script, make target or mise task) no longer resolve
  in the project's checkout on this machine: they are not injected until the user rejects or confirms them;
* **remembered** — what Claude recorded at the user's request through the MCP ``remember`` tool (events with
  source ``agent``), newest first, so nothing is kept in the user's name without their seeing it;
* **auto-memory** — the notes Nous took in from Claude Code's own auto-memory files (``MEMORY.md`` and topic
  files), each with its file and line, newest first.

Evidence is what lets the user judge without opening the database: the sessions and the days they learned
it, the provenance (transcript file and line offsets), the NLI model and confidence. The answers are events
(:mod:`nous_assets.safety.review`) or, for an intervention, an audited dismissal.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from nous_assets.settings import Thresholds
from nous_assets.store.db import Connection
from nous_assets.store.ingest import native_notes
from nous_assets.store.reads import observations, remembered, stale
from nous_assets.store.sqlite import interventions

FLAG_DECISIONS = frozenset({"injection_failure", "rewrite", "near_miss"})
SECTIONS = ("contradictions", "relearn", "injection-failures", "interventions", "stale", "remembered", "auto-memory")


@dataclass
class Item:
    """One thing to review: a title line, the memories it is about, and evidence lines."""

    section: str
    key: str  # what the answer commands take: a memory #id or an intervention id
    title: str
    memory_ids: list[int] = field(default_factory=list)
    evidence: list[str] = field(default_factory=list)
    data: dict[str, Any] = field(default_factory=dict)  # the same, for --json


def _sessions(sessions: list[tuple[str, str]], limit: int = 6) -> str:
    shown = ", ".join(f"{s[:8]} ({d or '?'})" for s, d in sessions[:limit])
    return shown + (f" and {len(sessions) - limit} more" if len(sessions) > limit else "")


def _provenance(p: dict[str, Any] | None) -> str:
    if not p:
        return "-"
    offsets = p.get("line_offsets") or []
    where = f" at byte {offsets[0]}" if offsets else ""
    return f"{p.get('source_path', '?')}{where}"


def contradiction_items(conn: Connection, t: Thresholds, project_id: str | None = None) -> list[Item]:
    out = []
    for c in observations.contradictions(conn, min_confidence=t.nli_contradiction_confidence, project_id=project_id):
        newer, older = (c.memory_b, c.memory_a) if c.learned_b >= c.learned_a else (c.memory_a, c.memory_b)
        out.append(Item(
            "contradictions", f"{c.memory_a}:{c.memory_b}",
            f"#{c.memory_a} contradicts #{c.memory_b} · {c.model_version} confidence {c.confidence:.2f} · project "
            f"{c.project_id}",
            [c.memory_a, c.memory_b],
            [f"#{c.memory_a} learned {c.learned_a} in session {c.session_a[:8]}: {c.content_a}",
             f"#{c.memory_b} learned {c.learned_b} in session {c.session_b[:8]}: {c.content_b}",
             f"checked {c.checked_at[:10]}; keep the later one with `nous review supersede {older} --by {newer}`"],
            {"memory_a": c.memory_a, "memory_b": c.memory_b, "confidence": c.confidence,
             "model_version": c.model_version, "checked_at": c.checked_at, "project_id": c.project_id,
             "learned_a": c.learned_a, "learned_b": c.learned_b, "session_a": c.session_a, "session_b": c.session_b,
             "content_a": c.content_a, "content_b": c.content_b},
        ))  # fmt: skip
    return out


def relearn_items(conn: Connection, project_id: str | None = None) -> list[Item]:
    out = []
    for f in observations.relearn_flags(conn, decisions=FLAG_DECISIONS, project_id=project_id):
        target = f"#{f.memory_id}" if f.memory_id is not None else f.learning_id[:8]
        similarity = f" similarity {f.similarity:.2f}" if f.similarity is not None else ""
        tier = f" tier {f.tier}" if f.tier else ""
        evidence = [f"{f.event_type} in session {f.session_id[:8]} ({f.learned_at}): {f.content or '(archived)'}"]
        if f.matched_content:
            evidence.append(f"matched: {f.matched_content}")
        out.append(Item(
            "relearn", str(f.memory_id or f.learning_id), f"{target} {f.decision}{tier}{similarity} · project "
            f"{f.project_id}", [f.memory_id] if f.memory_id is not None else [], evidence,
            {"event_id": f.event_id, "decision": f.decision, "tier": f.tier, "similarity": f.similarity,
             "memory_id": f.memory_id, "learning_id": f.learning_id, "matched": f.matched, "session_id": f.session_id,
             "learned_at": f.learned_at, "project_id": f.project_id, "content": f.content,
             "matched_content": f.matched_content},
        ))  # fmt: skip
    return out


def injection_failure_items(conn: Connection, t: Thresholds, project_id: str | None = None) -> list[Item]:
    learned = [m for m in observations.learned_memories(conn) if len(m.sessions) >= t.intervention_relearn_sessions]
    if project_id is not None:
        learned = [m for m in learned if m.project_id == project_id]
    injected = observations.injection_counts(conn, [m.memory_id for m in learned])
    out = []
    for m in learned:
        if injected.get(m.memory_id):
            continue
        out.append(Item(
            "injection-failures", str(m.memory_id),
            f"#{m.memory_id} {m.kind or '-'} learned in {len(m.sessions)} sessions, never injected · project "
            f"{m.project_id}", [m.memory_id],
            [m.content, f"sessions: {_sessions(m.sessions)}", f"provenance: {_provenance(m.provenance)}"],
            {"memory_id": m.memory_id, "kind": m.kind, "project_id": m.project_id, "content": m.content,
             "sessions": [{"session_id": s, "learned": d} for s, d in m.sessions], "injections": 0,
             "provenance": m.provenance},
        ))  # fmt: skip
    return out


def intervention_items(conn: Connection, now: str, project_id: str | None = None) -> list[Item]:
    out = []
    for a in interventions.current(conn, now, project_id):
        evidence = a.evidence
        lines = [a.payload_text]
        if evidence.get("sessions"):
            lines.append(f"sessions: {_sessions([tuple(s) for s in evidence['sessions']])}")
        if evidence.get("provenance"):
            lines.append(f"provenance: {_provenance(evidence['provenance'])}")
        if evidence.get("pairs"):
            lines.append("contradicting pairs: " + ", ".join(f"#{x}/#{y}" for x, y in evidence["pairs"][:8]))
        history = interventions.transitions(conn, a.intervention_id)
        lines.append("audit: " + "; ".join(f"{to} ({why}, {at[:16]})" for _, to, why, _, at in history))
        scope = "global" if a.scope == "global" else f"project {a.target_project_id}"
        memory = evidence.get("memory_id")
        out.append(Item(
            "interventions", a.intervention_id,
            f"{a.intervention_id[:12]} {', '.join(a.reason_codes)} · confidence {a.confidence:.2f} · priority "
            f"{a.priority} · {scope} · until {a.expires_at[:16]}",
            [memory] if isinstance(memory, int) else [], lines,
            {"intervention_id": a.intervention_id, "reason_codes": list(a.reason_codes), "confidence": a.confidence,
             "priority": a.priority, "scope": a.scope, "project_id": a.target_project_id, "expires_at": a.expires_at,
             "cooldown_until": a.cooldown_until, "payload_text": a.payload_text, "evidence": evidence,
             "audit": [dict(zip(("from", "to", "reason", "actor", "at"), h, strict=True)) for h in history]},
        ))  # fmt: skip
    return out


def stale_items(conn: Connection, project_id: str | None = None) -> list[Item]:
    out = []
    for row, content in stale.listed(conn, project_id):
        missing = ", ".join(f"{u['kind']} {u['value']}" for u in row.unresolved)
        out.append(Item(
            "stale", str(row.memory_id), f"#{row.memory_id} cites what {row.checkout} no longer has: {missing} · "
            f"project {row.project_id}", [row.memory_id], [content, f"checked {row.checked_at[:16]}"],
            {"memory_id": row.memory_id, "project_id": row.project_id, "unresolved": row.unresolved,
             "checkout": row.checkout, "checked_at": row.checked_at, "content": content},
        ))  # fmt: skip
    return out


def remembered_items(conn: Connection, project_id: str | None = None) -> list[Item]:
    out = []
    for r in remembered.listing(conn, project_id):
        held = " · held by the guard" if r.held else ""
        out.append(Item(
            "remembered", str(r.memory_id), f"#{r.memory_id} {r.kind or '-'} recorded by Claude {r.recorded_at[:16]}"
            f"{held} · {'global' if r.scope == 'global' else 'project ' + r.project_id}", [r.memory_id], [r.content],
            {"memory_id": r.memory_id, "project_id": r.project_id, "scope": r.scope, "kind": r.kind,
             "content": r.content, "recorded_at": r.recorded_at, "held": r.held, "source": "agent"},
        ))  # fmt: skip
    return out


def auto_memory_items(conn: Connection, project_id: str | None = None) -> list[Item]:
    out = []
    for n in native_notes.listing(conn, project_id):
        held = " · held by the guard" if n.held else ""
        name = n.file.rsplit("/", 1)[-1] or "?"
        out.append(Item(
            "auto-memory", str(n.memory_id), f"#{n.memory_id} {n.kind or '-'} from {name}:{n.line} "
            f"({n.recorded_at[:10]}){held} · project {n.project_id}", [n.memory_id], [n.content, f"file: {n.file}"],
            {"memory_id": n.memory_id, "project_id": n.project_id, "kind": n.kind, "content": n.content,
             "file": n.file, "line": n.line, "recorded_at": n.recorded_at, "held": n.held},
        ))  # fmt: skip
    return out


def review_items(
    conn: Connection, t: Thresholds, now: str, *, sections: tuple[str, ...] = SECTIONS, project_id: str | None = None
) -> dict[str, list[Item]]:
    """Every requested section's items (see the module docstring), in :data:`SECTIONS` order."""
    build = {
        "contradictions": lambda: contradiction_items(conn, t, project_id),
        "relearn": lambda: relearn_items(conn, project_id),
        "injection-failures": lambda: injection_failure_items(conn, t, project_id),
        "interventions": lambda: intervention_items(conn, now, project_id),
        "stale": lambda: stale_items(conn, project_id),
        "remembered": lambda: remembered_items(conn, project_id),
        "auto-memory": lambda: auto_memory_items(conn, project_id),
    }
    return {name: build[name]() for name in SECTIONS if name in sections}

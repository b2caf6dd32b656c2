"""Observers: conditions read from the event log and read models, each a :class:`Finding`.

Four observers, each a pure function of what :mod:`nous_assets.store.reads.observations` reads:

* :func:`repeated_corrections` — something the user told Claude (a correction or a stated way of working)
  was said again in ``intervention_repeat_sessions`` or more sessions: the earlier telling did not stick;
* :func:`never_injected` — a learning learned in ``intervention_relearn_sessions`` or more sessions that no
  session start ever injected (``access_log``), or that re-learning flagged as an injection failure, in a
  project some session start was served for;
* :func:`failing_commands` — a command failure (a gotcha learning: the failed command and its error) that
  came back in ``intervention_failure_sessions`` or more sessions;
* :func:`contradiction_hotspots` — a domain of a project whose current memories contradict each other
  (``nli_results``) at ``intervention_contradiction_density`` pairs per memory or more.

Nothing here depends on the words of a memory: kinds, session counts, access counts and NLI labels only.
Findings about one learning share a dedupe key, so :func:`combine` makes one candidate of them.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nous_assets.settings import Thresholds
from nous_assets.store.reads.observations import Contradiction, LearnedMemory, RelearnFlag
from nous_assets.store.sqlite.interventions import LEARNING_KEY, InterventionCandidate

CORRECTION_KINDS = ("correction", "preference")  # what the user told Claude about how to work
FAILURE_KINDS = ("gotcha", "error_fix")  # a failed command with its error (and, when found, its fix)
MAX_QUOTED = 220


@dataclass(frozen=True)
class Finding:
    """One observed condition: the text a packet would carry and why."""

    dedupe_key: str
    scope: str
    project_id: str | None
    reason: str
    confidence: float
    priority: int
    text: str
    evidence: dict[str, Any] = field(default_factory=dict)


def _short(text: str, limit: int = MAX_QUOTED) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _span(mem: LearnedMemory) -> str:
    days = sorted(d for _, d in mem.sessions if d)
    if not days:
        return ""
    return f" ({days[0]})" if days[0] == days[-1] else f" ({days[0]} to {days[-1]})"


def _about_learning(mem: LearnedMemory, reason: str, confidence: float, priority: int, text: str) -> Finding:
    scope = "global" if mem.scope == "global" else "project"
    evidence = {"memory_id": mem.memory_id, "learning_id": mem.learning_id, "sessions": mem.sessions,
                "provenance": mem.provenance}  # fmt: skip
    return Finding(f"{LEARNING_KEY}{mem.learning_id}", scope, None if scope == "global" else mem.project_id, reason,
                   round(min(confidence, 0.95), 4), priority, text, evidence)  # fmt: skip


def repeated_corrections(memories: Iterable[LearnedMemory], t: Thresholds) -> list[Finding]:
    """A correction or stated way of working the user had to give again in another session."""
    out = []
    for mem in memories:
        n = len(mem.sessions)
        if mem.kind not in CORRECTION_KINDS or n < max(2, t.intervention_repeat_sessions):
            continue
        text = f"The user has said this in {n} sessions{_span(mem)}: {_short(mem.content)}"
        out.append(_about_learning(mem, "repeated_correction", 0.5 + 0.15 * (n - 1), 3, text))
    return out


def never_injected(
    memories: Iterable[LearnedMemory],
    injections: dict[int, int],
    flags: Sequence[RelearnFlag],
    served: frozenset[str],
    t: Thresholds,
    withheld: Callable[[str | None], bool],
) -> list[Finding]:
    """A learning learned again and again that no session start carried (or that re-learning flagged), in a
    project Nous has served (``served``: before any session start took memories, as after importing history,
    "never recalled" says nothing about the packet). Not one whose slot the packet leaves out on purpose
    (``withheld``: a manifest's dependency list, which the brief's layout line names): a note would bring it back."""
    flagged = {f.learning_id for f in flags if f.decision == "injection_failure"}
    out = []
    for mem in memories:
        n = len(mem.sessions)
        if injections.get(mem.memory_id, 0) and mem.learning_id not in flagged:
            continue
        if n < max(2, t.intervention_relearn_sessions) and mem.learning_id not in flagged:
            continue
        was_served = bool(served) if mem.scope == "global" else mem.project_id in served
        if not was_served or withheld(mem.slot):
            continue
        text = f"Learned in {n} sessions{_span(mem)} but never recalled at a session start: {_short(mem.content)}"
        out.append(_about_learning(mem, "relearned_never_injected", 0.4 + 0.1 * n, 1, text))
    return out


def failing_commands(memories: Iterable[LearnedMemory], t: Thresholds) -> list[Finding]:
    """A command failing the same way (one gotcha learning) in several sessions."""
    out = []
    for mem in memories:
        n = len(mem.sessions)
        if mem.kind not in FAILURE_KINDS or n < max(2, t.intervention_failure_sessions):
            continue
        text = f"This failure came back in {n} sessions{_span(mem)}: {_short(mem.content)}"
        out.append(_about_learning(mem, "repeated_command_failure", 0.45 + 0.1 * n, 2, text))
    return out


def contradiction_hotspots(
    pairs: Sequence[Contradiction], per_domain: dict[tuple[str, str], int], t: Thresholds
) -> list[Finding]:
    """A project's domain whose current memories contradict each other often."""
    counted: Counter[tuple[str, str]] = Counter()
    examples: dict[tuple[str, str], list[list[int]]] = {}
    for p in pairs:
        for domain in {p.domain_a, p.domain_b} - {None, ""}:
            key = (p.project_id, str(domain))
            counted[key] += 1
            examples.setdefault(key, []).append([p.memory_a, p.memory_b])
    out = []
    for (project, domain), n_pairs in sorted(counted.items()):
        n_memories = per_domain.get((project, domain), 0)
        if n_pairs < max(1, t.intervention_contradiction_min_pairs) or not n_memories:
            continue
        density = n_pairs / n_memories
        if density < t.intervention_contradiction_density:
            continue
        text = (f"Notes on {domain} in this project contradict each other ({n_pairs} contradicting pairs among "
                f"{n_memories} notes): check the current code before relying on any of them.")  # fmt: skip
        evidence = {"domain": domain, "pairs": sorted(examples[(project, domain)]), "memories": n_memories,
                    "density": round(density, 4)}  # fmt: skip
        out.append(Finding(f"contradictions:{project}:{domain}", "project", project, "contradiction_density",
                           round(min(0.95, 0.5 + density), 4), 2, text, evidence))  # fmt: skip
    return out


def _candidate_id(dedupe_key: str, evidence: dict[str, Any]) -> str:
    """The same observation (key and evidence) always gets the same id, so observing twice writes nothing."""
    signature = json.dumps([dedupe_key, evidence], sort_keys=True, default=str)
    return hashlib.sha256(signature.encode("utf-8")).hexdigest()[:32]


def combine(findings: Iterable[Finding], t: Thresholds, now: str) -> list[InterventionCandidate]:
    """One candidate per dedupe key: reasons united, the highest confidence and priority, the text of the
    most pressing finding; ttl and cooldown from the thresholds in force."""
    grouped: dict[str, list[Finding]] = {}
    for f in findings:
        grouped.setdefault(f.dedupe_key, []).append(f)
    out = []
    for key, group in sorted(grouped.items()):
        lead = max(group, key=lambda f: (f.priority, f.confidence, f.reason))
        evidence = {**{k: v for f in group for k, v in f.evidence.items()}}
        reasons = tuple(sorted({f.reason for f in group}))
        out.append(InterventionCandidate(
            candidate_id=_candidate_id(key, {"reasons": reasons, **evidence}),
            scope=lead.scope, target_project_id=lead.project_id, reason_codes=reasons,
            confidence=max(f.confidence for f in group), priority=max(f.priority for f in group),
            ttl_seconds=t.intervention_ttl_seconds, cooldown_seconds=t.intervention_cooldown_seconds,
            payload_text=lead.text, dedupe_key=key, evidence=evidence, created_at=now,
        ))  # fmt: skip
    return out

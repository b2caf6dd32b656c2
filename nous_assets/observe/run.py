"""One observation pass: read, observe, append the new candidates, reduce. What the ``interventions`` asset runs."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from nous_assets.observe import observers
from nous_assets.observe.reducer import ReduceStats, reduce
from nous_assets.settings import Thresholds
from nous_assets.store.db import Connection, atomic
from nous_assets.store.reads import observations
from nous_assets.store.sqlite import interventions as store
from nous_assets.store.sqlite.interventions import InterventionCandidate
from nous_assets.timeutil import now_iso


def _nothing(text: str | None) -> bool:
    return False


@dataclass
class ObserveStats:
    findings: dict[str, int] = field(default_factory=dict)  # reason code -> findings this pass
    candidates_new: int = 0
    reduced: ReduceStats = field(default_factory=ReduceStats)
    active: int = 0
    by_state: dict[str, int] = field(default_factory=dict)


def observe(
    conn: Connection, t: Thresholds, now: str, held: Callable[[str], bool] = _nothing,
    withheld: Callable[[str | None], bool] = _nothing,
) -> tuple[list[InterventionCandidate], dict[str, int]]:
    """The candidates every observer sees in the current state (nothing written); ``held``: the packet guard's
    verdict on a note's text (passed in: observers read kinds and counts, never words); ``withheld``: whether packets
    leave a memory of that slot out on purpose (passed in: the packet's rule, :func:`retrieve.packet.withheld`)."""
    learned = observations.learned_memories(conn)
    injections = observations.injection_counts(conn, [m.memory_id for m in learned])
    flags = observations.relearn_flags(conn, decisions=frozenset({"injection_failure"}))
    pairs = observations.contradictions(conn, min_confidence=t.nli_contradiction_confidence)
    findings = [
        *observers.repeated_corrections(learned, t),
        *observers.never_injected(learned, injections, flags, observations.served_projects(conn), t, withheld),
        *observers.failing_commands(learned, t),
        *observers.contradiction_hotspots(pairs, observations.current_per_domain(conn), t),
    ]
    # a note quotes what was learned: one the packet guard would hold never becomes a candidate (it would sit in
    # active_interventions, where every way out — packets, the service's resolve — could read it)
    findings = [f for f in findings if not held(f.text)]
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.reason] = counts.get(f.reason, 0) + 1
    return observers.combine(findings, t, now), counts


def observe_and_reduce(
    conn: Connection, t: Thresholds, *, now: str | None = None, held: Callable[[str], bool] = _nothing,
    withheld: Callable[[str | None], bool] = _nothing,
) -> ObserveStats:
    """Append what the observers see now (idempotent: an unchanged observation writes nothing), then reduce."""
    now = now or now_iso()
    stats = ObserveStats()
    candidates, stats.findings = observe(conn, t, now, held, withheld)
    with atomic(conn):
        stats.candidates_new = store.insert_candidates(conn, candidates)
    observed = {c.dedupe_key for c in candidates}
    stats.reduced = reduce(conn, t.intervention_min_confidence, now, observed=observed)
    stats.active = len(store.current(conn, now))
    stats.by_state = store.counts_by_state(conn)
    return stats

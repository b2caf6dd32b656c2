"""Reinforcement over time: decay of idle memories, archival below the configured score, the rotation bound.

Spec "Reinforcement Loop" (apply time decay every 30 days; low-scoring memories archived), "Learning
Lifecycle" (``LearningWeakened`` -> ``LearningArchived`` when the score falls below 0.1) and gap G2 (keep at
most 2,000 memories, the best-reinforced). Everything is an event, never a DELETE:

* **decay** — time is cut into fixed periods of ``decay_period_days`` (30) counted from the first partition
  day. A memory idle for a whole period (recorded, reinforced or weakened before it began) decays once for
  it: a ``LearningWeakened`` with reason ``decay`` that leaves ``decay_factor`` (0.5, a 30-day half-life)
  of its positive score. Idle since it was *recorded*, not since the session it was learned in: a backfill
  of last year's sessions holds memories nobody could have used yet, and their clock starts when Nous
  learns them. The idempotency key is the memory and the period, so a period decays a memory once
  however often, and in whatever order of days, retention runs; and the periods already covered are read
  back from the log, so a later run continues where the last stopped.
* **archival** — a memory whose score (after decay) is below ``archive_below`` (0.1) gets
  ``LearningArchived`` with reason ``score_below_threshold``; decay stops there.
* **rotation** — beyond ``rotation_bound`` (2,000) memories in one scope (a project, or the global scope),
  the lowest-scored (then the longest idle) are archived with reason ``rotation_bound``.

Computed against ``clock`` (the asset passes its partition's end, so a backfill decides what it would have
decided on that day) over the projection as it stands, brought up to date first under the same write lock.
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from nous_assets.settings import FIRST_PARTITION_DAY, Thresholds
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads import retention as reads
from nous_assets.store.reads.retention import Retained
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project
from nous_assets.timeutil import parse_time, to_iso

SESSION = "nous-retention"  # the session id of the events retention writes (no Claude Code session caused them)
SOURCE = "fs_reconcile"
EPOCH = parse_time(FIRST_PARTITION_DAY)
BELOW_THRESHOLD, ROTATION = "score_below_threshold", "rotation_bound"


@dataclass
class RetentionStats:
    memories: int = 0
    decayed: int = 0  # decay events written (one per memory and idle period)
    archived_below: int = 0
    archived_rotation: int = 0
    events_written: int = 0
    scopes_over_bound: list[str] = field(default_factory=list)


def _period_start(index: int, days: int) -> datetime:
    return EPOCH + timedelta(days=index * days)


def idle_periods(active: str, covered_until: str | None, clock: datetime, days: int) -> list[int]:
    """Indexes of the whole periods, ended by ``clock``, that began at or after ``active`` and after the
    periods already decayed (``covered_until``, the end of the last one)."""
    since = parse_time(active)
    if covered_until is not None:
        since = max(since, parse_time(covered_until))
    first = max(0, math.ceil((since - EPOCH) / timedelta(days=days)))
    last = math.floor((clock - EPOCH) / timedelta(days=days)) - 1  # the last period that ended by the clock
    return list(range(first, last + 1))


def _decay_event(mem: Retained, index: int, delta: float, thresholds: Thresholds) -> LearningEvent:
    days = thresholds.decay_period_days
    start, end = _period_start(index, days), _period_start(index + 1, days)
    payload = {
        "reinforcement_delta": delta,
        "reason": "decay",
        "period": f"{days}d:{index}",
        "period_start": to_iso(start),
        "period_end": to_iso(end),
        "factor": thresholds.decay_factor,
    }
    key = hashlib.sha256(f"decay:{mem.learning_id}:{days}d:{index}".encode()).hexdigest()
    return LearningEvent("LearningWeakened", mem.learning_id, payload, SESSION, mem.project_id, SOURCE, key,
                         valid_from=to_iso(end))  # fmt: skip


def _archive_event(mem: Retained, score: float, reason: str, detail: dict, clock: datetime) -> LearningEvent:
    payload = {"reason": reason, "score": round(score, 6), "clock": to_iso(clock), **detail}
    key = hashlib.sha256(f"archive:{mem.learning_id}".encode()).hexdigest()
    return LearningEvent("LearningArchived", mem.learning_id, payload, SESSION, mem.project_id, SOURCE, key)


def _decay(mem: Retained, covered: str | None, clock: datetime, t: Thresholds) -> tuple[float, list[LearningEvent]]:
    """The memory's score after its idle periods, and one decay event per period (stops below the threshold)."""
    score, events = mem.score, []
    for index in idle_periods(mem.active, covered, clock, t.decay_period_days):
        if score < t.archive_below or score <= 0 or t.decay_factor >= 1:
            break
        delta = score * t.decay_factor - score
        if delta >= 0:
            break
        events.append(_decay_event(mem, index, delta, t))
        score += delta  # as the projection will add it, so the next period decays what is really left
    return score, events


def plan(memories: list[Retained], covered: dict[str, str], clock: datetime, t: Thresholds,
         stats: RetentionStats) -> list[LearningEvent]:  # fmt: skip
    """Every event retention owes at ``clock``: decay, then archival below the threshold, then rotation."""
    events: list[LearningEvent] = []
    kept: dict[str, list[tuple[float, Retained]]] = defaultdict(list)
    for mem in memories:
        score, decays = _decay(mem, covered.get(mem.learning_id), clock, t)
        events += decays
        stats.decayed += len(decays)
        if score < t.archive_below:
            events.append(_archive_event(mem, score, BELOW_THRESHOLD, {"archive_below": t.archive_below}, clock))
            stats.archived_below += 1
        else:
            kept[mem.scope_key].append((score, mem))
    for scope, members in sorted(kept.items()):
        excess = len(members) - t.rotation_bound
        if excess <= 0:
            continue
        stats.scopes_over_bound.append(scope)
        members.sort(key=lambda pair: (pair[0], pair[1].active, pair[1].learning_id))
        for score, mem in members[:excess]:
            events.append(_archive_event(mem, score, ROTATION, {"bound": t.rotation_bound, "scope": scope}, clock))
            stats.archived_rotation += 1
    return events


def apply_retention(conn: Connection, clock: datetime, thresholds: Thresholds) -> RetentionStats:
    """Decay, archive and rotate as of ``clock``; appends the events in one transaction (idempotent)."""
    stats = RetentionStats()
    with atomic(conn):
        project(conn, policy=Policy.of(thresholds))  # score everything appended so far, as the worker does
        memories = reads.memories(conn)
        stats.memories = len(memories)
        events = plan(memories, reads.decayed_until(conn), clock, thresholds, stats)
        results = SqliteEventStore(conn).append_many(events)
    stats.events_written = sum(r.created for r in results)
    return stats

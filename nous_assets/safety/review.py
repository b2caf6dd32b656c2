"""Held for review: the guard's verdicts kept where ``nous review`` can list them, and the user's answers.

:func:`refresh_holds` runs before every packet build. It classifies the memories created or changed
since its last run (a checkpoint per :data:`~nous_assets.safety.guard.GUARD_VERSION`, so new rules
re-check everything) and records each flagged one as ``held`` — or ``approved`` when the user approved
that exact content (the approval names the content's hash: a later rewording is checked afresh).

The user's answers are events, like every other change of a memory (spec: ``/nous:review``, source
``user_review``): :func:`approve` appends ``LearningValidated`` with a ``review`` payload, :func:`reject`
appends ``LearningArchived`` with the reason (a tombstone). Both are idempotent: a repeated answer
finds its idempotency key and writes nothing.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from nous_assets.safety.guard import GUARD_VERSION, Verdict, classify
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log import event_history
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.reads import holds, observations
from nous_assets.store.search import memory_search
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import get_checkpoint, project, set_checkpoint
from nous_assets.timeutil import now_iso

REVIEW_SESSION = "nous-review"
CHECKPOINT = f"memory_holds:{GUARD_VERSION}"


class ReviewError(LookupError):
    """The memory cannot be reviewed as asked (unknown id, nothing to approve)."""


@dataclass
class RefreshStats:
    checked: int = 0
    held: int = 0
    approved: int = 0
    released: int = 0
    projects: set[str] = field(default_factory=set)  # whose packets a changed verdict affects
    global_changed: bool = False


@dataclass(frozen=True)
class ReviewOutcome:
    memory_id: int
    action: str  # approved | rejected
    created: bool  # False: the same answer was already recorded
    event_id: int | None
    reason: str


def content_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _touch(stats: RefreshStats, project_id: str, scope: str) -> None:
    stats.projects.add(project_id)
    stats.global_changed = stats.global_changed or scope == "global"


def refresh_holds(conn: Connection) -> RefreshStats:
    """Bring ``memory_holds`` up to date with the memories (one transaction; cheap when nothing changed)."""
    stats = RefreshStats()
    now = now_iso()
    with atomic(conn):
        since = get_checkpoint(conn, CHECKPOINT)
        upper = holds.newest_memory_event(conn)
        changed = holds.memories_changed_since(conn, since, upper) if upper > since else []
        verdicts = {m.memory_id: classify(m.content) for m in changed}
        flagged = [m for m in changed if verdicts[m.memory_id].held]
        approvals = holds.approved_hashes(conn, [m.learning_id for m in flagged])
        before = holds.current(conn, [m.memory_id for m in changed])
        rows: list[holds.Hold] = []
        for m in flagged:
            verdict: Verdict = verdicts[m.memory_id]
            digest = content_sha256(m.content)
            status = holds.APPROVED if digest in approvals.get(m.learning_id, ()) else holds.HELD
            rows.append(
                holds.Hold(m.memory_id, m.learning_id, m.project_id, m.scope, status, verdict.reason,
                           [f.as_dict() for f in verdict.findings], digest, GUARD_VERSION, now)  # fmt: skip
            )
            if before.get(m.memory_id, (None,))[0] != status:
                _touch(stats, m.project_id, m.scope)
            stats.held += status == holds.HELD
            stats.approved += status == holds.APPROVED
        released = [m.memory_id for m in changed if not verdicts[m.memory_id].held and m.memory_id in before]
        for memory_id in released:
            _, project_id, scope = before[memory_id]
            _touch(stats, project_id, scope)
        holds.save(conn, rows, released)
        for project_id, scope in holds.prune(conn):
            _touch(stats, project_id, scope)
        stats.checked = len(changed)
        stats.released = len(released)
        set_checkpoint(conn, upper, CHECKPOINT)
    return stats


def _memory(conn: Connection, memory_id: int):
    return memory_search.brief(conn, memory_id)


def _archived_earlier(conn: Connection, memory_id: int) -> str | None:
    """The reason a memory that is no longer in the projection was archived (None: it never existed)."""
    return event_history.archive_reason(conn, memory_id)


def approve(conn: Connection, memory_id: int, *, policy: Policy | None = None) -> ReviewOutcome:
    """Approve a held memory: it may be injected again (still framed as a note) while its text is unchanged."""
    refresh_holds(conn)
    memory = _memory(conn, memory_id)
    if memory is None:
        raise ReviewError(f"no memory #{memory_id} in the current projection")
    hold = holds.get(conn, memory_id)
    if hold is None:
        raise ReviewError(f"memory #{memory_id} is not held for review; there is nothing to approve")
    digest = content_sha256(memory["content"])
    key = hashlib.sha256(f"review:approve:{memory['learning_id']}:{digest}".encode()).hexdigest()
    payload = {
        "review": {
            "decision": "approved",
            "content_sha256": digest,
            "guard_version": GUARD_VERSION,
            "categories": sorted({f["category"] for f in hold.findings if not f["warning"]}),
            "reason": hold.reason,
        }
    }
    event = LearningEvent("LearningValidated", memory["learning_id"], payload, REVIEW_SESSION,
                          memory["project_id"], "user_review", key)  # fmt: skip
    result = SqliteEventStore(conn).append(event)
    project(conn, policy=policy)
    refresh_holds(conn)
    return ReviewOutcome(memory_id, "approved", result.created, result.event.event_id, hold.reason)


def reject(
    conn: Connection, memory_id: int, reason: str | None = None, *, policy: Policy | None = None
) -> ReviewOutcome:
    """Reject a memory (held or not): a ``LearningArchived`` tombstone with the reason; it is never injected."""
    refresh_holds(conn)
    memory = _memory(conn, memory_id)
    if memory is None:
        earlier = _archived_earlier(conn, memory_id)
        if earlier is None:
            raise ReviewError(f"no memory #{memory_id}")
        return ReviewOutcome(memory_id, "rejected", False, None, earlier)
    hold = holds.get(conn, memory_id)
    why = " ".join((reason or "").split()) or (hold.reason if hold else "rejected by the user")
    key = hashlib.sha256(f"review:reject:{memory['learning_id']}".encode()).hexdigest()
    payload = {
        "reason": f"rejected in review: {why}",
        "review": {"decision": "rejected", "content_sha256": content_sha256(memory["content"]),
                   "guard_version": GUARD_VERSION, "held": hold is not None and hold.status == holds.HELD},
    }  # fmt: skip
    event = LearningEvent("LearningArchived", memory["learning_id"], payload, REVIEW_SESSION,
                          memory["project_id"], "user_review", key)  # fmt: skip
    result = SqliteEventStore(conn).append(event)
    project(conn, policy=policy)
    refresh_holds(conn)
    return ReviewOutcome(memory_id, "rejected", result.created, result.event.event_id, payload["reason"])


def validate(conn: Connection, memory_id: int, *, policy: Policy | None = None) -> ReviewOutcome:
    """Confirm a memory as it stands (a contradiction or re-learning flag answered "this one is right"):
    ``LearningValidated`` with a ``review`` payload, bound to the content's hash."""
    memory = _memory(conn, memory_id)
    if memory is None:
        raise ReviewError(f"no memory #{memory_id} in the current projection")
    digest = content_sha256(memory["content"])
    key = hashlib.sha256(f"review:validate:{memory['learning_id']}:{digest}".encode()).hexdigest()
    payload = {"review": {"decision": "validated", "content_sha256": digest}}
    event = LearningEvent("LearningValidated", memory["learning_id"], payload, REVIEW_SESSION,
                          memory["project_id"], "user_review", key)  # fmt: skip
    result = SqliteEventStore(conn).append(event)
    project(conn, policy=policy)
    return ReviewOutcome(memory_id, "validated", result.created, result.event.event_id, "confirmed in review")


def supersede(conn: Connection, memory_id: int, by_id: int, *, policy: Policy | None = None) -> ReviewOutcome:
    """Close ``memory_id``'s validity in favour of ``by_id`` (a contradiction resolved by the user): a
    ``LearningSuperseded`` with source user_review, valid until the newer memory's ``valid_from`` when that is
    later than the old one's (else now)."""
    if memory_id == by_id:
        raise ReviewError("a memory cannot supersede itself")
    old, new = _memory(conn, memory_id), _memory(conn, by_id)
    for ref, row in ((memory_id, old), (by_id, new)):
        if row is None:
            raise ReviewError(f"no memory #{ref} in the current projection")
    assert old is not None and new is not None
    until = observations.valid_from(conn, by_id)
    start = observations.valid_from(conn, memory_id)
    if until is None or (start is not None and until < start):
        until = None  # the projection closes it at the event's transaction time
    key = hashlib.sha256(f"review:supersede:{old['learning_id']}:{new['learning_id']}".encode()).hexdigest()
    payload = {"superseded_by": new["learning_id"], "reason": f"superseded in review by #{by_id}",
               "review": {"decision": "superseded", "by_memory": by_id}}  # fmt: skip
    event = LearningEvent("LearningSuperseded", old["learning_id"], payload, REVIEW_SESSION, old["project_id"],
                          "user_review", key, valid_until=until)  # fmt: skip
    result = SqliteEventStore(conn).append(event)
    project(conn, policy=policy)
    return ReviewOutcome(memory_id, "superseded", result.created, result.event.event_id, payload["reason"])

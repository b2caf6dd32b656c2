"""The reinforcement loop: injected memories + what happened in the session -> events.

Spec "Reinforcement Loop": a memory injected into a session that then went well is reinforced
(+0.1); one injected into a session where the user corrected something it is about is weakened
(-0.2); a memory the session never touched changes nothing. "Touched" and "about" are judged by
concept overlap with the session's later turns and corrections. Explicit ``nous feedback`` goes
through :func:`feedback_event`. Every outcome is evaluated once (``access_log.was_useful`` is set),
and its event key derives from the access row, so re-running never double-counts.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from nous_assets.settings import Thresholds
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent, StoredEvent
from nous_assets.store.reads import access_log
from nous_assets.store.search.memory_lookup import learning_of, memory_concepts
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso

SIGNALS = ("useful", "corrected", "ignored")
_WORD = re.compile(r"[a-z][a-z0-9_.+#-]{1,}")


@dataclass
class OutcomeStats:
    evaluated: int = 0
    reinforced: int = 0
    weakened: int = 0
    untouched: int = 0
    spooled: int = 0


def ingest_access_spool(conn: Connection, spool: Path) -> int:
    """Move access records the hook could not write (db busy) from its spool file into access_log."""
    if not spool.exists():
        return 0
    work = spool.with_suffix(".ingesting")
    spool.replace(work)
    rows = []
    for line in work.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            rec = json.loads(line)
            for mid in rec["memory_ids"]:
                rows.append(
                    (
                        int(mid),
                        str(rec["session_id"]),
                        rec.get("project_id"),
                        rec.get("source", "hook"),
                        str(rec["accessed_at"]),
                    )
                )
        except (ValueError, KeyError, TypeError):
            continue  # a torn line from a killed hook: nothing to recover
    with atomic(conn):
        access_log.insert_accesses(conn, rows)
    work.unlink()
    return len(rows)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def evaluate_sessions(
    conn: Connection, session_texts: dict[str, str], corrections: dict[str, str], thresholds: Thresholds | None = None
) -> OutcomeStats:
    """Judge pending accesses for the sessions whose later turns are known.

    ``session_texts``: session id -> the text of its turns (what the session talked about);
    ``corrections``: session id -> the text of user corrections in it.
    """
    t = thresholds or Thresholds()
    stats = OutcomeStats()
    if not session_texts:
        return stats
    pending = access_log.pending_accesses(conn, sorted(session_texts))
    events, verdicts = [], []
    for access_id, memory_id, session, learning_id, project in pending:
        concepts = memory_concepts(conn, memory_id)
        terms = set().union(*(_words(c) for c in concepts)) if concepts else set()
        touched = len(terms & _words(session_texts[session])) >= 2
        corrected = touched and len(terms & _words(corrections.get(session, ""))) >= 2
        stats.evaluated += 1
        if not touched:
            stats.untouched += 1
            verdicts.append((0, access_id))
            continue
        kind, delta = ("LearningWeakened", t.weaken_delta) if corrected else ("LearningReinforced", t.reinforce_delta)
        stats.weakened += corrected
        stats.reinforced += not corrected
        verdicts.append((0 if corrected else 1, access_id))
        key = hashlib.sha256(f"outcome:{access_id}:{memory_id}:{session}".encode()).hexdigest()
        events.append(
            LearningEvent(
                kind,
                learning_id,
                {"reinforcement_delta": delta, "reason": "session_outcome", "session": session},
                session,
                project,
                "fs_reconcile",
                key,
            )
        )
    with atomic(conn):
        SqliteEventStore(conn).append_many(events)
        access_log.record_verdicts(conn, verdicts)
    return stats


def feedback_event(
    conn: Connection,
    memory_id: int,
    signal: str,
    *,
    session_id: str | None = None,
    thresholds: Thresholds | None = None,
) -> StoredEvent | None:
    """``nous feedback``: useful -> Reinforced, corrected -> Weakened, ignored -> no event (logged only)."""
    if signal not in SIGNALS:
        raise ValueError(f"signal must be one of {', '.join(SIGNALS)}, got {signal!r}")
    t = thresholds or Thresholds()
    row = learning_of(conn, memory_id)
    if row is None:
        raise LookupError(f"no memory #{memory_id} in the current projection")
    learning_id, project = row
    session = session_id or "user-feedback"
    now = now_iso()
    with atomic(conn):
        access_log.record_rating(conn, memory_id, session, project, signal == "useful", now)
        if signal == "ignored":
            return None
        kind, delta = (
            ("LearningReinforced", t.reinforce_delta) if signal == "useful" else ("LearningWeakened", t.weaken_delta)
        )
        # one vote per memory, signal and session; without a session every call counts
        key = hashlib.sha256(f"feedback:{memory_id}:{signal}:{session_id or now}".encode()).hexdigest()
        event = LearningEvent(
            kind,
            learning_id,
            {"reinforcement_delta": delta, "reason": f"feedback:{signal}"},
            session,
            project,
            "user_review",
            key,
        )
        return SqliteEventStore(conn).append(event).event

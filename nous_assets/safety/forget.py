"""``nous forget``: the user removes a memory for good, as an event.

A forgotten memory gets a tombstone like a rejected one (``LearningArchived``, source ``user_review``; the log
is append-only, so the event is the removal and a replay removes it again). Its reason starts with
:data:`FORGOTTEN` and its payload records what was forgotten (the content's hash, never the text) and the query
that named it (redacted). The idempotency key is the learning's, so forgetting twice writes nothing the second
time; a memory already archived is reported, not archived again. The projection applies the tombstone at the
next ``memories`` step, which the CLI runs at once (:mod:`nous_assets.defs.corrections`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from nous_assets.safety.review import REVIEW_SESSION, content_sha256
from nous_assets.store.db import Connection
from nous_assets.store.log import event_history
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.search import memory_match, memory_search
from nous_assets.store.sqlite.events import SqliteEventStore

FORGOTTEN = "forgotten by the user"
MAX_MATCHES = 100  # a query naming more than this is too broad to confirm line by line


class ForgetError(Exception):
    """A target that cannot be forgotten (no such memory, a query too broad or empty); one line for the CLI."""


@dataclass(frozen=True)
class Target:
    """A current memory to forget."""

    memory_id: int
    learning_id: str
    project_id: str
    content: str


@dataclass(frozen=True)
class Outcome:
    memory_id: int
    created: bool  # False: the same tombstone was already in the log
    event_id: int | None


def by_id(conn: Connection, memory_id: int) -> Target | None:
    """The current memory ``memory_id``; None when it was already archived (see :func:`archived_reason`).
    Raises :class:`ForgetError` when there never was one."""
    row = memory_search.brief(conn, memory_id)
    if row is not None:
        return Target(int(row["id"]), row["learning_id"], row["project_id"], row["content"])
    if event_history.archive_reason(conn, memory_id) is None:
        raise ForgetError(f"no memory #{memory_id}")
    return None


def archived_reason(conn: Connection, memory_id: int) -> str:
    """Why a memory no longer in the projection went ("archived" when the tombstone gave no reason)."""
    return event_history.archive_reason(conn, memory_id) or "archived"


def by_query(conn: Connection, query: str, project_id: str | None = None) -> list[Target]:
    """Current memories whose content contains every word of ``query``
    (see :mod:`nous_assets.store.search.memory_match`)."""
    words = query.split()
    if not words:
        raise ForgetError("`nous forget` needs a memory #id or the words of the memories to forget")
    ids = memory_match.containing(conn, words, project_id, MAX_MATCHES + 1)
    if len(ids) > MAX_MATCHES:
        raise ForgetError(f"{query!r} matches more than {MAX_MATCHES} memories; use more words or --project")
    targets = []
    for memory_id in ids:
        row = memory_search.brief(conn, memory_id)
        if row is not None:
            targets.append(Target(int(row["id"]), row["learning_id"], row["project_id"], row["content"]))
    return targets


def forget(conn: Connection, targets: list[Target], query: str | None = None) -> list[Outcome]:
    """Append one tombstone per target, all in one transaction (idempotent: a repeat writes nothing)."""
    from nous_assets.capture.redact import redact

    named = redact(" ".join(query.split()))[:200] if query else None
    events = []
    for t in targets:
        key = hashlib.sha256(f"forget:{t.learning_id}".encode()).hexdigest()
        payload = {
            "reason": FORGOTTEN + (f" (nous forget {named!r})" if named else f" (nous forget #{t.memory_id})"),
            "forget": {"content_sha256": content_sha256(t.content), "query": named},
        }
        events.append(LearningEvent("LearningArchived", t.learning_id, payload, REVIEW_SESSION, t.project_id,
                                    "user_review", key))  # fmt: skip
    results = SqliteEventStore(conn).append_many(events)  # one transaction: every tombstone lands, or none
    return [Outcome(t.memory_id, r.created, r.event.event_id) for t, r in zip(targets, results, strict=True)]

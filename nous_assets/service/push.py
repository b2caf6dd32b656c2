"""``nous push``: send the local event log to ``nous serve`` — at-least-once, effectively-once, resumable.

Events are read from the local ``cortex.db`` after the push cursor (:mod:`nous_assets.store.log.push_cursor`)
in ``event_id`` order and sent in batches to Backfill with their own idempotency keys. The cursor moves
only after the server answered for the whole batch, so a crash or a server that goes away resends at most
that batch, which the server's keys turn into no-ops: nothing is lost, nothing is written twice. An event
the server refuses (its reason comes back per item) is quarantined in ``push-rejected.jsonl`` under the
data dir with the reason, and the push goes on: retrying it would never succeed. An answer that does not account
for exactly the events sent, by their keys, in the contract's shape, stops the push with one line, cursor unmoved.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nous_assets.service.client import Client, one_line
from nous_assets.store.db import Connection
from nous_assets.store.log import push_cursor
from nous_assets.store.log.events import StoredEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso


@dataclass
class PushReport:
    batches: int = 0
    sent: int = 0
    created: int = 0
    duplicates: int = 0
    rejected: int = 0
    cursor: int = 0
    finished: bool = False  # False when --max-batches stopped it before the end of the log


def whoami(client: Client) -> dict[str, Any]:
    """The tenant and client the token speaks for (also checks the token before any data is sent)."""
    from nous_assets.service.models import WhoAmIResponse

    return client.call("/v1/whoami", {}, WhoAmIResponse).model_dump()


def identity_of(me: dict[str, Any], verb: str, source: str, project_id: str | None = None) -> dict[str, Any]:
    """The identity envelope of one ``nous push`` / ``nous pull`` run, for the token's own tenant and client."""
    return {"project_id": project_id or "*", "session_id": f"{verb}:{now_iso()}", "client_id": me["client_id"],
            "event_source": source, "tenant_id": me["tenant_id"]}  # fmt: skip


def target(client: Client, me: dict[str, Any]) -> str:
    """The cursor's name: one per server and tenant (another server, or tenant, starts from the beginning)."""
    return f"{client.url}#{me['tenant_id']}"


def _item(event: StoredEvent) -> dict[str, Any]:
    return {
        "idempotency": {"idempotency_key": event.idempotency_key, "schema_version": event.schema_version},
        "event": {
            "event_type": event.event_type, "learning_id": event.learning_id, "payload": event.payload,
            "valid_from": event.valid_from, "valid_until": event.valid_until,
            "vector_clock": event.vector_clock or None, "transaction_time": event.transaction_time,
            "project_id": event.project_id, "session_id": event.session_id, "source": event.source,
        },
    }  # fmt: skip


def _quarantine(path: Path, event: StoredEvent, reason: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    record = {"at": now_iso(), "event_id": event.event_id, "idempotency_key": event.idempotency_key, "reason": reason}
    with path.open("a", encoding="utf-8") as out:
        out.write(json.dumps(record, ensure_ascii=False) + "\n")


def _acknowledged(client: Client, batch: list[StoredEvent], identity: dict[str, Any]) -> list[Any]:
    """The server's result for each event of ``batch``, in order. The cursor moves on these, so an answer that
    does not account for exactly these events, by their keys, is refused rather than believed."""
    from nous_assets.service.models import BackfillResponse

    answer = client.call("/v1/backfill", {"identity": identity, "events": [_item(e) for e in batch]}, BackfillResponse)
    keys = [r.idempotency_key for r in answer.events]
    if keys != [e.idempotency_key for e in batch]:
        raise client.error("/v1/backfill", f"{len(keys)} results that are not the {len(batch)} events sent, in order")
    return answer.events


def push(
    conn: Connection,
    client: Client,
    *,
    batch_size: int,
    rejected_path: Path,
    max_batches: int | None = None,
    progress: Callable[[PushReport], None] | None = None,
) -> PushReport:
    """Send every event after the cursor; see the module doc. Raises the client's errors (cursor unmoved)."""
    me = whoami(client)
    name = target(client, me)
    report = PushReport(cursor=push_cursor.get(conn, name))
    identity = identity_of(me, "push", "historical_backfill")
    store = SqliteEventStore(conn)
    while max_batches is None or report.batches < max_batches:
        batch = store.page(report.cursor, store.last_event_id(), batch_size)
        if not batch:
            report.finished = True
            break
        results = _acknowledged(client, batch, identity)
        for event, result in zip(batch, results, strict=True):
            if result.error:
                report.rejected += 1
                _quarantine(rejected_path, event, one_line(result.error, 1000))  # the server's words, bounded
            elif result.created:
                report.created += 1
            else:
                report.duplicates += 1
        report.sent += len(batch)
        report.batches += 1
        report.cursor = push_cursor.advance(conn, name, batch[-1].event_id)  # only after the server answered
        if progress:
            progress(report)
    return report

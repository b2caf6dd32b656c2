"""The immutable ``learning_events`` log: validation, idempotent append, ordered replay.

Every producer (watch, reconcile, backfill, user review, migration) writes through an ``EventStore``
(:class:`nous_assets.store.sqlite.events.SqliteEventStore`, :class:`nous_assets.store.pg.events.PgEventStore`);
this module is what both share: the event types, validation and the batch plan. An invalid event raises
:class:`InvalidEventError` naming what is wrong and nothing is written; a repeated ``idempotency_key``
returns the stored event and writes nothing, which turns at-least-once delivery into effectively-once mutation.
"""

from __future__ import annotations

import json
import math
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

import orjson

from nous_assets import clocks
from nous_assets.errors import InvalidEventError
from nous_assets.status import STATUSES
from nous_assets.timeutil import normalize_time, now_iso

EVENT_TYPES = (
    "LearningExtracted",
    "LearningValidated",
    "LearningReinforced",
    "LearningWeakened",
    "LearningContradicted",
    "LearningSuperseded",
    "LearningArchived",
)
SOURCES = ("fs_watch", "fs_reconcile", "historical_backfill", "user_review", "agent")  # agent: MCP remember (021)
SUPPORTED_SCHEMA_VERSIONS = (1, 2)
CURRENT_SCHEMA_VERSION = 2
REL_TYPES = ("relates_to", "supersedes", "contradicts", "depends_on")
MEMORY_TYPES = ("learning", "knowledge")
SCOPES = ("project", "global")
TEMPORAL_CONFIDENCE = ("low", "medium", "high")
OPEN_VALIDITY = ("unknown", "current")

REQUIRED_PAYLOAD_KEYS: dict[str, frozenset[str]] = {
    "LearningExtracted": frozenset({"content", "extractor_version"}),
    "LearningValidated": frozenset(),
    "LearningReinforced": frozenset({"reinforcement_delta"}),
    "LearningWeakened": frozenset({"reinforcement_delta"}),
    "LearningContradicted": frozenset({"contradicted_with", "contradiction_multiplier"}),
    "LearningSuperseded": frozenset({"superseded_by"}),
    "LearningArchived": frozenset({"reason"}),
}
EXTRACTED_V2_KEYS = ("concepts", "edges")
MAX_CONCEPTS = 64
MAX_EVIDENCE = 16
MAX_KEY_LENGTH = 512


@dataclass(frozen=True)
class LearningEvent:
    """An event as a producer hands it in (before the store assigns id and time)."""

    event_type: str
    learning_id: str
    payload: Mapping[str, Any]
    session_id: str
    project_id: str
    source: str
    idempotency_key: str
    schema_version: int = CURRENT_SCHEMA_VERSION
    valid_from: str | None = None
    valid_until: str | None = None
    vector_clock: Mapping[str, int] | str | None = None
    parent_event_id: int | None = None
    transaction_time: str | None = None
    event_uuid: str | None = None


class StoredEvent(NamedTuple):
    """An event as persisted: canonical times, parsed payload and its ``event_id``.

    A NamedTuple rather than a frozen dataclass: replay builds a million of these, and tuple
    construction is several times cheaper than a frozen dataclass ``__init__``.
    """

    event_id: int
    event_uuid: str
    learning_id: str
    event_type: str
    idempotency_key: str
    schema_version: int
    transaction_time: str
    valid_from: str | None
    valid_until: str | None
    vector_clock_json: str | None
    payload: dict[str, Any]
    parent_event_id: int | None
    session_id: str
    project_id: str
    source: str

    @property
    def vector_clock(self) -> dict[str, int]:
        return json.loads(self.vector_clock_json) if self.vector_clock_json else {}


@dataclass(frozen=True)
class AppendResult:
    event: StoredEvent
    created: bool


def _fail(event: LearningEvent, message: str) -> InvalidEventError:
    return InvalidEventError(f"{event.event_type or '?'} event (idempotency_key={event.idempotency_key!r}): {message}")


def _require_text(event: LearningEvent, name: str, value: Any, *, max_len: int = MAX_KEY_LENGTH) -> None:
    if not isinstance(value, str) or not value.strip():
        raise _fail(event, f"{name} must be a non-empty string, got {value!r}")
    if len(value) > max_len:
        raise _fail(event, f"{name} is {len(value)} characters; at most {max_len} are allowed")


def _finite_number(value: Any) -> bool:
    return not isinstance(value, bool) and isinstance(value, (int, float)) and math.isfinite(value)


def _validate_edges(event: LearningEvent, edges: Any) -> None:
    if not isinstance(edges, list):
        raise _fail(event, f"payload.edges must be a list, got {type(edges).__name__}")
    for i, edge in enumerate(edges):
        if not isinstance(edge, dict):
            raise _fail(event, f"payload.edges[{i}] must be an object")
        target = edge.get("target_id", edge.get("target"))
        if isinstance(target, bool) or not isinstance(target, (int, str)) or target == "":
            raise _fail(event, f"payload.edges[{i}] needs target_id (memory id) or target (learning id)")
        if edge.get("rel_type") not in REL_TYPES:
            raise _fail(event, f"payload.edges[{i}].rel_type {edge.get('rel_type')!r} is not one of {REL_TYPES}")
        weight = edge.get("weight", 1.0)
        if not _finite_number(weight) or not 0 <= weight <= 1:
            raise _fail(event, f"payload.edges[{i}].weight must be a number in [0, 1], got {weight!r}")


def _validate_payload(event: LearningEvent, payload: Mapping[str, Any]) -> None:
    missing = REQUIRED_PAYLOAD_KEYS[event.event_type] - set(payload)
    if missing:
        raise _fail(event, f"missing payload keys for {event.event_type}: {sorted(missing)}")
    kind = event.event_type
    if kind == "LearningExtracted":
        if event.schema_version >= 2:
            for key in EXTRACTED_V2_KEYS:
                if key not in payload:
                    raise _fail(event, f"missing payload key for {kind} schema>=2: {key}")
        _require_text(event, "payload.content", payload["content"], max_len=20_000)
        _require_text(event, "payload.extractor_version", payload["extractor_version"])
        concepts = payload.get("concepts", [])
        if not isinstance(concepts, list) or not all(isinstance(c, str) and c.strip() for c in concepts):
            raise _fail(event, "payload.concepts must be a list of non-empty strings")
        if len(concepts) > MAX_CONCEPTS:
            raise _fail(event, f"payload.concepts has {len(concepts)} entries; at most {MAX_CONCEPTS}")
        _validate_edges(event, payload.get("edges", []))
        for key, allowed in (("type", MEMORY_TYPES), ("scope", SCOPES), ("temporal_confidence", TEMPORAL_CONFIDENCE)):
            if key in payload and payload[key] not in allowed:
                raise _fail(event, f"payload.{key} {payload[key]!r} is not one of {allowed}")
    elif kind in ("LearningReinforced", "LearningWeakened"):
        delta = payload["reinforcement_delta"]
        if not _finite_number(delta):
            raise _fail(event, f"payload.reinforcement_delta must be a finite number, got {delta!r}")
        if kind == "LearningReinforced" and delta <= 0:
            raise _fail(event, f"LearningReinforced needs a positive reinforcement_delta, got {delta}")
        if kind == "LearningWeakened" and delta >= 0:
            raise _fail(event, f"LearningWeakened needs a negative reinforcement_delta, got {delta}")
    elif kind == "LearningContradicted":
        _require_text(event, "payload.contradicted_with", payload["contradicted_with"])
        if payload["contradicted_with"] == event.learning_id:
            raise _fail(event, "a learning cannot contradict itself")
        multiplier = payload["contradiction_multiplier"]
        if not _finite_number(multiplier) or not 0 < multiplier <= 1:
            raise _fail(event, f"payload.contradiction_multiplier must be in (0, 1], got {multiplier!r}")
    elif kind == "LearningSuperseded":
        _require_text(event, "payload.superseded_by", payload["superseded_by"])
        if payload["superseded_by"] == event.learning_id:
            raise _fail(event, "a learning cannot supersede itself")
    elif kind == "LearningArchived":
        _require_text(event, "payload.reason", payload["reason"])
    if "status" in payload and payload["status"] not in STATUSES:
        raise _fail(event, f"payload.status {payload['status']!r} is not one of {STATUSES}")
    evidence = payload.get("evidence", [])
    if not isinstance(evidence, list) or not all(isinstance(e, dict) for e in evidence):
        raise _fail(event, "payload.evidence must be a list of objects")
    if len(evidence) > MAX_EVIDENCE:
        raise _fail(event, f"payload.evidence has {len(evidence)} entries; at most {MAX_EVIDENCE}")
    if "concepts" in payload and kind != "LearningExtracted":
        concepts = payload["concepts"]
        if not isinstance(concepts, list) or not all(isinstance(c, str) and c.strip() for c in concepts):
            raise _fail(event, "payload.concepts must be a list of non-empty strings")


def _validity(event: LearningEvent, name: str, value: Any) -> str | None:
    if value is None or (isinstance(value, str) and value.strip().lower() in OPEN_VALIDITY):
        return None
    try:
        return normalize_time(value)
    except ValueError as exc:
        raise _fail(event, f"{name}: {exc}") from None


def prepare(event: LearningEvent) -> dict[str, Any]:
    """Validate ``event`` and return the row to insert. Raises :class:`InvalidEventError`."""
    if event.event_type not in EVENT_TYPES:
        raise _fail(event, f"unknown event type {event.event_type!r} (expected one of {', '.join(EVENT_TYPES)})")
    if event.source not in SOURCES:
        raise _fail(event, f"unknown source {event.source!r} (expected one of {', '.join(SOURCES)})")
    if isinstance(event.schema_version, bool) or event.schema_version not in SUPPORTED_SCHEMA_VERSIONS:
        raise _fail(
            event,
            f"unsupported schema_version {event.schema_version!r} (this build supports "
            f"{SUPPORTED_SCHEMA_VERSIONS[0]}..{SUPPORTED_SCHEMA_VERSIONS[-1]})",
        )
    _require_text(event, "idempotency_key", event.idempotency_key)
    _require_text(event, "learning_id", event.learning_id)
    _require_text(event, "session_id", event.session_id)
    _require_text(event, "project_id", event.project_id)
    if not isinstance(event.payload, Mapping):
        raise _fail(event, f"payload must be a JSON object, got {type(event.payload).__name__}")
    _validate_payload(event, event.payload)
    try:
        payload_json = json.dumps(
            dict(event.payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
        )
    except (TypeError, ValueError) as exc:
        raise _fail(event, f"payload is not JSON-serialisable: {exc}") from None

    valid_from = _validity(event, "valid_from", event.valid_from)
    valid_until = _validity(event, "valid_until", event.valid_until)
    if valid_from and valid_until and valid_until < valid_from:
        raise _fail(event, f"valid_until {valid_until} is before valid_from {valid_from}")
    try:
        transaction_time = normalize_time(event.transaction_time) or now_iso()
    except ValueError as exc:
        raise _fail(event, f"transaction_time: {exc}") from None

    try:
        if isinstance(event.vector_clock, str):
            clock = clocks.parse(event.vector_clock)
        else:
            clock = clocks.validate(event.vector_clock or {})
    except clocks.ClockError as exc:
        raise _fail(event, str(exc)) from None

    event_uuid = event.event_uuid or str(uuid.uuid4())
    try:
        uuid.UUID(event_uuid)
    except (ValueError, AttributeError, TypeError):
        raise _fail(event, f"event_uuid {event_uuid!r} is not a UUID") from None
    if event.parent_event_id is not None and (
        isinstance(event.parent_event_id, bool) or not isinstance(event.parent_event_id, int)
    ):
        raise _fail(event, f"parent_event_id must be an integer event id, got {event.parent_event_id!r}")

    return {
        "event_uuid": event_uuid,
        "learning_id": event.learning_id,
        "event_type": event.event_type,
        "idempotency_key": event.idempotency_key,
        "schema_version": event.schema_version,
        "transaction_time": transaction_time,
        "valid_from": valid_from,
        "valid_until": valid_until,
        "vector_clock_json": clocks.dumps(clock) if clock else None,
        "payload_json": payload_json,
        "parent_event_id": event.parent_event_id,
        "session_id": event.session_id,
        "project_id": event.project_id,
        "source": event.source,
    }


def tuple_to_event(r: tuple) -> StoredEvent:
    """Fast path for replay: a plain ``SELECT *`` tuple (table column order matches the fields)."""
    return _make_event((*r[:10], orjson.loads(r[10]), *r[11:]))


def row_to_event(row: Any) -> StoredEvent:
    return StoredEvent(
        event_id=row["event_id"],
        event_uuid=row["event_uuid"],
        learning_id=row["learning_id"],
        event_type=row["event_type"],
        idempotency_key=row["idempotency_key"],
        schema_version=row["schema_version"],
        transaction_time=row["transaction_time"],
        valid_from=row["valid_from"],
        valid_until=row["valid_until"],
        vector_clock_json=row["vector_clock_json"],
        payload=orjson.loads(row["payload_json"]),
        parent_event_id=row["parent_event_id"],
        session_id=row["session_id"],
        project_id=row["project_id"],
        source=row["source"],
    )


_make_event = StoredEvent._make


def archived_stub(event_id: int, idempotency_key: str, learning_id: str, event_type: str) -> StoredEvent:
    """What the live log still knows of an event moved to a cold segment (``nous archive``): its identity.

    A repeated ``idempotency_key`` of such an event writes nothing, as for a live one; the caller gets
    the id and key back (the payload stays in the segment: ``nous restore`` brings it back).
    """
    return StoredEvent(event_id, "", learning_id, event_type, idempotency_key, CURRENT_SCHEMA_VERSION, "", None, None,
                       None, {}, None, "", "", "")  # fmt: skip


def plan_batch(
    events: Sequence[LearningEvent],
    rows: Sequence[dict[str, Any]],
    existing: Mapping[str, StoredEvent],
    known: set[str],
    parents: set[int],
) -> tuple[list[StoredEvent | str], dict[str, dict[str, Any]]]:
    """What an append batch does, the same on every backend: per event, the stored event its key already names
    or the key of the row this batch writes (a repeated key: the first wins); and those rows by key, in order.

    Raises InvalidEventError for an event whose learning was never extracted (``known`` grows with the batch's
    own extractions) or whose parent does not exist.
    """
    outcome: list[StoredEvent | str] = []
    fresh: dict[str, dict[str, Any]] = {}
    for event, row in zip(events, rows, strict=True):
        key = row["idempotency_key"]
        if key in existing:
            outcome.append(existing[key])
            continue
        outcome.append(key)
        if key in fresh:
            continue
        if row["event_type"] == "LearningExtracted":
            known.add(row["learning_id"])
        elif row["learning_id"] not in known:
            raise _fail(event, f"unknown learning_id {row['learning_id']!r}: no LearningExtracted for it")
        parent = row["parent_event_id"]
        if parent is not None and parent not in parents:
            raise _fail(event, f"parent_event_id {parent} does not exist")
        fresh[key] = row
    return outcome, fresh


def append_results(outcome: Sequence[StoredEvent | str], built: Mapping[str, StoredEvent]) -> list[AppendResult]:
    """:func:`plan_batch`'s outcome as results: a key's first occurrence was created, repeats and known keys not."""
    results: list[AppendResult] = []
    seen: set[str] = set()
    for item in outcome:
        if isinstance(item, StoredEvent):
            results.append(AppendResult(item, created=False))
        else:
            results.append(AppendResult(built[item], created=item not in seen))
            seen.add(item)
    return results


def replay_pages(
    page: Callable[[int, int, int], list[StoredEvent]], from_id: int, upper: int, batch_size: int
) -> Iterator[list[StoredEvent]]:
    """Pages of the events with ``from_id < event_id <= upper``, in order, ``page(after, upper, limit)`` reading
    each: how either backend's ``EventStore`` replays (pages bounded by ``upper``, so appends during a replay
    wait for the next one)."""
    last = from_id
    while last < upper:
        batch = page(last, upper, batch_size)
        if not batch:
            return
        last = batch[-1].event_id
        yield batch

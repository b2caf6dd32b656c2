"""Request and response shapes of the service API (spec "Agent-Service Interface").

Every request carries the identity envelope (:class:`Identity`); every write carries the idempotency
envelope (:class:`Idempotency`). The models refuse what the store could not take (NUL characters, text that
is not UTF-8, integers beyond 64 bits, oversized batches) so a bad request is a 422 naming the field,
never a storage error. They also are the OpenAPI schema (``/openapi.json``) the fuzz test reads.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal, get_type_hints

import orjson
from pydantic import AfterValidator, BaseModel, ConfigDict, Field, create_model

from nous_assets.store.log.events import EVENT_TYPES, SOURCES
from nous_assets.store.packet_row import CachedPacket

MAX_BATCH = 1000
MAX_INT = 2**53 - 1  # what every JSON reader keeps exact; far below SQLite's and PostgreSQL's 64 bits


def _storable(value: str) -> str:
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError("must be valid Unicode (no lone surrogates)") from None
    return value


def _json_object(value: dict[str, Any]) -> dict[str, Any]:
    try:
        orjson.dumps(value)
    except TypeError as exc:  # integers beyond 64 bits, lone surrogates
        raise ValueError(f"is not storable JSON ({exc})") from None
    return value


def Text(max_length: int = 512, min_length: int = 1) -> Any:  # noqa: N802 - reads as a type in the models
    """A non-empty string the store can keep (no NUL, valid UTF-8), at most ``max_length`` characters."""
    return Annotated[str, Field(min_length=min_length, max_length=max_length), AfterValidator(_storable)]


def _dated(value: dict[str, Any]) -> dict[str, Any]:
    """An artifact names the lake day its turns are in (``date``, YYYY-MM-DD): the extraction worker reads them from
    that partition, so an artifact without one is refused here rather than failing later in the queue."""
    if not isinstance(value.get("date"), str) or not re.fullmatch(r"\d{4}-\d{2}-\d{2}", value["date"]):
        raise ValueError("must carry 'date', the day of its turns as YYYY-MM-DD")
    return value


JsonObject = Annotated[dict[str, Any], AfterValidator(_json_object)]
ArtifactPayload = Annotated[dict[str, Any], AfterValidator(_json_object), AfterValidator(_dated)]
EventSource = Literal[SOURCES]  # type: ignore[valid-type]
EventType = Literal[EVENT_TYPES]  # type: ignore[valid-type]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Identity(Strict):
    """Who is asking: the spec's identity envelope. ``tenant_id`` is optional: the token decides it, and a
    different one is refused (403)."""

    project_id: Text()
    session_id: Text()
    client_id: Text(128)
    event_source: EventSource
    tenant_id: Text(128) | None = None


class Idempotency(Strict):
    """The spec's idempotency envelope: the same key twice is one mutation."""

    idempotency_key: Text()
    schema_version: Literal[1, 2]


class EventBody(Strict):
    """A ``LearningEvent`` as a client sends it; the server assigns ``event_id`` (the only order) and uuid.
    ``project_id``/``session_id``/``source`` default to the identity envelope's (a backfill spans sessions)."""

    event_type: EventType
    learning_id: Text()
    payload: JsonObject
    valid_from: Text(64) | None = None
    valid_until: Text(64) | None = None
    vector_clock: dict[Text(128), Annotated[int, Field(ge=0, le=MAX_INT)]] | None = None
    transaction_time: Text(64) | None = None
    project_id: Text() | None = None
    session_id: Text() | None = None
    source: EventSource | None = None


class ArtifactBody(Strict):
    """A parsed transcript artifact with its file cursor metadata (what the extraction queue takes)."""

    transcript_path: Text(4096)
    file_inode: Text(128) | None = None
    file_offset: Annotated[int, Field(ge=0, le=MAX_INT)]
    payload: ArtifactPayload
    project_id: Text() | None = None
    session_id: Text() | None = None


class StoredEventOut(BaseModel):
    event_id: int
    event_uuid: str
    learning_id: str
    event_type: str
    idempotency_key: str
    schema_version: int
    transaction_time: str
    valid_from: str | None
    valid_until: str | None
    vector_clock: dict[str, int]
    payload: dict[str, Any]
    session_id: str
    project_id: str
    source: str


class AppendEventRequest(Strict):
    identity: Identity
    idempotency: Idempotency
    event: EventBody


class AppendEventResponse(BaseModel):
    created: bool = Field(description="false: the key was known and the stored event is returned")
    event: StoredEventOut


class IngestArtifactRequest(Strict):
    identity: Identity
    idempotency: Idempotency
    artifact: ArtifactBody


class IngestArtifactResponse(BaseModel):
    created: bool
    ingest_id: int
    status: str


class FeedbackRequest(Strict):
    identity: Identity
    idempotency: Idempotency
    memory_id: Annotated[int, Field(ge=1, le=MAX_INT)]
    signal: Literal["useful", "corrected", "ignored"]
    session_outcome: Literal["success", "failure", "partial", "unknown"] | None = None


class FeedbackResponse(BaseModel):
    created: bool
    event: StoredEventOut | None = Field(description="none for 'ignored' (recorded, no score change)")


class BackfillEvent(Strict):
    idempotency: Idempotency
    event: EventBody


class BackfillArtifact(Strict):
    idempotency: Idempotency
    artifact: ArtifactBody


class BackfillRequest(Strict):
    identity: Identity
    events: Annotated[list[BackfillEvent], Field(max_length=MAX_BATCH)] = []
    artifacts: Annotated[list[BackfillArtifact], Field(max_length=MAX_BATCH)] = []


class ItemResult(BaseModel):
    idempotency_key: str
    created: bool
    id: int | None = Field(None, description="event_id of an event, ingest_id of an artifact; none if refused")
    error: str | None = Field(None, description="why this item was refused (the rest of the batch still lands)")


class BackfillResponse(BaseModel):
    events: list[ItemResult]
    artifacts: list[ItemResult]


class Fingerprint(Strict):
    """What the hook knows of the session (the resolver's fingerprint); all optional."""

    cwd: Text(4096) | None = None
    branch: Text(256) | None = None
    repository: Text(4096) | None = None
    stack: Annotated[list[Text(128)], Field(max_length=64)] = []
    terms: Annotated[list[Text(128)], Field(max_length=256)] = []


class ResolveRequest(Strict):
    identity: Identity
    fingerprint: Fingerprint = Fingerprint()


class ResolveResponse(BaseModel):
    additional_context: str = Field(description="the packet text to inject ('' when there is nothing)")
    cache_key: str | None
    scope: str | None
    memory_ids: list[int]
    interventions: list[str]


class PacketsRequest(Strict):
    identity: Identity
    project_id: Text() | None = Field(None, description="only this project's packets (default: every project)")
    after: Annotated[str, Field(max_length=1024), AfterValidator(_storable)] = ""
    limit: Annotated[int, Field(ge=1, le=500)] = 200


#: A packet on the wire: the store's row (:class:`~nous_assets.store.packet_row.CachedPacket`), its fields made from
#: that one declaration rather than declared again.
PacketOut = create_model("PacketOut", **{name: (kind, ...) for name, kind in get_type_hints(CachedPacket).items()})


class PacketsResponse(BaseModel):
    packets: list[PacketOut]
    next_after: str | None = Field(description="pass as 'after' for the next page; none after the last")


class ReplayRequest(Strict):
    identity: Identity
    mode: Literal["project", "rebuild"] = "project"


class ReplayResponse(BaseModel):
    mode: str
    checkpoint: int
    stats: dict[str, Any]


class ArchiveRequest(Strict):
    identity: Identity
    before: Text(64) = Field(description="an ISO date or an age such as 90d: events recorded earlier go cold")


class ArchiveResponse(BaseModel):
    segments: int
    events: int
    detail: str


class ErrorResponse(BaseModel):
    error: str


class WhoAmIResponse(BaseModel):
    tenant_id: str
    client_id: str
    scopes: list[str]


class HealthResponse(BaseModel):
    status: str
    backend: str

"""What each endpoint does: plain functions over one tenant's providers (no HTTP here).

A handler gets a :class:`Call` (the tenant's providers, the service store, the caller, the settings) and a
validated request model, and returns a response model or raises :class:`ServiceError` with the HTTP status
and a one-line reason. Writes follow the spec's multi-client rules: at-least-once delivery from clients,
effectively-once mutation by the store's ``idempotency_key`` constraint (a known key returns what is stored),
order by ``event_id`` only, and a receipt per key naming the client and source that delivered it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from nous_assets.errors import InvalidEventError
from nous_assets.service import models as m
from nous_assets.service.tokens import Principal
from nous_assets.settings import Settings
from nous_assets.store.backend import Backend
from nous_assets.store.log.events import AppendResult, LearningEvent, StoredEvent
from nous_assets.store.projection.memory_state import Policy
from nous_assets.store.sqlite.service_store import Receipt, ServiceStore
from nous_assets.timeutil import now_iso

GLOBAL_PROJECT = "*"


class ServiceError(Exception):
    """A request the service refuses: ``status`` (4xx/5xx) and a one-line ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = " ".join(message.split())


@dataclass
class Call:
    """One request's context: the tenant's providers (bound by the token), the service store, the caller."""

    backend: Backend
    service: ServiceStore
    principal: Principal
    settings: Settings

    @property
    def tenant_id(self) -> str:
        return self.principal.tenant_id


def check_identity(principal: Principal, identity: m.Identity) -> None:
    """The envelope must name the token's own tenant (or none) and client: a token acts for nobody else."""
    if identity.tenant_id is not None and identity.tenant_id != principal.tenant_id:
        raise ServiceError(403, f"this token belongs to tenant {principal.tenant_id!r}, not {identity.tenant_id!r}")
    if identity.client_id != principal.client_id:
        raise ServiceError(403, f"this token belongs to client {principal.client_id!r}, not {identity.client_id!r}")


def _event_out(event: StoredEvent) -> m.StoredEventOut:
    return m.StoredEventOut(
        event_id=event.event_id, event_uuid=event.event_uuid, learning_id=event.learning_id,
        event_type=event.event_type, idempotency_key=event.idempotency_key, schema_version=event.schema_version,
        transaction_time=event.transaction_time, valid_from=event.valid_from, valid_until=event.valid_until,
        vector_clock=event.vector_clock, payload=event.payload, session_id=event.session_id,
        project_id=event.project_id, source=event.source,
    )  # fmt: skip


def _learning_event(identity: m.Identity, idem: m.Idempotency, body: m.EventBody) -> LearningEvent:
    return LearningEvent(
        event_type=body.event_type, learning_id=body.learning_id, payload=body.payload,
        session_id=body.session_id or identity.session_id, project_id=body.project_id or identity.project_id,
        source=body.source or identity.event_source, idempotency_key=idem.idempotency_key,
        schema_version=idem.schema_version,
        valid_from=body.valid_from, valid_until=body.valid_until, vector_clock=body.vector_clock,
        transaction_time=body.transaction_time,
    )  # fmt: skip


def _receipt(kind: str, identity: m.Identity, key: str, project_id: str | None, session_id: str | None) -> Receipt:
    return Receipt(kind, key, identity.client_id, identity.event_source, project_id or identity.project_id,
                   session_id or identity.session_id, now_iso())  # fmt: skip


def _append(call: Call, events: list[LearningEvent]) -> list[AppendResult | InvalidEventError]:
    """Append a batch all at once; if one event is invalid, each on its own (the valid ones still land)."""
    try:
        return list(call.backend.events.append_many(events))
    except InvalidEventError as exc:
        if len(events) == 1:
            return [exc]
    results: list[AppendResult | InvalidEventError] = []
    for event in events:
        try:
            results.append(call.backend.events.append(event))
        except InvalidEventError as exc:
            results.append(exc)
    return results


def append_event(call: Call, req: m.AppendEventRequest) -> tuple[int, m.AppendEventResponse]:
    """AppendEvent: 201 with the new event, or 200 with the stored one when the key is known."""
    check_identity(call.principal, req.identity)
    event = _learning_event(req.identity, req.idempotency, req.event)
    try:
        result = call.backend.events.append(event)
    except InvalidEventError as exc:
        raise ServiceError(422, str(exc)) from None
    call.service.record_receipts(call.tenant_id, [_receipt("event", req.identity, event.idempotency_key,
                                                           event.project_id, event.session_id)])  # fmt: skip
    answer = m.AppendEventResponse(created=result.created, event=_event_out(result.event))
    return (201 if result.created else 200), answer


def _enqueue(call: Call, identity: m.Identity, idem: m.Idempotency, body: m.ArtifactBody) -> tuple:
    """Queue an artifact for extraction, where something extracts it: on a backend nothing drains (PostgreSQL,
    where team mode extracts from the developers' synced transcripts instead), 501 rather than queued forever."""
    queue = call.backend.queue
    if not call.backend.capabilities.extracts or queue is None:
        raise ServiceError(501, f"artifacts are not extracted on the {call.backend.capabilities.name} backend "
                                "(nothing drains its queue): send events, or let team mode read the transcripts")
    try:
        item, created = queue.enqueue(
            source=identity.event_source, project_id=body.project_id or identity.project_id,
            session_id=body.session_id or identity.session_id, transcript_path=body.transcript_path,
            file_inode=body.file_inode, file_offset=body.file_offset, payload=body.payload,
            idempotency_key=idem.idempotency_key,
        )  # fmt: skip
    except ValueError as exc:
        raise ServiceError(422, f"artifact {idem.idempotency_key!r}: {exc}") from None
    return item, created


def ingest_artifact(call: Call, req: m.IngestArtifactRequest) -> tuple[int, m.IngestArtifactResponse]:
    """IngestArtifact: enqueue for extraction once per key (a known key returns the queued item as it is)."""
    check_identity(call.principal, req.identity)
    item, created = _enqueue(call, req.identity, req.idempotency, req.artifact)
    call.service.record_receipts(call.tenant_id, [_receipt("artifact", req.identity, item.idempotency_key,
                                                           item.project_id, item.session_id)])  # fmt: skip
    return (201 if created else 200), m.IngestArtifactResponse(created=created, ingest_id=item.ingest_id,
                                                                status=item.status)  # fmt: skip


def feedback(call: Call, req: m.FeedbackRequest) -> tuple[int, m.FeedbackResponse]:
    """Feedback: useful reinforces, corrected weakens, ignored changes nothing (as ``nous feedback``)."""
    check_identity(call.principal, req.identity)
    learning_id, project_id = _feedback_target(call.backend, req.memory_id)
    if req.signal == "ignored":
        return 200, m.FeedbackResponse(created=False, event=None)
    t = call.settings.thresholds
    kind, delta = ("LearningReinforced", t.reinforce_delta) if req.signal == "useful" else (
        "LearningWeakened", t.weaken_delta)  # fmt: skip
    payload: dict = {"reinforcement_delta": delta, "reason": f"feedback:{req.signal}"}
    if req.session_outcome:
        payload["session_outcome"] = req.session_outcome
    event = LearningEvent(kind, learning_id, payload, req.identity.session_id, project_id,
                          req.identity.event_source, req.idempotency.idempotency_key, req.idempotency.schema_version)
    try:
        result = call.backend.events.append(event)
    except InvalidEventError as exc:
        raise ServiceError(422, str(exc)) from None
    call.service.record_receipts(call.tenant_id, [_receipt("event", req.identity, event.idempotency_key,
                                                           project_id, None)])  # fmt: skip
    return (201 if result.created else 200), m.FeedbackResponse(created=result.created, event=_event_out(result.event))


def _feedback_target(backend: Backend, memory_id: int) -> tuple[str, str]:
    """(learning id, project) of the memory feedback names: a current memory where the pipeline keeps the
    projection (SQLite); elsewhere (PostgreSQL: a team tenant is projected in the team's working database, and the
    packets it publishes name the tenant's event ids) the event that extracted it, a memory's id being that
    event's id. 404 when there is none."""
    if backend.capabilities.projected:
        memory = backend.projection.memory(memory_id)
        if memory is None:
            raise ServiceError(404, f"no memory #{memory_id} in this tenant's current projection")
        return memory.learning_id, memory.project_id
    event = backend.events.get(memory_id)
    if event is None or event.event_type != "LearningExtracted":
        raise ServiceError(404, f"no memory #{memory_id} in this tenant's log (no extraction event with that id)")
    return event.learning_id, event.project_id


def backfill(call: Call, req: m.BackfillRequest) -> m.BackfillResponse:
    """Backfill: a batch of events and artifacts, each with its own key; an invalid item is refused with its
    reason while the rest land (push quarantines the refused ones instead of retrying them forever)."""
    check_identity(call.principal, req.identity)
    events = [_learning_event(req.identity, item.idempotency, item.event) for item in req.events]
    out_events: list[m.ItemResult] = []
    receipts: list[Receipt] = []
    for event, result in zip(events, _append(call, events) if events else [], strict=True):
        if isinstance(result, InvalidEventError):
            out_events.append(m.ItemResult(idempotency_key=event.idempotency_key, created=False, error=str(result)))
            continue
        out_events.append(m.ItemResult(idempotency_key=event.idempotency_key, created=result.created,
                                       id=result.event.event_id))  # fmt: skip
        receipts.append(_receipt("event", req.identity, event.idempotency_key, event.project_id, event.session_id))
    out_artifacts: list[m.ItemResult] = []
    for item in req.artifacts:
        key = item.idempotency.idempotency_key
        try:
            queued, created = _enqueue(call, req.identity, item.idempotency, item.artifact)
        except ServiceError as exc:
            out_artifacts.append(m.ItemResult(idempotency_key=key, created=False, error=exc.message))
            continue
        out_artifacts.append(m.ItemResult(idempotency_key=key, created=created, id=queued.ingest_id))
        receipts.append(_receipt("artifact", req.identity, key, queued.project_id, queued.session_id))
    call.service.record_receipts(call.tenant_id, receipts)
    return m.BackfillResponse(events=out_events, artifacts=out_artifacts)


def _all_packets(call: Call, project_id: str) -> list:
    packets, after = [], ""
    while True:
        page = call.service.packets(call.tenant_id, project_id=project_id, after=after, limit=500)
        packets += page
        if len(page) < 500:
            return packets
        after = page[-1].cache_key


def resolve_context(call: Call, req: m.ResolveRequest) -> m.ResolveResponse:
    """ResolveContext: the precomputed packet the resolver would pick (read-only, no computation).

    The same choice as the hook (:func:`resolver.cache_read.score`): the project's best-fitting packet, else
    the newest global one; the tenant's active interventions of the project come with it.
    """
    from resolver.cache_read import _parse_row, score

    check_identity(call.principal, req.identity)
    fingerprint = req.fingerprint.model_dump(exclude_none=True)
    best: tuple | None = None
    for scope_project in dict.fromkeys((req.identity.project_id, GLOBAL_PROJECT)):  # once each, in order
        for p in _all_packets(call, scope_project):
            parsed = _parse_row(p.fingerprint_json, p.packet_text, p.memory_ids_json)
            if parsed is None:
                continue
            is_project = p.scope == "project" and p.project_id == req.identity.project_id
            rank = (1 if is_project else 0, score(fingerprint, parsed[0]) if is_project else 0.0, p.created_at,
                    p.cache_key)  # fmt: skip
            if best is None or rank > best[0]:
                best = (rank, p, parsed[1])
    interventions = [a.payload_text for a in call.backend.interventions.resolve(now_iso(), req.identity.project_id)]
    if best is None:
        return m.ResolveResponse(additional_context="", cache_key=None, scope=None, memory_ids=[],
                                 interventions=interventions)  # fmt: skip
    _, packet, memory_ids = best
    return m.ResolveResponse(additional_context=packet.packet_text, cache_key=packet.cache_key, scope=packet.scope,
                             memory_ids=memory_ids, interventions=interventions)  # fmt: skip


def packets(call: Call, req: m.PacketsRequest) -> m.PacketsResponse:
    """The tenant's precomputed packets, a page at a time in key order (what ``nous pull`` copies)."""
    check_identity(call.principal, req.identity)
    page = call.service.packets(call.tenant_id, project_id=req.project_id, after=req.after, limit=req.limit)
    rows = [m.PacketOut(**dataclasses.asdict(p)) for p in page]
    return m.PacketsResponse(packets=rows, next_after=rows[-1].cache_key if len(rows) == req.limit else None)


def require_ops(principal: Principal) -> None:
    if "ops" not in principal.scopes:
        raise ServiceError(403, "this endpoint needs a token with the ops scope (nous serve token create --ops)")


def replay(call: Call, req: m.ReplayRequest) -> m.ReplayResponse:
    """Replay: bring the projection up to date (``project``) or rebuild it from the whole log (``rebuild``)."""
    check_identity(call.principal, req.identity)
    require_ops(call.principal)
    policy = Policy.of(call.settings.thresholds)
    projection = call.backend.projection
    stats = projection.rebuild(policy=policy) if req.mode == "rebuild" else projection.project(policy=policy)
    return m.ReplayResponse(mode=req.mode, checkpoint=projection.checkpoint(), stats=dataclasses.asdict(stats))


def archive(call: Call, req: m.ArchiveRequest) -> m.ArchiveResponse:
    """Archive: move events recorded before the cutoff to cold segments (``nous archive``); SQLite only."""
    check_identity(call.principal, req.identity)
    require_ops(call.principal)
    conn = call.backend.local_db
    if not call.backend.capabilities.archive or conn is None:
        raise ServiceError(501, "archive is not built for the PostgreSQL backend yet (cold tier is SQLite-only)")
    from nous_assets.lifecycle import archive as lifecycle

    try:
        cutoff = lifecycle.parse_cutoff(req.before)
    except (ValueError, OverflowError, lifecycle.ArchiveError) as exc:
        raise ServiceError(422, f"before: {exc}") from None
    settings = call.settings
    call.backend.projection.project(policy=Policy.of(settings.thresholds))
    report = lifecycle.archive(conn, settings.archive_dir, cutoff, scratch_dir=settings.db_path.parent)
    return m.ArchiveResponse(segments=len(report.segments), events=report.events,
                             detail=f"{report.events} events recorded before {cutoff} moved to cold segments")

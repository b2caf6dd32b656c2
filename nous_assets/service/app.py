"""The HTTP wiring of ``nous serve``: routes, bearer auth, the body size limit, one-line errors, OpenAPI.

FastAPI builds the OpenAPI document from the request models (``/openapi.json``, no auth, so tools and the
fuzz test can read it). Every other route but ``/health`` needs a live token; the token decides the tenant
and the providers are bound to it, so no request can name its way into another tenant's rows. Errors are
``{"error": "one line"}``: 401 no/unknown token, 403 another tenant or client, 404, 413 body too large,
422 invalid request, 501 not built on this backend, 503 storage unavailable; never a traceback.
"""

# no `from __future__ import annotations`: FastAPI reads the route and dependency annotations at runtime
import logging
import threading
import time
from collections.abc import Callable
from typing import Annotated, Any

from fastapi import Depends, FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
from starlette.exceptions import HTTPException as StarletteHTTPException

from nous_assets.errors import InvalidEventError, NousError
from nous_assets.service import handlers as h
from nous_assets.service import models as m
from nous_assets.service import tokens
from nous_assets.service.pool import BackendPool
from nous_assets.settings import Settings

log = logging.getLogger("nous_assets.service")
TOKEN_CACHE_SECONDS = 5.0  # how long a checked token is trusted without a lookup (also a revocation's delay)
API_VERSION = "1"

_ERRORS: dict[int | str, dict[str, Any]] = {
    code: {"model": m.ErrorResponse, "description": text}
    for code, text in (
        (400, "the body is not JSON (or not UTF-8), or a header is malformed"),
        (401, "no token, or not a live one"),
        (403, "the envelope names another tenant or client, or the token lacks a scope"),
        (404, "not found in this tenant"),
        (413, "request body over the size limit"),
        (422, "invalid request (one line naming the field)"),
        (501, "not built on this backend"),
        (503, "storage unavailable"),
    )
}


class BodyLimit:
    """ASGI middleware: a body over ``limit`` bytes (declared or streamed) is answered 413, never read on."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app, self.limit = app, limit

    async def __call__(self, scope: dict, receive: Callable, send: Callable) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        declared = dict(scope.get("headers") or []).get(b"content-length")
        if declared is not None:
            if not declared.isdigit():
                await _reply(send, 400, "Content-Length is not a number")
                return
            if int(declared) > self.limit:
                await _reply(send, 413, f"request body of {int(declared):,} bytes is over the {self.limit:,} limit")
                return
        body = bytearray()
        more = True
        while more:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            body += message.get("body", b"")
            more = message.get("more_body", False)
            if len(body) > self.limit:
                await _reply(send, 413, f"request body is over the {self.limit:,} byte limit")
                return
        sent = False

        async def replay() -> dict:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": bytes(body), "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


async def _reply(send: Callable, status: int, message: str) -> None:
    response = JSONResponse({"error": message}, status_code=status)
    await send({"type": "http.response.start", "status": status, "headers": response.raw_headers})
    await send({"type": "http.response.body", "body": response.body})


class TokenCache:
    """Tokens checked in the last few seconds (a load of small requests needs no lookup each)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._seen: dict[str, tuple[tokens.Principal, float]] = {}
        self._lock = threading.Lock()

    def get(self, token: str) -> tokens.Principal | None:
        with self._lock:
            hit = self._seen.get(token)
        return hit[0] if hit and hit[1] > time.monotonic() else None

    def put(self, token: str, principal: tokens.Principal) -> None:
        with self._lock:
            if len(self._seen) > 10_000:
                self._seen.clear()
            self._seen[token] = (principal, time.monotonic() + self.seconds)


def _server_gone(exc: BaseException) -> bool:
    """A PostgreSQL server that went away or refused the connection (not a bug in a query)."""
    if not type(exc).__module__.startswith("psycopg"):
        return False
    import psycopg

    return isinstance(exc, psycopg.OperationalError | psycopg.InterfaceError)


def _not_json(exc: RequestValidationError) -> bool:
    """The body could not be read as JSON at all (a 400), rather than JSON of the wrong shape (a 422)."""
    return any(e.get("type") == "json_invalid" for e in exc.errors())


def _one_line(exc: RequestValidationError) -> str:
    errors = exc.errors()
    if not errors:
        return "invalid request"
    if _not_json(exc):
        first = next(e for e in exc.errors() if e.get("type") == "json_invalid")
        reason = (first.get("ctx") or {}).get("error") or first.get("msg", "")
        return " ".join(f"the body is not JSON: {reason}".split())[:500]
    first = errors[0]
    where = ".".join(str(p) for p in first.get("loc", ()) if p != "body") or "body"
    more = f" (and {len(errors) - 1} more)" if len(errors) > 1 else ""
    return " ".join(f"{where}: {first.get('msg', 'invalid')}{more}".split())[:500]


def create_app(
    settings: Settings, pool: BackendPool | None = None, *, token_cache_seconds: float = TOKEN_CACHE_SECONDS
) -> FastAPI:
    """The service over the configured backend (``pool`` opens it when not given)."""
    pool = pool or BackendPool(settings)
    cache = TokenCache(token_cache_seconds)
    app = FastAPI(
        title="Nous service",
        version=API_VERSION,
        description="The Agent-Service Interface of Nous: context for the hook path, idempotent writes for the "
        "background plane. Every route but /health needs `Authorization: Bearer <token>` (nous serve token create).",
        docs_url=None,
        redoc_url=None,
    )
    app.state.pool = pool
    bearer = HTTPBearer(auto_error=False, description="a token from `nous serve token create`")

    def principal(credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(bearer)]) -> tokens.Principal:
        if credentials is None or credentials.scheme.lower() != "bearer":
            raise h.ServiceError(401, "this endpoint needs Authorization: Bearer <token> (nous serve token create)")
        token = credentials.credentials
        found = cache.get(token)
        if found is None:
            with pool.service_store() as store:
                found = tokens.verify(store, token)
            if found is None:
                raise h.ServiceError(401, "the token is not a live token of this server")
            cache.put(token, found)
        if pool.capabilities.one_tenant and found.tenant_id != settings.tenant_id:
            raise h.ServiceError(403, f"this server's cortex.db holds tenant {settings.tenant_id!r} only")
        return found

    def run(who: tokens.Principal, handler: Callable, request: Any) -> Any:
        with pool.backend(who.tenant_id) as (backend, service):
            result = handler(h.Call(backend, service, who, settings), request)
        if isinstance(result, tuple):
            status, body = result
            return JSONResponse(body.model_dump(mode="json"), status_code=status)
        return result

    @app.exception_handler(h.ServiceError)
    async def _service_error(request: Request, exc: h.ServiceError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if exc.status == 401 else None
        return JSONResponse({"error": exc.message}, status_code=exc.status, headers=headers)

    @app.exception_handler(RequestValidationError)
    async def _invalid(request: Request, exc: RequestValidationError) -> JSONResponse:
        status = 400 if _not_json(exc) else 422
        return JSONResponse({"error": _one_line(exc)}, status_code=status)

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException) -> JSONResponse:
        return JSONResponse({"error": str(exc.detail)}, status_code=exc.status_code, headers=exc.headers)

    @app.exception_handler(InvalidEventError)
    async def _invalid_event(request: Request, exc: InvalidEventError) -> JSONResponse:
        return JSONResponse({"error": " ".join(str(exc).split())}, status_code=422)

    @app.exception_handler(NousError)
    async def _storage(request: Request, exc: NousError) -> JSONResponse:
        log.warning("storage error on %s: %s", request.url.path, exc)
        return JSONResponse({"error": f"storage unavailable: {' '.join(str(exc).split())}"}, status_code=503)

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception) -> JSONResponse:
        from nous_assets.errors import storage_error

        mapped = storage_error(exc, settings.db_path if pool.capabilities.local_file else None)
        if mapped is not None or _server_gone(exc):
            reason = " ".join(str(mapped or type(exc).__name__).split())
            log.warning("storage error on %s: %s", request.url.path, reason)
            return JSONResponse({"error": f"storage unavailable: {reason}"}, status_code=503)
        log.exception("unexpected error on %s", request.url.path)
        return JSONResponse({"error": f"internal error ({type(exc).__name__}); see the server log"}, status_code=500)

    _routes(app, principal, run)
    app.add_middleware(BodyLimit, limit=settings.thresholds.serve_max_body_bytes)
    return app


def _routes(app: FastAPI, principal: Callable, run: Callable) -> None:
    """One route per API of the spec's table (plus the packet feed ``nous pull`` reads)."""
    auth = Depends(principal)

    @app.get("/health", response_model=m.HealthResponse, tags=["ops"])
    def health() -> m.HealthResponse:
        """Liveness (no token needed): the server answers and names its backend."""
        return m.HealthResponse(status="ok", backend=app.state.pool.capabilities.name)

    @app.post("/v1/whoami", response_model=m.WhoAmIResponse, responses=_ERRORS, tags=["ops"])
    def whoami(who: tokens.Principal = auth) -> m.WhoAmIResponse:
        """The tenant and client this token speaks for (clients check their token with it)."""
        return m.WhoAmIResponse(tenant_id=who.tenant_id, client_id=who.client_id, scopes=list(who.scopes))

    @app.post("/v1/resolve", response_model=m.ResolveResponse, responses=_ERRORS, tags=["runtime"])
    def resolve_context(req: m.ResolveRequest, who: tokens.Principal = auth) -> Any:
        """ResolveContext: the precomputed packet for a fingerprint (read-only; nothing is computed)."""
        return run(who, h.resolve_context, req)

    @app.post("/v1/packets", response_model=m.PacketsResponse, responses=_ERRORS, tags=["runtime"])
    def list_packets(req: m.PacketsRequest, who: tokens.Principal = auth) -> Any:
        """The tenant's precomputed packets, a page at a time (``nous pull``)."""
        return run(who, h.packets, req)

    known = "known key: the stored one"
    @app.post("/v1/events", response_model=m.AppendEventResponse, status_code=201,
              responses={**_ERRORS, 200: {"model": m.AppendEventResponse, "description": known}},
              tags=["background"])  # fmt: skip
    def append_event(req: m.AppendEventRequest, who: tokens.Principal = auth) -> Any:
        """AppendEvent: one LearningEvent; a known idempotency_key returns the stored event (200), not a second row."""
        return run(who, h.append_event, req)

    @app.post("/v1/artifacts", response_model=m.IngestArtifactResponse, status_code=201,
              responses={**_ERRORS, 200: {"model": m.IngestArtifactResponse, "description": "known key"}},
              tags=["background"])  # fmt: skip
    def ingest_artifact(req: m.IngestArtifactRequest, who: tokens.Principal = auth) -> Any:
        """IngestArtifact: a parsed transcript artifact with its cursor metadata, deduplicated and queued."""
        return run(who, h.ingest_artifact, req)

    @app.post("/v1/feedback", response_model=m.FeedbackResponse, status_code=201,
              responses={**_ERRORS, 200: {"model": m.FeedbackResponse, "description": "known key, or ignored"}},
              tags=["runtime"])  # fmt: skip
    def feedback(req: m.FeedbackRequest, who: tokens.Principal = auth) -> Any:
        """Feedback: memory_id + useful | corrected | ignored (+ the session outcome)."""
        return run(who, h.feedback, req)

    @app.post("/v1/backfill", response_model=m.BackfillResponse, responses=_ERRORS, tags=["background"])
    def backfill(req: m.BackfillRequest, who: tokens.Principal = auth) -> Any:
        """Backfill: a batch of events and artifacts with AppendEvent's idempotency; refused items say why."""
        return run(who, h.backfill, req)

    @app.post("/v1/ops/replay", response_model=m.ReplayResponse, responses=_ERRORS, tags=["ops"])
    def replay(req: m.ReplayRequest, who: tokens.Principal = auth) -> Any:
        """Replay: project new events, or rebuild the projection from the whole log (ops scope)."""
        return run(who, h.replay, req)

    @app.post("/v1/ops/archive", response_model=m.ArchiveResponse, responses=_ERRORS, tags=["ops"])
    def archive(req: m.ArchiveRequest, who: tokens.Principal = auth) -> Any:
        """Archive: move old events to cold segments (ops scope; SQLite backend only, 501 on PostgreSQL)."""
        return run(who, h.archive, req)

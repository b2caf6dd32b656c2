"""The client of ``nous serve`` used by ``nous push`` and ``nous pull`` (standard library transport).

``NOUS_SERVER_URL`` is ``http(s)://host:port`` or ``unix:///path/to/nous.sock``; ``NOUS_SERVER_TOKEN`` is
sent as a bearer token and never printed (messages name the server, never the token). A server that cannot
be reached, times out or answers 5xx raises :class:`ServerUnavailableError` (try again later: nothing was
lost); a refusal (401/403/413/422) raises :class:`ServerRefusedError` with the server's one-line reason.

The server is not trusted: whatever it answers ends in a result or in one of these one-line errors, never a
traceback or a hang. A request has one deadline for everything (connecting, sending, the status line, the
headers, every byte of the body, retries): each socket operation gets the time that is left, so a server that
drips a byte at a time cannot stretch it. The body is read in chunks up to :data:`MAX_ANSWER_BYTES` (a larger
declared ``Content-Length`` is refused before reading). A redirect is not followed, and an answer that is not
JSON, or not the shape of the server's own response model (:meth:`Client.call`), raises
:class:`ServerAnswerError`.
"""

from __future__ import annotations

import http.client
import io
import json
import socket
import time
from typing import Any, TypeVar
from urllib.parse import urlsplit

from nous_assets.errors import NousError

TIMEOUT_SECONDS = 60.0  # the whole request and its answer, not each read
RETRIES = 2  # quick retries of a dropped connection before calling the server unavailable
MAX_ANSWER_BYTES = 64 * 1024 * 1024
CHUNK_BYTES = 64 * 1024
MAX_REASON_CHARS = 200

Model = TypeVar("Model")


class ServerError(NousError):
    """Any failure talking to the server; nothing was changed locally."""


class ServerUnavailableError(ServerError):
    """The server cannot be reached, failed (5xx) or missed the deadline: nothing was changed locally; run again."""


class ServerRefusedError(ServerError):
    """The server refused the request (4xx) with a reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


class ServerAnswerError(ServerError):
    """The server answered outside the contract (a redirect, not JSON, the wrong shape, too big)."""


def one_line(text: object, limit: int = MAX_REASON_CHARS) -> str:
    """``text`` as one short printable line: a server's words go to a terminal, so no newline or escape."""
    flat = " ".join("".join(c if c.isprintable() else " " for c in str(text)).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class _DeadlineReader(io.RawIOBase):
    """The socket's bytes, each ``recv`` given only the time left before the deadline (the socket's own raw file
    underneath keeps it open while the answer is read, as ``http.client`` expects)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._raw, self._deadline = sock, sock.makefile("rb", buffering=0), deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        self._sock.settimeout(_left(self._deadline))
        return self._raw.readinto(buffer)

    def close(self) -> None:
        self._raw.close()
        super().close()


class _DeadlineSocket:
    """A connected socket whose reads and sends all end by one deadline (``http.client`` sees a socket)."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock, self._deadline = sock, deadline

    def makefile(self, mode: str = "rb", *_: Any, **__: Any) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))

    def sendall(self, data: Any) -> None:
        self._sock.settimeout(_left(self._deadline))  # sendall's timeout is for the whole call
        self._sock.sendall(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._sock, name)


def _left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError("timed out")
    return left


class _UnixConnection(http.client.HTTPConnection):
    def __init__(self, path: str, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.socket_path = path

    def connect(self) -> None:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            sock.connect(self.socket_path)
        except OSError:
            sock.close()
            raise
        self.sock = sock


class Client:
    """JSON over HTTP to one server with one token; ``timeout`` is each request's whole deadline (seconds)."""

    def __init__(self, url: str | None, token: str | None, *, timeout: float = TIMEOUT_SECONDS,
                 max_bytes: int = MAX_ANSWER_BYTES) -> None:  # fmt: skip
        if not url:
            raise NousError("no server configured: set NOUS_SERVER_URL (e.g. http://127.0.0.1:4317)")
        if not token:
            raise NousError("no token configured: set NOUS_SERVER_TOKEN (from `nous serve token create`)")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "unix") or (parts.scheme != "unix" and not parts.hostname):
            raise NousError(f"NOUS_SERVER_URL {url!r} must be http://host:port, https://host:port or unix:///path")
        self.url, self._parts, self._token, self.timeout = url.rstrip("/"), parts, token, timeout
        self.max_bytes = max_bytes

    def _connection(self, deadline: float) -> http.client.HTTPConnection:
        """A connected connection whose every socket operation ends by ``deadline``."""
        p, left = self._parts, _left(deadline)
        if p.scheme == "unix":
            conn: http.client.HTTPConnection = _UnixConnection(p.path, left)
        else:
            cls = http.client.HTTPSConnection if p.scheme == "https" else http.client.HTTPConnection
            conn = cls(p.hostname, p.port, timeout=left)
        conn.connect()
        conn.sock = _DeadlineSocket(conn.sock, deadline)  # type: ignore[assignment]
        return conn

    def _path(self, path: str) -> str:
        prefix = "" if self._parts.scheme == "unix" else self._parts.path.rstrip("/")
        return prefix + path

    def _read(self, response: http.client.HTTPResponse, path: str) -> bytes:
        """The body in chunks, refused past :attr:`max_bytes` (declared or streamed) before it fills memory."""
        too_big = f"the server at {self.url} answered {path} with more than {self.max_bytes:,} bytes; refused"
        if response.length is not None and response.length > self.max_bytes:
            raise ServerAnswerError(too_big)
        body = bytearray()
        while chunk := response.read(CHUNK_BYTES):
            body += chunk
            if len(body) > self.max_bytes:
                raise ServerAnswerError(too_big)
        return bytes(body)

    def _exchange(self, path: str, data: bytes, headers: dict[str, str]) -> tuple[int, str, str, bytes]:
        """(status, content type, location, body) of one POST, retrying a dropped connection within the deadline."""
        deadline = time.monotonic() + self.timeout
        for attempt in range(RETRIES + 1):
            conn = None
            try:
                conn = self._connection(deadline)
                conn.request("POST", self._path(path), body=data, headers=headers)
                response = conn.getresponse()
                return (response.status, response.getheader("Content-Type", ""), response.getheader("Location", ""),
                        self._read(response, path))  # fmt: skip
            except (OSError, http.client.HTTPException) as exc:
                if isinstance(exc, TimeoutError):
                    raise ServerUnavailableError(f"the server at {self.url} did not answer {path} within "
                                                 f"{self.timeout:g} s") from None  # fmt: skip
                pause = 0.5 * (attempt + 1)
                if attempt == RETRIES or deadline - time.monotonic() <= pause:
                    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
                    raise ServerUnavailableError(f"cannot reach the server at {self.url}: {one_line(reason)}") from None
                time.sleep(pause)
            finally:
                if conn is not None:
                    conn.close()
        raise AssertionError("unreachable")  # the loop returns or raises

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, Any]:
        """POST ``body`` as JSON; (status, parsed JSON answer) for 2xx, else the errors of the module doc."""
        data = json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._token}",
                   "Accept": "application/json"}  # fmt: skip
        status, content_type, location, raw = self._exchange(path, data, headers)
        answer = _parse(raw)
        if 200 <= status < 300 and answer is not _NOT_JSON:
            return status, answer
        if 200 <= status < 300:
            kind, start = one_line(content_type or "no content type", 60), one_line(raw[:80].decode(errors="replace"))
            raise ServerAnswerError(f"the server at {self.url} answered {path} with something that is not JSON "
                                    f"({kind}): {start}")  # fmt: skip
        if 300 <= status < 400:
            raise ServerAnswerError(f"the server at {self.url} answered {path} with a redirect ({status}) to "
                                    f"{one_line(location or 'nowhere', 100)}, not followed: set NOUS_SERVER_URL to "
                                    "the server itself")  # fmt: skip
        message = answer.get("error") if isinstance(answer, dict) else None
        message = one_line(message if message is not None else raw[:MAX_REASON_CHARS].decode(errors="replace"))
        if status >= 500:
            raise ServerUnavailableError(f"the server at {self.url} failed ({status}): {message or 'no reason'}")
        if status >= 400:
            raise ServerRefusedError(status, f"the server at {self.url} refused ({status}): {message or 'no reason'}")
        raise ServerAnswerError(f"the server at {self.url} answered {path} with status {status}")

    def call(self, path: str, body: dict[str, Any], model: type[Model]) -> Model:
        """POST and check the answer against ``model``, the server's own response model, strictly (no coercion)."""
        from pydantic import ValidationError

        _, answer = self.post(path, body)
        try:
            return model.model_validate(answer, strict=True)  # type: ignore[attr-defined]
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(part) for part in first["loc"]) or "the answer"
            raise ServerAnswerError(f"the server at {self.url} answered {path} with the wrong shape: "
                                    f"{one_line(where, 80)}: {one_line(first['msg'], 120)}") from None  # fmt: skip

    def error(self, path: str, what: str) -> ServerAnswerError:
        """A contract breach the caller found in a well-shaped answer (a cursor that does not advance...)."""
        return ServerAnswerError(f"the server at {self.url} answered {path} with {one_line(what)}")


_NOT_JSON = object()


def _parse(raw: bytes) -> Any:
    """The JSON of ``raw``, or :data:`_NOT_JSON` (also for text that is not valid Unicode, which no store takes)."""
    try:
        answer = json.loads(raw)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than the parser goes
        return _NOT_JSON
    stack = [answer]
    while stack:  # a lone surrogate (\ud800) parses but cannot be written anywhere: refuse it here
        value = stack.pop()
        if isinstance(value, str):
            try:
                value.encode()
            except UnicodeEncodeError:
                return _NOT_JSON
        elif isinstance(value, dict):
            stack.extend(value.keys())
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
    return answer

"""The client of ``nous serve`` used by ``nous push`` and ``nous pull`` (standard library only).

``NOUS_SERVER_URL`` is ``http(s)://host:port`` or ``unix:///path/to/nous.sock``; ``NOUS_SERVER_TOKEN`` is
sent as a bearer token and never printed (messages name the server, never the token). A server that cannot
be reached, times out or answers 5xx raises :class:`ServerUnavailableError` (try again later: nothing was
lost); a refusal (401/403/413/422) raises :class:`ServerRefusedError` with the server's one-line reason.
"""

from __future__ import annotations

import http.client
import json
import socket
import time
from typing import Any
from urllib.parse import urlsplit

from nous_assets.errors import NousError

TIMEOUT_SECONDS = 60.0
RETRIES = 2  # quick retries of a dropped connection before calling the server unavailable


class ServerUnavailableError(NousError):
    """The server cannot be reached or failed (5xx): nothing was changed locally; run again later."""


class ServerRefusedError(NousError):
    """The server refused the request (4xx) with a reason."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


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
    """JSON over HTTP to one server with one token."""

    def __init__(self, url: str | None, token: str | None, *, timeout: float = TIMEOUT_SECONDS) -> None:
        if not url:
            raise NousError("no server configured: set NOUS_SERVER_URL (e.g. http://127.0.0.1:4317)")
        if not token:
            raise NousError("no token configured: set NOUS_SERVER_TOKEN (from `nous serve token create`)")
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https", "unix") or (parts.scheme != "unix" and not parts.hostname):
            raise NousError(f"NOUS_SERVER_URL {url!r} must be http://host:port, https://host:port or unix:///path")
        self.url, self._parts, self._token, self.timeout = url.rstrip("/"), parts, token, timeout

    def _connection(self) -> http.client.HTTPConnection:
        p = self._parts
        if p.scheme == "unix":
            return _UnixConnection(p.path, self.timeout)
        cls = http.client.HTTPSConnection if p.scheme == "https" else http.client.HTTPConnection
        return cls(p.hostname, p.port, timeout=self.timeout)

    def _path(self, path: str) -> str:
        prefix = "" if self._parts.scheme == "unix" else self._parts.path.rstrip("/")
        return prefix + path

    def post(self, path: str, body: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        """POST ``body`` as JSON; (status, answer) for 2xx, else the errors of the module doc."""
        data = json.dumps(body, ensure_ascii=False).encode()
        headers = {"Content-Type": "application/json", "Authorization": f"Bearer {self._token}",
                   "Accept": "application/json"}  # fmt: skip
        for attempt in range(RETRIES + 1):
            conn = self._connection()
            try:
                conn.request("POST", self._path(path), body=data, headers=headers)
                response = conn.getresponse()
                status, raw = response.status, response.read()
                break
            except (OSError, http.client.HTTPException) as exc:
                if attempt == RETRIES:
                    reason = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
                    raise ServerUnavailableError(f"cannot reach the server at {self.url}: {reason}") from None
                time.sleep(0.5 * (attempt + 1))
            finally:
                conn.close()
        try:
            answer = json.loads(raw) if raw else {}
        except ValueError:
            answer = {"error": raw[:200].decode(errors="replace")}
        message = " ".join(str(answer.get("error", "")).split()) if isinstance(answer, dict) else ""
        if status >= 500:
            raise ServerUnavailableError(f"the server at {self.url} failed ({status}): {message or 'no reason'}")
        if status >= 400:
            raise ServerRefusedError(status, f"the server at {self.url} refused ({status}): {message or 'no reason'}")
        return status, answer

"""How ``nous serve`` listens: HTTP on a loopback address by default, or a private Unix socket.

The socket is bound here, not by uvicorn, so its address is known before the first request (``--port 0``
picks a free port and the line ``listening on …`` says which) and a Unix socket is created mode 0600
under a 0700 directory from the start (uvicorn would make it 0666). Binding a non-loopback address needs
``allow_remote`` and prints a warning: tokens travel in clear text without a TLS proxy in front.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import stat
import sys
from pathlib import Path
from typing import Any

from nous_assets.errors import NousError

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 4317  # the spec's compose profile (NOUS_HTTP_BIND=…:4317)


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def bind_tcp(host: str, port: int, *, allow_remote: bool = False) -> socket.socket:
    """A listening TCP socket; a non-loopback host is refused unless ``allow_remote``."""
    if not is_loopback(host):
        if not allow_remote:
            raise NousError(
                f"refusing to listen on {host}: only loopback addresses unless --allow-remote "
                "(then put TLS in front: tokens are sent in clear text)"
            )
        print(f"nous serve: warning: listening on {host}:{port}, reachable from other machines; tokens and "
              "memories travel unencrypted unless a TLS proxy fronts this server", file=sys.stderr)  # fmt: skip
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        raise NousError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    sock.listen(256)
    return sock


def bind_unix(path: Path) -> socket.socket:
    """A listening Unix socket at ``path``, mode 0600 (a stale socket file is replaced, anything else refused)."""
    path = path.expanduser()
    if path.exists() or path.is_symlink():
        if not stat.S_ISSOCK(path.lstat().st_mode):
            raise NousError(f"{path} exists and is not a socket; choose another --socket path")
        path.unlink()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    old = os.umask(0o177)
    try:
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise NousError(f"cannot create the socket {path}: {exc.strerror or exc}") from None
    finally:
        os.umask(old)
    os.chmod(path, 0o600)
    sock.listen(256)
    return sock


def address(sock: socket.socket) -> str:
    """The URL clients use for a bound socket (``NOUS_SERVER_URL``)."""
    if sock.family == socket.AF_UNIX:
        return f"unix://{sock.getsockname()}"
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


def serve(app: Any, sock: socket.socket, ready: str = "") -> None:
    """Run ``app`` on the bound socket until SIGINT/SIGTERM (uvicorn's graceful shutdown), then return; ``ready`` is
    printed once a stop signal is handled here, so whoever reads it can stop the server at once.

    A signal only ever sets uvicorn's ``should_exit``: before uvicorn takes the signals over (it starts its server
    and skips its main loop), and when it re-sends them after its own graceful shutdown (a normal return, so the
    socket file is removed and the exit is 0). Raising from the handler instead lost the stop whenever the signal
    landed in a weakref callback or an event-loop callback, where Python ignores or logs the exception: a
    terminated `nous serve` stayed up (twice in `make test` on a loaded machine; 1 in 40 stops under load).
    """
    import signal

    import uvicorn

    config = uvicorn.Config(app, log_level="warning", access_log=False, timeout_keep_alive=30,
                            lifespan="off", server_header=False)  # fmt: skip
    unix_path = sock.getsockname() if sock.family == socket.AF_UNIX else None  # uvicorn closes the socket
    server = uvicorn.Server(config)

    def stop(signum: int, frame: object) -> None:
        server.should_exit = True

    previous = {sig: signal.signal(sig, stop) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        if ready:
            print(ready, flush=True)
        server.run(sockets=[sock])
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        sock.close()
        if unix_path:
            Path(unix_path).unlink(missing_ok=True)

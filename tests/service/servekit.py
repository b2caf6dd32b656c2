"""Helpers of the service tests (imported by ``conftest`` and the tests; see ``conftest`` for the fixtures)."""

from __future__ import annotations

import contextlib
import dataclasses
import http.client
import json
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from nous_assets.service import tokens, transport
from nous_assets.service.app import create_app
from nous_assets.service.pool import BackendPool
from nous_assets.settings import Settings, load_settings

REPO = Path(__file__).resolve().parents[2]


@dataclasses.dataclass
class Served:
    """A running server: its URL, settings, backend pool and the tenant the test owns."""

    url: str
    port: int
    settings: Settings
    pool: BackendPool
    tenant: str
    kind: str

    def token(self, client: str = "alice", *, tenant: str | None = None, ops: bool = False) -> str:
        with self.pool.service_store() as store:
            return tokens.create(store, client_id=client, tenant_id=tenant or self.tenant,
                                 scopes=("client", "ops") if ops else ("client",))  # fmt: skip

    def request(self, method: str, path: str, body: Any = None, *, token: str | None = None,
                raw: bytes | None = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:  # fmt: skip
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            sent = {"Content-Type": "application/json", **(headers or {})}
            if token:
                sent["Authorization"] = f"Bearer {token}"
            data = raw if raw is not None else (None if body is None else json.dumps(body).encode())
            conn.request(method, path, body=data, headers=sent)
            response = conn.getresponse()
            payload = response.read()
        finally:
            conn.close()
        return response.status, json.loads(payload) if payload else None

    def post(self, path: str, body: Any, *, token: str | None = None) -> tuple[int, Any]:
        return self.request("POST", path, body, token=token)

    @contextlib.contextmanager
    def backend(self, tenant: str | None = None):
        with self.pool.backend(tenant or self.tenant) as (backend, _service):
            yield backend


def identity(client: str = "alice", *, project: str = "proj-a", session: str = "sess-1", **extra: Any) -> dict:
    return {"project_id": project, "session_id": session, "client_id": client, "event_source": "fs_watch", **extra}


def extracted_body(learning_id: str, content: str = "use uv for python packaging") -> dict:
    return {"event_type": "LearningExtracted", "learning_id": learning_id,
            "payload": {"content": content, "extractor_version": "t-1", "concepts": ["python"], "edges": []}}


def append_request(key: str, learning_id: str, client: str = "alice", **identity_extra: Any) -> dict:
    return {"identity": identity(client, **identity_extra),
            "idempotency": {"idempotency_key": key, "schema_version": 2}, "event": extracted_body(learning_id)}


def service_settings(tmp_path: Path, kind: str, tenant: str, dsn: str | None, **thresholds: Any) -> Settings:
    env = {"HOME": str(tmp_path / "home"), "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
           "NOUS_DATA_DIR": str(tmp_path / f"server-{kind}"), "NOUS_TENANT": tenant, "NOUS_BACKEND": kind}  # fmt: skip
    if dsn:
        env["NOUS_PG_DSN"] = dsn
    settings = load_settings(env)
    if thresholds:
        settings = dataclasses.replace(settings, thresholds=dataclasses.replace(settings.thresholds, **thresholds))
    return settings


@contextlib.contextmanager
def running(settings: Settings, **app_options: Any) -> Iterator[tuple[str, int, BackendPool]]:
    """The app over ``settings`` under uvicorn in a thread on 127.0.0.1 at a free port; stopped on exit."""
    import uvicorn

    pool = BackendPool(settings)
    sock = transport.bind_tcp("127.0.0.1", 0)
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings, pool, **app_options), log_level="warning",
                                           lifespan="off"))  # fmt: skip
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and thread.is_alive() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.started, "the test server did not start"
    try:
        yield transport.address(sock), port, pool
    finally:
        server.should_exit = True
        thread.join(timeout=30)
        sock.close()
        pool.close()


def session_start_context(data_dir: Path, cwd: str, session_id: str = "sess-pull") -> str:
    """What the real resolver (``python -I -m resolver session-start``) injects for ``cwd`` from ``data_dir``."""
    hook = {"session_id": session_id, "transcript_path": "/tmp/x.jsonl", "cwd": cwd,
            "hook_event_name": "SessionStart", "source": "startup"}  # fmt: skip
    proc = subprocess.run([sys.executable, "-I", "-m", "resolver", "session-start", "--data-dir", str(data_dir)],
                          input=json.dumps(hook).encode(), capture_output=True, cwd=REPO, timeout=30)  # fmt: skip
    assert proc.returncode == 0
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]

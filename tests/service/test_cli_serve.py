"""``nous serve`` as a real process: where it listens, the Unix socket's mode, tokens from the CLI."""

from __future__ import annotations

import contextlib
import http.client
import json
import os
import socket
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from nous_assets.cli.main import main
from nous_assets.service.client import _UnixConnection

REPO = Path(__file__).resolve().parents[2]


@contextlib.contextmanager
def nous_serve(*args: str) -> Iterator[tuple[subprocess.Popen, str]]:
    """``nous serve ARGS`` in its own process; yields it with the first line it printed."""
    proc = subprocess.Popen([sys.executable, "-m", "nous_assets.cli", "serve", *args], cwd=REPO,
                            env=os.environ.copy(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        yield proc, proc.stdout.readline()
    finally:
        if proc.poll() is None:
            proc.terminate()
        proc.wait(timeout=30)


def _local_address() -> str | None:
    """This machine's address on its default route (no packet is sent), or None if it has only loopback."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("10.255.255.255", 1))
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def _health(host: str, port: int) -> int:
    conn = http.client.HTTPConnection(host, port, timeout=10)
    try:
        conn.request("GET", "/health")
        return conn.getresponse().status
    finally:
        conn.close()


def test_serve_binds_loopback_by_default(nous_env):
    with nous_serve("--port", "0") as (proc, line):
        assert line.startswith("nous serve: listening on http://127.0.0.1:"), line
        port = int(line.split("http://127.0.0.1:")[1].split()[0])
        assert _health("127.0.0.1", port) == 200
        other = _local_address()
        if other is not None:  # the same port on the machine's network address: nobody listens there
            with pytest.raises(OSError), socket.create_connection((other, port), timeout=5):
                pass
        proc.terminate()
        assert proc.wait(timeout=30) == 0


def test_serve_refuses_a_public_address_unless_allowed(nous_env):
    with nous_serve("--host", "0.0.0.0", "--port", "0") as (proc, _):
        assert proc.wait(timeout=60) == 1
        err = proc.stderr.read().strip().splitlines()
        assert len(err) == 1 and "refusing to listen on 0.0.0.0" in err[0] and "--allow-remote" in err[0]
    with nous_serve("--host", "0.0.0.0", "--port", "0", "--allow-remote") as (proc, line):
        assert line.startswith("nous serve: listening on http://0.0.0.0:")
        proc.terminate()
        proc.wait(timeout=30)
        assert "warning: listening on 0.0.0.0" in proc.stderr.read()


def test_serve_on_a_unix_socket_is_private(nous_env, tmp_path):
    path = tmp_path / "run" / "nous.sock"
    with nous_serve("--socket", str(path)) as (proc, line):
        assert line.startswith(f"nous serve: listening on unix://{path}")
        assert stat.S_IMODE(path.stat().st_mode) == 0o600 and stat.S_ISSOCK(path.stat().st_mode)
        conn = _UnixConnection(str(path), 10)
        try:
            conn.request("POST", "/v1/whoami", body=b"{}", headers={"Content-Type": "application/json"})
            response = conn.getresponse()
            assert response.status == 401 and "Bearer" in json.loads(response.read())["error"]
        finally:
            conn.close()
        proc.terminate()
        assert proc.wait(timeout=30) == 0
    assert not path.exists()


def test_token_create_list_revoke_from_the_cli(nous_env, capsys):
    assert main(["init"]) == 0
    capsys.readouterr()
    assert main(["serve", "token", "create", "--client", "laptop-1", "--ops"]) == 0
    out, err = capsys.readouterr()
    token = out.strip()
    assert token.startswith("nous_") and "shown once" in err and token not in err
    token_id = token[len("nous_"):].split(".")[0]
    assert main(["serve", "token", "list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert listed == [{"token_id": token_id, "tenant_id": "local", "client_id": "laptop-1", "scopes": ["client", "ops"],
                       "created_at": listed[0]["created_at"], "revoked_at": None}]  # fmt: skip
    assert main(["serve", "token", "revoke", token_id]) == 0
    assert main(["serve", "token", "revoke", token_id]) == 1  # nothing live left to revoke
    assert "no live token" in capsys.readouterr().err
    assert main(["serve", "token", "create", "--client", "x", "--tenant", "other-team"]) == 1
    assert "holds tenant 'local' only" in capsys.readouterr().err
    assert main(["serve", "token", "create", "--client", "bad name!"]) == 1
    assert "client" in capsys.readouterr().err


def test_config_never_shows_the_token(nous_env, monkeypatch, capsys):
    monkeypatch.setenv("NOUS_SERVER_URL", "http://127.0.0.1:4317")
    monkeypatch.setenv("NOUS_SERVER_TOKEN", "nous_0123456789ab.very-secret-value-here")
    assert main(["config"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["server_url"] == "http://127.0.0.1:4317" and shown["server_token"] == "(set)"
    from nous_assets.settings import load_settings, settings_to_json

    assert "very-secret" not in settings_to_json(load_settings()) and "very-secret" not in repr(load_settings())


def test_serve_refuses_a_port_that_is_not_one(nous_env, capsys):
    assert main(["serve", "--port", "70000"]) == 1
    assert "is not a TCP port" in capsys.readouterr().err

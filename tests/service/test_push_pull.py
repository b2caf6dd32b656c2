"""``nous push`` and ``nous pull`` against a real server: resumable, effectively-once, fail-safe when it is down."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from eventgen import extracted, lifecycle
from servekit import session_start_context

from nous_assets.cli.main import main
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db
from nous_assets.store.log import push_cursor
from nous_assets.store.sqlite.events import SqliteEventStore
from resolver.project import project_id_from_cwd

REPO = Path(__file__).resolve().parents[2]


def _local_events(n: int) -> list[str]:
    """``n`` events in the developer's own cortex.db (extractions, every third one reinforced)."""
    settings = load_settings()
    conn = open_db(settings.db_path, create=True)
    try:
        events = []
        for i in range(n):
            if i % 3 == 2:
                events.append(lifecycle("LearningReinforced", f"L{i - 1}", {"reinforcement_delta": 0.1}, key=f"r{i}"))
            else:
                events.append(extracted(f"L{i}", f"learning number {i}", key=f"x{i}", session=f"s{i // 10}"))
        SqliteEventStore(conn).append_many(events)
        return [e.idempotency_key for e in events]
    finally:
        conn.close()


def _server_keys(served) -> list[str]:
    with served.backend() as backend:
        return [e.idempotency_key for e in backend.events.replay(0)]


def _cursor(served) -> int:
    conn = open_db(load_settings().db_path)
    try:
        return push_cursor.get(conn, f"{served.url}#{served.tenant}")
    finally:
        conn.close()


@pytest.fixture
def client_env(nous_env, monkeypatch):
    def point(served, token: str | None = None) -> None:
        monkeypatch.setenv("NOUS_SERVER_URL", served.url)
        monkeypatch.setenv("NOUS_SERVER_TOKEN", token or served.token("dev"))

    return point


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_push_stops_resumes_and_never_duplicates(serve, client_env, capsys, kind):
    served = serve(kind)
    client_env(served)
    keys = _local_events(25)
    assert main(["push", "--batch", "10", "--max-batches", "1"]) == 0
    assert _server_keys(served) == keys[:10] and _cursor(served) == 10
    assert "stopped by --max-batches" in capsys.readouterr().err
    assert main(["push", "--batch", "10"]) == 0
    assert _server_keys(served) == keys
    err = capsys.readouterr().err
    assert "15 events sent" in err and "15 new" in err and "cursor at event #25" in err
    # nothing new: nothing sent; the whole log again: every event already there, nothing written twice
    assert main(["push"]) == 0 and "0 events sent" in capsys.readouterr().err
    assert main(["push", "--from-start", "--batch", "7"]) == 0
    assert "25 already on the server" in capsys.readouterr().err
    assert _server_keys(served) == keys
    with served.backend() as backend:
        stored = list(backend.events.replay(0))
    assert [e.source for e in stored[:3]] == ["historical_backfill", "historical_backfill", "user_review"]
    assert stored[0].session_id == "s0" and stored[0].project_id == "p1"


def test_push_killed_mid_way_resumes_without_loss_or_duplicates(serve, client_env):
    served = serve("sqlite")
    client_env(served)
    keys = _local_events(300)
    proc = subprocess.Popen([sys.executable, "-m", "nous_assets.cli", "push", "--batch", "2"], cwd=REPO,
                            env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while proc.poll() is None and len(_server_keys(served)) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    landed = _server_keys(served)
    assert proc.returncode == -signal.SIGKILL and 20 <= len(landed) < len(keys)  # really killed mid-push
    assert landed == keys[: len(landed)]  # a prefix of the log, in order, each once
    cursor = _cursor(served)
    assert len(landed) - 2 <= cursor <= len(landed)  # at most the batch in flight is unacknowledged locally
    assert main(["push", "--batch", "50"]) == 0
    assert _server_keys(served) == keys


def _closed_port_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"


def test_a_down_server_is_one_line_nonzero_and_nothing_is_lost(serve, client_env, monkeypatch, capsys):
    served = serve("sqlite")
    client_env(served)
    keys = _local_events(12)
    monkeypatch.setenv("NOUS_SERVER_URL", _closed_port_url())
    assert main(["push"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("nous: error: cannot reach the server at http://127.0.0.1:")
    assert "Traceback" not in err[0] and os.environ["NOUS_SERVER_TOKEN"] not in err[0]
    assert main(["pull"]) == 1
    assert "local packets are unchanged" in capsys.readouterr().err
    monkeypatch.setenv("NOUS_SERVER_URL", served.url)  # the server is back: the next push sends everything
    assert main(["push"]) == 0
    assert _server_keys(served) == keys


def test_push_without_server_settings_says_what_to_set(nous_env, capsys, monkeypatch):
    monkeypatch.delenv("NOUS_SERVER_URL", raising=False)
    assert main(["push"]) == 1
    assert "NOUS_SERVER_URL" in capsys.readouterr().err


def test_a_refused_event_is_quarantined_with_its_reason_and_the_rest_lands(serve, client_env, capsys):
    served = serve("sqlite")
    client_env(served)
    keys = _local_events(6)  # x0, x1, r2 (reinforces L1), x3, x4, r5
    conn = open_db(load_settings().db_path)
    try:  # as if the first two had gone to a server that has since lost them: r2 now names an unknown learning
        push_cursor.reset(conn, f"{served.url}#{served.tenant}", 2)
    finally:
        conn.close()
    assert main(["push"]) == 0
    err = capsys.readouterr().err
    assert "3 new" in err and "1 refused" in err and "push-rejected.jsonl" in err
    lines = (load_settings().data_dir / "push-rejected.jsonl").read_text().splitlines()
    rejected = [json.loads(line) for line in lines]
    assert [r["idempotency_key"] for r in rejected] == ["r2"] and "L1" in rejected[0]["reason"]
    assert _server_keys(served) == keys[3:]
    assert main(["push"]) == 0 and "0 events sent" in capsys.readouterr().err  # refused once, not retried forever


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_pull_writes_packets_the_resolver_reads(serve, client_env, tmp_path, capsys, kind):
    served = serve(kind)
    client_env(served)
    workdir = tmp_path / "checkout"
    workdir.mkdir()
    project = project_id_from_cwd(str(workdir))
    with served.backend() as backend:
        backend.cache.put(project, [(f"{project}:fp", project, "project", json.dumps({"branch": "main"}),
                                     "# Team notes\n- run make lint before pushing", "[7, 9]", 44, 9,
                                     "2030-01-01T00:00:00.000000Z")])  # fmt: skip
        backend.cache.put("*", [("*:global", "*", "global", "{}", "# global notes", "[3]", 14, 3,
                                 "2030-01-01T00:00:00.000000Z")])  # fmt: skip
    assert main(["pull"]) == 0
    assert "2 packet(s) of 2 project(s)" in capsys.readouterr().err
    settings = load_settings()
    context = session_start_context(settings.data_dir, str(workdir), "sess-9")
    assert "run make lint before pushing" in context
    # a second pull after the server rebuilt the packets replaces them (no stale copy left)
    with served.backend() as backend:
        backend.cache.put(project, [(f"{project}:fp2", project, "project", "{}", "# rebuilt", "[1]", 9, 10,
                                     "2030-01-02T00:00:00.000000Z")])  # fmt: skip
    assert main(["pull", f"--project={project}"]) == 0
    conn = open_db(settings.db_path)
    try:
        rows = conn.execute("SELECT cache_key, packet_text FROM injection_cache ORDER BY cache_key").fetchall()
    finally:
        conn.close()
    assert [tuple(r) for r in rows] == [("*:global", "# global notes"), (f"{project}:fp2", "# rebuilt")]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_killed_mid_push_then_restarted_loses_and_duplicates_nothing(nous_env, tmp_path, monkeypatch):
    """kill -9 of ``nous serve`` (SQLite) while a push is sending, restart, push again: each event once."""
    keys = _local_events(300)
    server_env = {**os.environ, "NOUS_DATA_DIR": str(tmp_path / "server"), "NOUS_TENANT": "local"}
    token = subprocess.run([sys.executable, "-m", "nous_assets.cli", "serve", "token", "create", "--client", "dev"],
                           env=server_env, cwd=REPO, capture_output=True, text=True, check=True).stdout.strip()
    port = _free_port()
    monkeypatch.setenv("NOUS_SERVER_URL", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("NOUS_SERVER_TOKEN", token)
    server_db = tmp_path / "server" / "cortex.db"

    def start_server() -> subprocess.Popen:
        proc = subprocess.Popen([sys.executable, "-m", "nous_assets.cli", "serve", "--port", str(port)],
                                env=server_env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert proc.stdout.readline().startswith("nous serve: listening on")
        return proc

    def server_keys() -> list[str]:
        conn = open_db(server_db)
        try:
            return [r[0] for r in conn.execute("SELECT idempotency_key FROM learning_events ORDER BY event_id")]
        finally:
            conn.close()

    server = start_server()
    push = subprocess.Popen([sys.executable, "-m", "nous_assets.cli", "push", "--batch", "2"], cwd=REPO,
                            env=os.environ.copy(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while push.poll() is None and len(server_keys()) < 20 and time.monotonic() < deadline:
            time.sleep(0.01)
        server.send_signal(signal.SIGKILL)
        server.wait()
        assert push.wait(timeout=60) == 1  # the client gives up with its one line; nothing acknowledged is lost
        assert "cannot reach the server" in push.stderr.read()
        landed = server_keys()
        assert 20 <= len(landed) < len(keys) and landed == keys[: len(landed)]
        server = start_server()
        assert main(["push", "--batch", "50"]) == 0
        assert server_keys() == keys
    finally:
        for proc in (push, server):
            if proc.poll() is None:
                proc.terminate()
                proc.wait(timeout=30)

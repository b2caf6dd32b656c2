"""Load and fault benchmark of ``nous serve`` on PostgreSQL: concurrent clients, shared keys, a kill -9.

``--clients`` threads each send ``--events`` AppendEvent requests (one HTTP request per event, keep-alive)
as their own client with their own token; ``--shared`` of each client's events carry idempotency keys from
a pool every client sends (the same event delivered by all: at-least-once delivery), the rest are the
client's own. Clients retry a request (same key) until the server answers it, as ``nous push`` does. When
``--kill-at`` of all requests have been answered, the server process is killed with SIGKILL and started
again on the same port; clients keep retrying through the outage. At the end the tenant's rows are counted
in the database: every key sent must be there exactly once (zero loss, zero duplicates).

The server is a real ``nous serve`` process over the embedded PostgreSQL (started here, on 127.0.0.1,
deleted at the end) unless ``--dsn`` names one. Prints the figures and saves them to
``benchmarks/results/serve-load-<time>.json``. The full size is the default (20 x 5,000, on a quiet
machine); ``--clients 4 --events 200`` checks that it works.

    python benchmarks/bench_serve_load.py [--clients 20] [--events 5000] [--shared 0.2] [--kill-at 0.5]
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support: dev-only helpers shared with the tests, not in the wheel


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``nous serve`` on a fixed port in its own process (so it can be killed and started again)."""

    def __init__(self, env: dict[str, str], port: int) -> None:
        self.env, self.port, self.proc = env, port, None
        self.log = open(Path(env["NOUS_DATA_DIR"]) / "serve.log", "a")  # noqa: SIM115 - lives as long as the server

    def start(self) -> float:
        """Start and wait until it answers /health; returns the seconds it took."""
        started = time.perf_counter()
        self.proc = subprocess.Popen([sys.executable, "-m", "nous_assets.cli", "serve", "--port", str(self.port)],
                                     cwd=REPO, env=self.env, stdout=self.log, stderr=self.log)  # fmt: skip
        while time.perf_counter() - started < 120:
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=2)
                conn.request("GET", "/health")
                if conn.getresponse().status == 200:
                    return time.perf_counter() - started
            except OSError:
                time.sleep(0.05)
            if self.proc.poll() is not None:
                raise SystemExit(f"nous serve exited with {self.proc.returncode}; see {self.log.name}")
        raise SystemExit("nous serve did not answer within 120 s")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def stop(self) -> None:
        if self.proc and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(timeout=60)
        self.log.close()


class Totals:
    def __init__(self, total: int) -> None:
        self.total, self.answered, self.retries, self.created = total, 0, 0, 0
        self.lock = threading.Lock()
        self.latencies: list[float] = []


def _event(key: str, learning: str) -> dict:
    return {"idempotency": {"idempotency_key": key, "schema_version": 2},
            "event": {"event_type": "LearningExtracted", "learning_id": learning,
                      "payload": {"content": f"learning {learning}: run the linter before commit",
                                  "extractor_version": "bench-1", "concepts": ["lint"], "edges": []}}}  # fmt: skip


def client_keys(client: int, events: int, shared: float) -> list[tuple[str, str]]:
    """(key, learning) of one client's events: its own, and the shared pool interleaved (same for all)."""
    n_shared = int(events * shared)
    own = [(f"c{client}-e{j}", f"L-c{client}-{j}") for j in range(events - n_shared)]
    pool = [(f"shared-{k}", f"L-shared-{k}") for k in range(n_shared)]
    rng = np.random.default_rng(client)
    mixed = own + pool
    rng.shuffle(mixed)
    return [tuple(x) for x in mixed]


def run_client(port: int, token: str, client: int, keys: list[tuple[str, str]], totals: Totals) -> None:
    identity = {"project_id": "bench", "session_id": f"s{client}", "client_id": f"c{client}",
                "event_source": "fs_watch"}  # fmt: skip
    headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    for key, learning in keys:
        body = json.dumps({"identity": identity, **_event(key, learning)}).encode()
        while True:  # at-least-once: the same request until the server answers it
            started = time.perf_counter()
            try:
                conn.request("POST", "/v1/events", body=body, headers=headers)
                response = conn.getresponse()
                response.read()
                status = response.status
            except (OSError, http.client.HTTPException):
                status = 0
            if status in (200, 201):
                with totals.lock:
                    totals.answered += 1
                    totals.created += status == 201
                    totals.latencies.append(time.perf_counter() - started)
                break
            if status and status < 500:
                raise SystemExit(f"client {client}: the server refused {key} with {status}")
            with totals.lock:
                totals.retries += 1
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            time.sleep(0.05)
    conn.close()


def _pct(values: list[float], q: float) -> float:
    return round(float(np.percentile(values, q)) * 1000, 2) if values else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=20)
    parser.add_argument("--events", type=int, default=5000, help="events per client")
    parser.add_argument("--shared", type=float, default=0.2, help="fraction of each client's keys from the pool")
    parser.add_argument("--kill-at", type=float, default=0.5, help="kill -9 the server at this fraction (0: never)")
    parser.add_argument("--dsn", help="an existing PostgreSQL (default: the embedded one, started here)")
    args = parser.parse_args()

    import tempfile

    from nous_assets.service import tokens
    from nous_assets.store.pg import db as pgdb
    from nous_assets.store.pg.service_store import PgServiceStore
    from tests.support import embedded_pg as embedded

    results: dict = {"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count(),
                     "clients": args.clients, "events_per_client": args.events, "shared": args.shared}  # fmt: skip
    pg = None if args.dsn else embedded.start()
    dsn = args.dsn or pg.dsn()
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    work = Path(tempfile.mkdtemp(prefix="nous-serve-load-"))
    env = {**os.environ, "NOUS_BACKEND": "postgres", "NOUS_PG_DSN": dsn, "NOUS_TENANT": tenant,
           "NOUS_DATA_DIR": str(work), "HOME": str(work), "CLAUDE_CONFIG_DIR": str(work / "claude")}  # fmt: skip
    server = Server(env, _free_port())
    try:
        results["server_start_s"] = round(server.start(), 2)
        with pgdb.connect(dsn) as conn:
            store = PgServiceStore(conn)
            client_tokens = [tokens.create(store, client_id=f"c{i}", tenant_id=tenant) for i in range(args.clients)]
        plans = [client_keys(i, args.events, args.shared) for i in range(args.clients)]
        sent_keys = {key for plan in plans for key, _ in plan}
        totals = Totals(sum(len(p) for p in plans))
        threads = [threading.Thread(target=run_client, args=(server.port, client_tokens[i], i, plans[i], totals))
                   for i in range(args.clients)]  # fmt: skip
        started = time.perf_counter()
        for t in threads:
            t.start()
        if args.kill_at > 0:
            while totals.answered < totals.total * args.kill_at and any(t.is_alive() for t in threads):
                time.sleep(0.01)
            answered_at_kill = totals.answered
            server.kill()
            results["killed_after_answers"] = answered_at_kill
            results["restart_s"] = round(server.start(), 2)
            print(f"killed the server (SIGKILL) after {answered_at_kill:,} answers; back in "
                  f"{results['restart_s']} s", flush=True)  # fmt: skip
        for t in threads:
            t.join()
        wall = time.perf_counter() - started
        with pgdb.connect(dsn) as conn:
            rows, distinct = conn.execute(
                "SELECT count(*), count(DISTINCT idempotency_key) FROM learning_events WHERE tenant_id = %s",
                (tenant,)).fetchone()  # fmt: skip
            stored = {r[0] for r in conn.execute(
                "SELECT idempotency_key FROM learning_events WHERE tenant_id = %s", (tenant,))}  # fmt: skip
        results.update({
            "requests": totals.total, "answered": totals.answered, "retried_requests": totals.retries,
            "answered_201": totals.created, "wall_s": round(wall, 2),
            "requests_per_s": round(totals.answered / wall, 1),
            "events_written_per_s": round(rows / wall, 1),
            "latency_ms": {"p50": _pct(totals.latencies, 50), "p95": _pct(totals.latencies, 95),
                           "p99": _pct(totals.latencies, 99), "max": _pct(totals.latencies, 100)},
            "distinct_keys_sent": len(sent_keys), "rows_in_database": rows, "distinct_keys_in_database": distinct,
            "lost": len(sent_keys - stored), "duplicates": rows - distinct, "unexpected": len(stored - sent_keys),
        })  # fmt: skip
    finally:
        server.stop()
        if pg is not None:
            pg.stop()
    print(json.dumps(results, indent=2))
    out_dir = Path(__file__).parent / "results"
    out_dir.mkdir(exist_ok=True)
    path = out_dir / f"serve-load-{time.strftime('%Y%m%dT%H%M%S')}.json"
    path.write_text(json.dumps(results, indent=2))
    print(f"saved {path}")
    ok = results["lost"] == 0 and results["duplicates"] == 0 and results["unexpected"] == 0
    print("zero loss, zero duplicates" if ok else "LOSS OR DUPLICATES: see the figures above")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()

"""The service API over a real server on both backends: auth, tenant isolation, idempotency, limits, errors."""

from __future__ import annotations

import http.client
import json
import threading
import uuid

import pytest
from servekit import append_request, extracted_body, identity

from nous_assets.store.log.events import LearningEvent

ROUTES = ("/v1/whoami", "/v1/resolve", "/v1/packets", "/v1/events", "/v1/artifacts", "/v1/feedback", "/v1/backfill",
          "/v1/ops/replay", "/v1/ops/archive")  # fmt: skip


def test_the_schema_lists_every_route_and_only_health_is_open(served):
    status, schema = served.request("GET", "/openapi.json")
    assert status == 200
    assert set(schema["paths"]) == {"/health", *ROUTES}
    for path, operations in schema["paths"].items():
        for operation in operations.values():
            assert bool(operation.get("security")) == (path != "/health"), path


@pytest.mark.parametrize("route", ROUTES)
def test_every_route_but_health_needs_a_live_token(served, route):
    body = append_request("k", "L1")
    assert served.post(route, body)[0] == 401
    assert served.post(route, body, token="nous_0123456789ab.not-the-right-secret-at-all")[0] == 401
    token = served.token()
    wrong_secret = token[: token.index(".") + 1] + "x" * 43
    status, answer = served.post(route, body, token=wrong_secret)
    assert status == 401 and "token" in answer["error"]
    assert served.request("GET", "/health") == (200, {"status": "ok", "backend": served.kind})


def test_a_revoked_token_is_refused(served):
    token = served.token("bob")
    assert served.post("/v1/whoami", {}, token=token)[0] == 200
    with served.pool.service_store() as store:
        assert store.revoke(at="2030-01-01T00:00:00Z", client_id="bob") == 1
    assert served.post("/v1/whoami", {}, token=token)[0] == 401


def test_tokens_are_stored_hashed_never_in_clear(served):
    token = served.token("carol")
    secret = token.split(".", 1)[1]
    with served.pool.service_store() as store:
        records = [r for r in store.tokens() if r.client_id == "carol"]
    assert len(records) == 1
    assert secret not in repr(records[0]) and token not in repr(records[0])
    assert records[0].digest != secret and len(records[0].salt) == 32


def test_append_event_is_idempotent_under_concurrent_retries(served):
    token = served.token()
    body = append_request("retry-key", "L-retry")
    answers: list[tuple[int, dict]] = []
    lock = threading.Lock()

    def send() -> None:
        result = served.post("/v1/events", body, token=token)
        with lock:
            answers.append(result)

    threads = [threading.Thread(target=send) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    statuses = sorted(status for status, _ in answers)
    assert statuses == [200] * 7 + [201]
    assert len({a["event"]["event_id"] for _, a in answers}) == 1
    assert [a["created"] for _, a in answers].count(True) == 1
    with served.backend() as backend:
        stored = [e for e in backend.events.replay(0) if e.idempotency_key == "retry-key"]
    assert len(stored) == 1 and stored[0].source == "fs_watch" and stored[0].project_id == "proj-a"
    with served.pool.service_store() as store:
        receipt = store.receipt(served.tenant, "event", "retry-key")
    assert receipt is not None and receipt.client_id == "alice" and receipt.event_source == "fs_watch"


def test_a_duplicate_key_returns_the_stored_event_not_the_new_body(served):
    token = served.token()
    first = served.post("/v1/events", append_request("same", "L-one"), token=token)
    second = served.post("/v1/events", {**append_request("same", "L-one"),
                                        "event": extracted_body("L-one", "something else")}, token=token)  # fmt: skip
    assert first[0] == 201 and second[0] == 200
    assert second[1]["event"] == first[1]["event"]


def _seed_tenant(served, tenant: str, project: str) -> int:
    """A tenant's event, projected memory and packet, written directly through its providers."""
    with served.backend(tenant) as backend:
        backend.events.append(LearningEvent("LearningExtracted", f"L-{tenant}", {
            "content": f"secret plan of {tenant}", "extractor_version": "t", "concepts": [], "edges": []},
            "s", project, "fs_watch", f"seed-{tenant}"))  # fmt: skip
        backend.projection.project()
        memory_id = backend.events.get_by_key(f"seed-{tenant}").event_id
        backend.cache.put(project, [(f"{project}:fp", project, "project", "{}", f"# packet of {tenant}",
                                     json.dumps([memory_id]), 20, memory_id, "2030-01-01T00:00:00.000000Z")])
    return memory_id


def test_a_token_of_tenant_a_can_neither_read_nor_write_tenant_b(serve):
    served = serve("postgres", token_cache_seconds=0)
    tenant_a, tenant_b = served.tenant, f"b{uuid.uuid4().hex[:10]}"
    _seed_tenant(served, tenant_a, "shared-project")
    memory_b = _seed_tenant(served, tenant_b, "shared-project")
    token_a = served.token("alice", tenant=tenant_a)

    # read: the same project name gives tenant A's packet only, and B's packets are not listed
    status, answer = served.post("/v1/resolve", {"identity": identity(project="shared-project")}, token=token_a)
    assert status == 200 and answer["additional_context"] == f"# packet of {tenant_a}"
    status, answer = served.post("/v1/packets", {"identity": identity()}, token=token_a)
    assert [p["packet_text"] for p in answer["packets"]] == [f"# packet of {tenant_a}"]
    # naming tenant B in the envelope is refused, for reads and writes
    for route, body in (("/v1/resolve", {"identity": identity(tenant_id=tenant_b)}),
                        ("/v1/packets", {"identity": identity(tenant_id=tenant_b)}),
                        ("/v1/events", append_request("w1", "L-w", tenant_id=tenant_b))):  # fmt: skip
        status, answer = served.post(route, body, token=token_a)
        assert status == 403 and tenant_b in answer["error"], route
    # B's memory id is not found through A's token, and A's writes land in A only
    status, _ = served.post("/v1/feedback", {"identity": identity(), "memory_id": memory_b, "signal": "corrected",
                            "idempotency": {"idempotency_key": "fb", "schema_version": 2}}, token=token_a)  # fmt: skip
    assert status == 404
    assert served.post("/v1/events", append_request("w2", "L-w"), token=token_a)[0] == 201
    with served.backend(tenant_b) as backend:
        assert [e.idempotency_key for e in backend.events.replay(0)] == [f"seed-{tenant_b}"]
    with served.backend(tenant_a) as backend:
        assert [e.idempotency_key for e in backend.events.replay(0)] == [f"seed-{tenant_a}", "w2"]


def test_a_sqlite_server_refuses_tokens_of_another_tenant(serve):
    served = serve("sqlite", token_cache_seconds=0)
    other = served.token("mallory", tenant="someone-else")
    for route in ROUTES:
        status, answer = served.post(route, append_request("k", "L"), token=other)
        assert status == 403 and served.tenant in answer["error"], route
    with served.backend() as backend:
        assert backend.events.last_event_id() == 0


def test_the_envelope_must_name_the_token_s_own_client(served):
    token = served.token("alice")
    status, answer = served.post("/v1/events", append_request("k", "L", client="bob"), token=token)
    assert status == 403 and "alice" in answer["error"]


def test_a_body_over_the_limit_is_refused_with_413(serve):
    served = serve("sqlite", serve_max_body_bytes=4096)
    token = served.token()
    big = append_request("big", "L-big")
    big["event"]["payload"]["content"] = "x" * 5000
    status, answer = served.post("/v1/events", big, token=token)
    assert status == 413 and "4,096" in answer["error"]
    # a chunked body declares no length: it is counted as it streams
    conn = http.client.HTTPConnection("127.0.0.1", served.port, timeout=30)
    try:
        conn.request("POST", "/v1/events", body=iter([b"{" + b" " * 3000, b" " * 3000 + b"}"]),
                     headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
                     encode_chunked=True)  # fmt: skip
        assert conn.getresponse().status == 413
    finally:
        conn.close()
    small = append_request("small", "L-small")
    assert served.post("/v1/events", small, token=token)[0] == 201


@pytest.mark.parametrize(
    "raw",
    [b"not json", b"[]", b'{"identity": {}}', b'{"identity": {"project_id": "p\\u0000", "session_id": "s", '
     b'"client_id": "alice", "event_source": "fs_watch"}}', b"{\"identity\": 7}"],
)  # fmt: skip
def test_invalid_requests_are_one_line_4xx(served, raw):
    status, answer = served.request("POST", "/v1/resolve", raw=raw, token=served.token())
    assert 400 <= status < 500 and "\n" not in answer["error"] and answer["error"]


@pytest.mark.parametrize("raw", [b"not json", b'{"identity": ', b"\xff\xfe{}"])
def test_a_body_that_is_not_json_is_400_as_the_readme_says(served, raw):
    status, answer = served.request("POST", "/v1/resolve", raw=raw, token=served.token())
    assert status == 400 and answer["error"].startswith("the body is not JSON") and "\n" not in answer["error"]


def test_an_invalid_event_is_422_naming_the_problem(served):
    token = served.token()
    body = {"identity": identity(), "idempotency": {"idempotency_key": "r1", "schema_version": 2},
            "event": {"event_type": "LearningReinforced", "learning_id": "never-extracted",
                      "payload": {"reinforcement_delta": 0.1}}}  # fmt: skip
    status, answer = served.post("/v1/events", body, token=token)
    assert status == 422 and "never-extracted" in answer["error"]


def test_backfill_lands_valid_items_and_says_why_the_others_were_refused(served):
    token = served.token()
    events = [{"idempotency": {"idempotency_key": f"b{i}", "schema_version": 2}, "event": extracted_body(f"LB{i}")}
              for i in range(3)]  # fmt: skip
    events.insert(1, {"idempotency": {"idempotency_key": "bad", "schema_version": 2},
                      "event": {"event_type": "LearningArchived", "learning_id": "ghost", "payload": {"reason": "x"}}})
    artifacts = [{"idempotency": {"idempotency_key": "a1", "schema_version": 2},
                  "artifact": {"transcript_path": "/t/s.jsonl", "file_offset": 10, "payload": {"date": "2026-03-01"}}}]
    status, answer = served.post("/v1/backfill", {"identity": identity(), "events": events, "artifacts": artifacts},
                                 token=token)  # fmt: skip
    assert status == 200
    assert [(r["idempotency_key"], r["created"], r["error"] is None) for r in answer["events"]] == [
        ("b0", True, True), ("bad", False, False), ("b1", True, True), ("b2", True, True)]
    assert "ghost" in answer["events"][1]["error"]
    extracts = served.kind == "sqlite"  # nothing drains a PostgreSQL queue: its artifacts are refused, not queued
    assert answer["artifacts"][0]["created"] is extracts
    assert (answer["artifacts"][0]["error"] is None) is extracts
    again = served.post("/v1/backfill", {"identity": identity(), "events": events, "artifacts": artifacts},
                        token=token)[1]  # fmt: skip
    assert [r["created"] for r in again["events"]] == [False] * 4 and again["artifacts"][0]["created"] is False
    assert [r["id"] for r in again["events"]] == [r["id"] for r in answer["events"]]
    with served.backend() as backend:
        assert sorted(e.idempotency_key for e in backend.events.replay(0)) == ["b0", "b1", "b2"]
        assert (backend.queue.counts().get("pending", 0) if extracts else backend.queue) == (1 if extracts else None)


def test_ingest_artifact_dedups_and_enqueues(served):
    token = served.token()
    artifact = {"transcript_path": "/t/s.jsonl", "file_inode": "42", "file_offset": 0, "payload": {"n": 1}}
    body = {"identity": identity(), "idempotency": {"idempotency_key": "art", "schema_version": 2},
            "artifact": artifact}  # fmt: skip
    if served.kind == "postgres":  # nothing extracts artifacts there: one line saying so, nothing queued
        dated = body | {"artifact": artifact | {"payload": {"date": "2026-03-01"}}}
        status, answer = served.post("/v1/artifacts", dated, token=token)
        assert status == 501 and "not extracted on the postgres backend" in answer["error"]
        with served.backend() as backend:
            assert backend.queue is None  # no queue there to hold it
        return
    status, answer = served.post("/v1/artifacts", body, token=token)  # no day: refused now, not later in the queue
    assert status == 422 and "payload" in answer["error"] and "date" in answer["error"]
    artifact["payload"]["date"] = "2026-03-01"
    first = served.post("/v1/artifacts", body, token=token)
    second = served.post("/v1/artifacts", body, token=token)
    assert (first[0], second[0]) == (201, 200) and first[1]["ingest_id"] == second[1]["ingest_id"]
    with served.backend() as backend:
        item = backend.queue.get(first[1]["ingest_id"])
    assert item.transcript_path == "/t/s.jsonl" and item.file_inode == "42" and item.status == "pending"


def test_feedback_reinforces_weakens_or_only_records(served):
    token = served.token()
    memory_id = served.post("/v1/events", append_request("m1", "L-m"), token=token)[1]["event"]["event_id"]
    if served.kind == "sqlite":  # a laptop's pipeline keeps its projection current; on PostgreSQL (a team tenant,
        with served.backend() as backend:  # projected in the team's working database) the memory is its event
            backend.projection.project()

    def feedback(signal: str, key: str) -> tuple[int, dict]:
        return served.post("/v1/feedback", {"identity": identity(), "memory_id": memory_id, "signal": signal,
                           "session_outcome": "success", "idempotency": {"idempotency_key": key,
                                                                         "schema_version": 2}}, token=token)

    status, answer = feedback("useful", "f1")
    assert status == 201 and answer["event"]["event_type"] == "LearningReinforced"
    assert answer["event"]["payload"]["session_outcome"] == "success"
    assert feedback("useful", "f1")[0] == 200
    assert feedback("corrected", "f2")[1]["event"]["event_type"] == "LearningWeakened"
    assert feedback("ignored", "f3") == (200, {"created": False, "event": None})
    memory_id += 1000  # no such memory: the same one-line 404 on both backends
    status, answer = feedback("useful", "f4")
    assert status == 404 and "no memory #" in answer["error"] and "\n" not in answer["error"]
    with served.backend() as backend:
        assert [e.idempotency_key for e in backend.events.replay(0)] == ["m1", "f1", "f2"]


def test_ops_need_the_ops_scope_and_replay_projects(served):
    plain, ops = served.token("dev"), served.token("admin", ops=True)
    served.post("/v1/events", append_request("o1", "L-o", client="dev"), token=plain)
    status, answer = served.post("/v1/ops/replay", {"identity": identity("dev")}, token=plain)
    assert status == 403 and "ops" in answer["error"]
    status, answer = served.post("/v1/ops/replay", {"identity": identity("admin"), "mode": "rebuild"}, token=ops)
    assert status == 200 and answer["checkpoint"] >= 1
    with served.backend() as backend:
        assert backend.projection.memory(answer["checkpoint"]).learning_id == "L-o"


def test_archive_runs_on_sqlite_and_answers_501_on_postgres(served):
    ops = served.token("admin", ops=True)
    status, answer = served.post("/v1/ops/archive", {"identity": identity("admin"), "before": "2001-01-01"},
                                 token=ops)  # fmt: skip
    if served.kind == "postgres":
        assert status == 501 and "PostgreSQL" in answer["error"]
    else:
        assert status == 200 and answer["events"] == 0
    status, answer = served.post("/v1/ops/archive", {"identity": identity("admin"), "before": "99999999d"}, token=ops)
    assert status in (422, 501) and "\n" not in answer["error"]


def test_the_service_package_holds_no_sql():
    """Storage is the store's: the service calls providers, never a query of its own."""
    from pathlib import Path

    import nous_assets.service as service

    words = ("SELECT ", "INSERT ", "UPDATE ", "DELETE ", "CREATE TABLE")
    offenders = [f"{p.name}: {w}" for p in Path(service.__file__).parent.glob("*.py") for w in words
                 if w in p.read_text()]  # fmt: skip
    assert offenders == []


def test_resolve_context_picks_the_packet_the_hook_would(served):
    token = served.token()
    row = ("proj-a", "project")
    with served.backend() as backend:
        backend.cache.put("proj-a", [
            ("proj-a:main", *row, json.dumps({"branch": "main"}), "# on main", "[1]", 9, 1, "2030-01-01T00:00:00Z"),
            ("proj-a:dev", *row, json.dumps({"branch": "dev"}), "# on dev", "[2]", 8, 1, "2030-01-02T00:00:00Z"),
        ])  # fmt: skip
        backend.cache.put("*", [("*:g", "*", "global", "{}", "# global", "[3]", 8, 1, "2030-01-01T00:00:00Z")])
    ask = {"identity": identity(), "fingerprint": {"branch": "main"}}
    assert served.post("/v1/resolve", ask, token=token)[1] == {
        "additional_context": "# on main", "cache_key": "proj-a:main", "scope": "project", "memory_ids": [1],
        "interventions": []}  # fmt: skip
    ask["fingerprint"]["branch"] = "dev"
    assert served.post("/v1/resolve", ask, token=token)[1]["cache_key"] == "proj-a:dev"
    other = {"identity": identity(project="proj-unknown")}
    assert served.post("/v1/resolve", other, token=token)[1]["additional_context"] == "# global"

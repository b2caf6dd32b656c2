"""IngestQueueStore contract: idempotent enqueue, claim/lease/heartbeat, completion only by the lease
holder, the sweeper, backoff, dead letters and their requeue; concurrent claimers get disjoint items."""

from __future__ import annotations

import threading
from datetime import timedelta

import pytest

from nous_assets.store.protocols import IngestQueueStore
from nous_assets.store.sqlite.queue import backoff_seconds
from nous_assets.timeutil import parse_time, to_iso

T0 = "2025-06-01T12:00:00.000000Z"


def at(seconds: float) -> str:
    return to_iso(parse_time(T0) + timedelta(seconds=seconds))


def put(q, key: str, *, now: str = T0, payload: dict | None = None):
    return q.enqueue(
        source="fs_watch", project_id="proj", session_id="sess", transcript_path="/t/sess.jsonl", file_inode="1:2",
        file_offset=7, payload={"key": key} if payload is None else payload, idempotency_key=key, now=now,
    )  # fmt: skip


def test_providers_satisfy_the_protocol(backend):
    assert isinstance(backend.queue, IngestQueueStore)


def test_enqueue_is_idempotent_and_never_resurrects_a_finished_key(backend):
    q = backend.queue
    item, created = put(q, "k1", payload={"lines": [1, 2], "note": "é"})
    assert created and item.status == "pending" and item.payload == {"lines": [1, 2], "note": "é"}
    again, created_again = put(q, "k1", payload={"other": True})
    assert not created_again and again == item
    (claimed,) = q.claim("w1", now=at(1))
    assert q.complete(claimed.ingest_id, "w1", now=at(2))
    done, created = put(q, "k1", now=at(3))
    assert not created and done.status == "completed"
    assert q.counts()["completed"] == 1 and sum(q.counts().values()) == 1


@pytest.mark.parametrize(
    "field, value, message",
    [("source", "carrier_pigeon", "source"), ("file_offset", -1, "file_offset"), ("project_id", " ", "project_id")],
)
def test_a_bad_artifact_is_refused_with_the_field_named(backend, field, value, message):
    artifact = dict(source="fs_watch", project_id="p", session_id="s", transcript_path="/t", file_inode=None,
                    file_offset=0, payload={}, idempotency_key="k")  # fmt: skip
    artifact[field] = value
    with pytest.raises(ValueError, match=message):
        backend.queue.enqueue(**artifact)
    assert sum(backend.queue.counts().values()) == 0


def test_claim_leases_due_items_oldest_first_and_only_once(backend):
    q = backend.queue
    ids = [put(q, f"k{i}")[0].ingest_id for i in range(5)]
    first = q.claim("w1", limit=3, lease_seconds=60, now=at(1))
    assert [i.ingest_id for i in first] == ids[:3]
    assert all(i.status == "processing" and i.claimed_by == "w1" and i.lease_expires_at == at(61) for i in first)
    second = q.claim("w2", limit=10, now=at(1))
    assert [i.ingest_id for i in second] == ids[3:]
    assert q.claim("w3", now=at(1)) == []


def test_heartbeat_extends_only_a_held_lease(backend):
    q = backend.queue
    put(q, "k1")
    (item,) = q.claim("w1", lease_seconds=10, now=at(0))
    assert q.heartbeat(item.ingest_id, "w1", lease_seconds=10, now=at(5))
    assert q.get(item.ingest_id).lease_expires_at == at(15)
    assert not q.heartbeat(item.ingest_id, "w2", now=at(6))  # not the holder
    assert not q.heartbeat(item.ingest_id, "w1", now=at(16))  # ran out
    assert not q.complete(item.ingest_id, "w1", now=at(16))  # cannot complete a lost lease either
    assert q.get(item.ingest_id).status == "processing"


def test_the_sweeper_returns_expired_leases_with_backoff(backend):
    q = backend.queue
    put(q, "k1")
    put(q, "k2")
    stale, fresh = q.claim("w1", limit=2, lease_seconds=10, now=at(0))
    assert q.heartbeat(fresh.ingest_id, "w1", lease_seconds=100, now=at(5))
    assert q.sweep_expired(backoff_base_seconds=30, now=at(20)) == 1
    swept = q.get(stale.ingest_id)
    assert swept.status == "pending" and swept.retry_count == 1 and swept.last_error == "lease_expired"
    assert swept.claimed_by is None and swept.next_attempt_at == at(20 + backoff_seconds(1, 30))
    assert q.get(fresh.ingest_id).status == "processing"
    assert q.claim("w2", now=at(21)) == []  # not due yet
    (again,) = q.claim("w2", now=at(20 + backoff_seconds(1, 30)))
    assert again.ingest_id == stale.ingest_id


def test_failures_back_off_then_dead_letter_and_can_be_requeued(backend):
    q = backend.queue
    item = put(q, "k1")[0]
    now = 0.0
    statuses = []
    for attempt in range(1, 4):
        (claimed,) = q.claim("w1", now=at(now))
        statuses.append(q.fail(claimed.ingest_id, "w1", f"boom {attempt}", max_attempts=3, backoff_base_seconds=10,
                               now=at(now)))  # fmt: skip
        if attempt < 3:
            assert q.get(item.ingest_id).next_attempt_at == at(now + backoff_seconds(attempt, 10))
            now += backoff_seconds(attempt, 10)
    assert statuses == ["failed", "failed", "dead_letter"]
    dead = q.get(item.ingest_id)
    assert dead.retry_count == 3 and dead.last_error == "boom 3" and dead.next_attempt_at is None
    assert q.claim("w1", now=at(10**6)) == []
    assert q.counts()["dead_letter"] == 1
    assert q.requeue_dead_letter(now=at(now + 1)) == 1
    revived = q.get(item.ingest_id)
    assert revived.status == "pending" and revived.retry_count == 0 and revived.last_error == "boom 3"


def test_fail_by_a_non_holder_writes_nothing(backend):
    q = backend.queue
    item = put(q, "k1")[0]
    q.claim("w1", now=at(0))
    assert q.fail(item.ingest_id, "w2", "not mine", now=at(1)) == "processing"
    assert q.get(item.ingest_id).retry_count == 0
    with pytest.raises(LookupError):
        q.fail(10**12, "w1", "nothing", now=at(1))


def test_concurrent_claimers_get_disjoint_items(make_backend, request):
    first = make_backend("a")
    for i in range(40):
        put(first.queue, f"k{i}")
    kind = first.capabilities.name
    if kind == "sqlite":  # each worker its own connection to the same file
        from nous_assets.store.backend import sqlite_backend
        from nous_assets.store.db import open_db

        path = request.getfixturevalue("tmp_path") / "cortex-a.db"
        workers = [sqlite_backend(open_db(path)) for _ in range(4)]
    else:
        from nous_assets.store.backend import postgres_backend
        from nous_assets.store.pg.db import open_pg

        dsn = request.getfixturevalue("pg_server").dsn()
        workers = [postgres_backend(open_pg(dsn), first.tenant_id) for _ in range(4)]
    got: dict[str, list[int]] = {}

    def work(name: str, b) -> None:
        mine: list[int] = []
        while batch := b.queue.claim(name, limit=3, now=at(1)):
            mine += [i.ingest_id for i in batch]
        got[name] = mine

    threads = [threading.Thread(target=work, args=(f"w{n}", b)) for n, b in enumerate(workers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for b in workers:
        b.close()
    claimed = [i for ids in got.values() for i in ids]
    assert len(claimed) == len(set(claimed)) == 40
    assert first.queue.counts()["processing"] == 40

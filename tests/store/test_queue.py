"""The durable ingest queue: lifecycle, idempotency, leases, recovery, retries and concurrent claimers."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from nous_assets.store.db import atomic, open_db
from nous_assets.store.ingest import cursors
from nous_assets.store.sqlite import queue
from nous_assets.timeutil import parse_time, to_iso

T0 = "2025-06-01T12:00:00.000000Z"


def at(seconds: float) -> str:
    return to_iso(parse_time(T0) + timedelta(seconds=seconds))


def put(conn, key: str, *, now: str = T0, offset: int = 0, payload: dict | None = None, source: str = "fs_watch"):
    return queue.enqueue(
        conn,
        source=source,
        project_id="proj",
        session_id="sess",
        transcript_path="/t/sess.jsonl",
        file_inode="1:2",
        file_offset=offset,
        payload={"key": key} if payload is None else payload,
        idempotency_key=key,
        now=now,
    )


def status_of(conn, ingest_id: int) -> str:
    item = queue.get(conn, ingest_id)
    assert item is not None
    return item.status


def test_full_lifecycle(conn):
    item, created = put(conn, "k1", offset=120, payload={"lines": [1, 2], "note": "é"})
    assert created
    assert item.status == "pending" and item.retry_count == 0
    assert item.payload == {"lines": [1, 2], "note": "é"}
    assert item.file_offset == 120 and item.file_inode == "1:2" and item.source == "fs_watch"
    assert item.claimed_by is None and item.next_attempt_at is None
    assert item.created_at == item.updated_at == T0

    [claimed] = queue.claim(conn, "w1", now=at(1))
    assert claimed.ingest_id == item.ingest_id
    assert claimed.status == "processing"
    assert claimed.claimed_by == "w1" and claimed.claimed_at == at(1)
    assert claimed.lease_expires_at == at(1 + 300)
    assert queue.claim(conn, "w2", now=at(2)) == []

    assert queue.heartbeat(conn, item.ingest_id, "w1", lease_seconds=300, now=at(100))
    assert queue.get(conn, item.ingest_id).lease_expires_at == at(400)

    assert queue.complete(conn, item.ingest_id, "w1", now=at(200))
    done = queue.get(conn, item.ingest_id)
    assert done.status == "completed" and done.is_terminal
    assert done.claimed_by is done.claimed_at is done.lease_expires_at is None
    assert done.updated_at == at(200)
    assert not queue.complete(conn, item.ingest_id, "w1", now=at(201))  # already completed
    assert queue.claim(conn, "w1", now=at(10_000)) == []
    assert queue.counts(conn) == {"pending": 0, "processing": 0, "completed": 1, "failed": 0, "dead_letter": 0}


def test_enqueue_is_idempotent_and_never_resurrects(conn):
    first, created = put(conn, "dup", payload={"v": 1})
    again, created_again = put(conn, "dup", payload={"v": 2}, source="fs_reconcile", now=at(5))
    assert created and not created_again
    assert again == first  # stored row untouched: first payload, source and timestamps
    assert conn.execute("SELECT count(*) FROM ingest_events").fetchone()[0] == 1

    [c] = queue.claim(conn, "w", now=at(1))
    assert queue.complete(conn, c.ingest_id, "w", now=at(2))
    item, created = put(conn, "dup", now=at(3))
    assert not created and item.status == "completed"

    dead, _ = put(conn, "dies")
    for n in range(3):
        [c] = queue.claim(conn, "w", now=at(10_000 * (n + 1)))
        queue.fail(conn, c.ingest_id, "w", "boom", now=at(10_000 * (n + 1)))
    assert status_of(conn, dead.ingest_id) == "dead_letter"
    item, created = put(conn, "dies", now=at(50_000))
    assert not created and item.status == "dead_letter" and item.retry_count == 3
    assert queue.claim(conn, "w", now=at(100_000)) == []


def test_enqueue_validates_input(conn):
    with pytest.raises(ValueError, match="source"):
        put(conn, "k", source="user_review")
    with pytest.raises(ValueError, match="idempotency_key"):
        put(conn, " ")
    with pytest.raises(ValueError, match="file_offset"):
        put(conn, "k", offset=-1)
    with pytest.raises(ValueError, match="payload"):
        put(conn, "k", payload=[1])  # type: ignore[arg-type]
    assert queue.counts(conn)["pending"] == 0


def test_claim_orders_by_id_respects_limit_and_due_time(conn):
    ids = [put(conn, f"k{i}")[0].ingest_id for i in range(5)]
    first = queue.claim(conn, "w", limit=2, now=at(0))
    assert [i.ingest_id for i in first] == ids[:2]
    assert queue.fail(conn, ids[0], "w", "transient", now=at(0)) == "failed"
    failed = queue.get(conn, ids[0])
    assert failed.retry_count == 1 and failed.next_attempt_at == at(30) and failed.last_error == "transient"
    assert failed.claimed_by is None

    # the failed item is not due yet: the next claims take the rest in id order
    assert [i.ingest_id for i in queue.claim(conn, "w", limit=10, now=at(29))] == ids[2:]
    assert queue.claim(conn, "w", now=at(29.999999)) == []
    [retried] = queue.claim(conn, "w", now=at(30))
    assert retried.ingest_id == ids[0] and retried.retry_count == 1
    assert queue.claim(conn, "w", limit=0, now=at(31)) == []


def test_claim_rejects_bad_arguments(conn):
    with pytest.raises(ValueError):
        queue.claim(conn, "", now=T0)
    with pytest.raises(ValueError):
        queue.claim(conn, "w", lease_seconds=0, now=T0)


def _claim_until_empty(db_path: Path, worker: str, got: list[int], start: threading.Barrier) -> None:
    conn = open_db(db_path)
    try:
        start.wait()
        while batch := queue.claim(conn, worker, limit=5):
            time.sleep(0.002)  # "work", so the other claimer gets a turn
            for item in batch:
                assert queue.complete(conn, item.ingest_id, worker)
                got.append(item.ingest_id)
    finally:
        conn.close()


def test_two_threads_claim_disjoint_sets_covering_all(conn, db_path):
    all_ids = {put(conn, f"k{i}", now=at(-1))[0].ingest_id for i in range(200)}
    start = threading.Barrier(2)
    results: dict[str, list[int]] = {"a": [], "b": []}
    threads = [threading.Thread(target=_claim_until_empty, args=(db_path, w, results[w], start)) for w in results]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads)
    a, b = set(results["a"]), set(results["b"])
    assert len(results["a"]) == len(a) and len(results["b"]) == len(b)
    assert a.isdisjoint(b)
    assert a | b == all_ids
    assert a and b  # both really took part
    assert queue.counts(conn)["completed"] == 200


CLAIMER = textwrap.dedent(
    """
    import json, sys
    from nous_assets.store.sqlite import queue
    from nous_assets.store.db import open_db

    db, worker, out = sys.argv[1], sys.argv[2], sys.argv[3]
    conn = open_db(db)
    got = []
    while batch := queue.claim(conn, worker, limit=3):
        for item in batch:
            assert queue.complete(conn, item.ingest_id, worker)
            got.append(item.ingest_id)
    json.dump(got, open(out, "w"))
    """
)


def test_two_processes_claim_disjoint_sets_covering_all(tmp_path, conn, db_path):
    all_ids = {put(conn, f"k{i}", now=at(-1))[0].ingest_id for i in range(200)}
    script = tmp_path / "claimer.py"
    script.write_text(CLAIMER)
    outs = {w: tmp_path / f"{w}.json" for w in ("a", "b")}
    procs = [subprocess.Popen([sys.executable, str(script), str(db_path), w, str(o)]) for w, o in outs.items()]
    assert [p.wait(timeout=300) for p in procs] == [0, 0]
    a, b = (json.loads(o.read_text()) for o in outs.values())
    assert len(a) + len(b) == 200
    assert set(a).isdisjoint(b)
    assert set(a) | set(b) == all_ids
    rows = conn.execute("SELECT claimed_by, status, retry_count FROM ingest_events").fetchall()
    assert {tuple(r) for r in rows} == {(None, "completed", 0)}


def test_sweep_recovers_expired_leases_with_backoff_then_dead_letters(conn):
    item, _ = put(conn, "k")
    queue.claim(conn, "w1", lease_seconds=60, now=at(0))
    assert queue.sweep_expired(conn, now=at(60)) == 0  # lease_expires_at == now is not stale yet
    assert queue.sweep_expired(conn, now=at(61)) == 1
    swept = queue.get(conn, item.ingest_id)
    assert swept.status == "pending" and swept.retry_count == 1 and swept.last_error == "lease_expired"
    assert swept.next_attempt_at == at(61 + 30)
    assert swept.claimed_by is swept.claimed_at is swept.lease_expires_at is None
    assert queue.sweep_expired(conn, now=at(62)) == 0  # idempotent

    assert queue.claim(conn, "w2", lease_seconds=60, now=at(90)) == []
    [again] = queue.claim(conn, "w2", lease_seconds=60, now=at(91))
    assert again.retry_count == 1
    assert queue.sweep_expired(conn, now=at(152)) == 1
    swept = queue.get(conn, item.ingest_id)
    assert swept.retry_count == 2 and swept.next_attempt_at == at(152 + 60)  # base * 2**(2-1)

    queue.claim(conn, "w3", lease_seconds=60, now=at(212))
    assert queue.sweep_expired(conn, now=at(300)) == 1
    dead = queue.get(conn, item.ingest_id)
    assert dead.status == "dead_letter" and dead.retry_count == 3 and dead.last_error == "lease_expired"
    assert dead.next_attempt_at is None and dead.claimed_by is None
    assert queue.claim(conn, "w4", now=at(100_000)) == []


def test_sweep_only_touches_stale_processing_rows(conn):
    ids = [put(conn, f"k{i}")[0].ingest_id for i in range(4)]
    queue.claim(conn, "short", limit=1, lease_seconds=10, now=at(0))
    queue.claim(conn, "long", limit=1, lease_seconds=1000, now=at(0))
    assert queue.sweep_expired(conn, max_attempts=5, backoff_base_seconds=7, now=at(11)) == 1
    assert [status_of(conn, i) for i in ids] == ["pending", "processing", "pending", "pending"]
    assert queue.get(conn, ids[0]).next_attempt_at == at(18)
    assert queue.get(conn, ids[2]).retry_count == 0


def test_heartbeat_extends_only_for_the_holder(conn):
    item, _ = put(conn, "k")
    queue.claim(conn, "w1", lease_seconds=60, now=at(0))
    assert not queue.heartbeat(conn, item.ingest_id, "intruder", lease_seconds=60, now=at(10))
    assert queue.heartbeat(conn, item.ingest_id, "w1", lease_seconds=60, now=at(50))
    assert queue.get(conn, item.ingest_id).lease_expires_at == at(110)
    assert queue.sweep_expired(conn, now=at(100)) == 0  # would have expired at 60 without the heartbeat
    assert queue.complete(conn, item.ingest_id, "w1", now=at(105))
    assert not queue.heartbeat(conn, item.ingest_id, "w1", lease_seconds=60, now=at(106))  # no longer processing


def test_heartbeat_after_expiry_is_refused(conn):
    item, _ = put(conn, "k")
    queue.claim(conn, "w1", lease_seconds=60, now=at(0))
    assert not queue.heartbeat(conn, item.ingest_id, "w1", lease_seconds=60, now=at(61))
    assert queue.get(conn, item.ingest_id).lease_expires_at == at(60)


def test_expired_worker_cannot_complete_and_item_is_processed_once(conn):
    item, _ = put(conn, "k")
    completions = Counter()

    queue.claim(conn, "slow", lease_seconds=60, now=at(0))
    # lease ran out: no completion even before any sweeper ran
    assert not queue.complete(conn, item.ingest_id, "slow", now=at(61))
    assert status_of(conn, item.ingest_id) == "processing"

    assert queue.sweep_expired(conn, now=at(61)) == 1
    [again] = queue.claim(conn, "fast", lease_seconds=60, now=at(91))
    assert again.ingest_id == item.ingest_id

    # the slow worker wakes up: it cannot complete, heartbeat or fail the item another worker holds
    assert not queue.complete(conn, item.ingest_id, "slow", now=at(95))
    assert not queue.heartbeat(conn, item.ingest_id, "slow", lease_seconds=60, now=at(95))
    assert queue.fail(conn, item.ingest_id, "slow", "late failure", now=at(95)) == "processing"
    held = queue.get(conn, item.ingest_id)
    assert held.claimed_by == "fast" and held.retry_count == 1 and held.last_error == "lease_expired"

    for worker in ("slow", "fast", "fast"):
        if queue.complete(conn, item.ingest_id, worker, now=at(100)):
            completions[item.ingest_id] += 1
    assert completions == {item.ingest_id: 1}
    assert status_of(conn, item.ingest_id) == "completed"


def test_fail_retries_with_exponential_backoff_then_dead_letters(conn):
    item, _ = put(conn, "k")
    now = 0
    expected_delays = [30, 60]
    for attempt, delay in enumerate(expected_delays, start=1):
        [c] = queue.claim(conn, "w", now=at(now))
        assert c.retry_count == attempt - 1
        assert queue.fail(conn, item.ingest_id, "w", f"error {attempt}", now=at(now)) == "failed"
        failed = queue.get(conn, item.ingest_id)
        assert failed.retry_count == attempt and failed.last_error == f"error {attempt}"
        assert failed.next_attempt_at == at(now + delay)
        assert queue.claim(conn, "w", now=at(now + delay - 1)) == []
        now += delay
    [c] = queue.claim(conn, "w", now=at(now))
    assert queue.fail(conn, item.ingest_id, "w", "x" * 5000, now=at(now)) == "dead_letter"
    dead = queue.get(conn, item.ingest_id)
    assert dead.status == "dead_letter" and dead.retry_count == 3
    assert dead.last_error == "x" * 2000 and dead.next_attempt_at is None
    # dead letters are never claimed again, whatever the time, and fail() on them changes nothing
    assert queue.claim(conn, "w", now=at(10**8)) == []
    assert queue.fail(conn, item.ingest_id, "w", "again", now=at(10**8)) == "dead_letter"
    assert queue.get(conn, item.ingest_id) == dead


def test_fail_honours_max_attempts_and_rejects_unknown_ids(conn):
    item, _ = put(conn, "k")
    queue.claim(conn, "w", now=T0)
    assert queue.fail(conn, item.ingest_id, "w", "fatal", max_attempts=1, now=T0) == "dead_letter"
    with pytest.raises(LookupError):
        queue.fail(conn, 999_999, "w", "x", now=T0)
    with pytest.raises(ValueError):
        queue.fail(conn, item.ingest_id, "w", "x", max_attempts=0, now=T0)


def test_backoff_is_deterministic_and_capped():
    assert [queue.backoff_seconds(n, 30) for n in range(1, 6)] == [30, 60, 120, 240, 480]
    assert queue.backoff_seconds(8, 30) == 3600  # 3840 capped at one hour
    assert queue.backoff_seconds(10_000, 30) == 3600
    assert queue.backoff_seconds(0, 30) == 0


def test_requeue_dead_letter_one_or_all(conn):
    ids = [put(conn, f"k{i}")[0].ingest_id for i in range(3)]
    queue.claim(conn, "w", limit=3, now=T0)
    for i in ids:
        queue.fail(conn, i, "w", "fatal", max_attempts=1, now=T0)
    assert queue.counts(conn)["dead_letter"] == 3

    assert queue.requeue_dead_letter(conn, ids[1], now=at(5)) == 1
    back = queue.get(conn, ids[1])
    assert back.status == "pending" and back.retry_count == 0 and back.next_attempt_at is None
    assert back.last_error == "fatal"  # kept for the operator
    assert queue.requeue_dead_letter(conn, ids[1], now=at(6)) == 0  # no longer a dead letter
    assert [i.ingest_id for i in queue.claim(conn, "w", limit=10, now=at(6))] == [ids[1]]

    assert queue.requeue_dead_letter(conn, now=at(7)) == 2
    assert [i.ingest_id for i in queue.claim(conn, "w", limit=10, now=at(7))] == [ids[0], ids[2]]
    assert queue.requeue_dead_letter(conn, now=at(8)) == 0


def test_counts_and_items(conn):
    assert queue.counts(conn) == dict.fromkeys(queue.STATUSES, 0)
    ids = [put(conn, f"k{i}")[0].ingest_id for i in range(4)]
    queue.claim(conn, "w", limit=2, now=T0)
    queue.complete(conn, ids[0], "w", now=T0)
    assert queue.counts(conn) == {"pending": 2, "processing": 1, "completed": 1, "failed": 0, "dead_letter": 0}
    assert [i.ingest_id for i in queue.items(conn)] == ids
    assert [i.ingest_id for i in queue.items(conn, "pending")] == ids[2:]
    assert [i.ingest_id for i in queue.items(conn, limit=1)] == ids[:1]
    assert queue.items(conn, "failed") == []
    with pytest.raises(ValueError):
        queue.items(conn, "bogus")


def test_complete_and_promote_share_the_callers_transaction(conn):
    """Cursor promotion rides on completion: if the batch rolls back, neither happened."""
    item, _ = put(conn, "k", offset=500)
    queue.claim(conn, "w", now=T0)
    with pytest.raises(RuntimeError), atomic(conn):
        assert queue.complete(conn, item.ingest_id, "w", now=at(1))
        assert cursors.promote(conn, item.transcript_path, item.file_inode, item.file_offset, None, now=at(1))
        raise RuntimeError("projection failed")
    assert status_of(conn, item.ingest_id) == "processing"
    assert cursors.get_cursor(conn, item.transcript_path) is None

    with atomic(conn):
        assert queue.complete(conn, item.ingest_id, "w", now=at(2))
        cursors.promote(conn, item.transcript_path, item.file_inode, item.file_offset, None, now=at(2))
    assert status_of(conn, item.ingest_id) == "completed"
    assert cursors.get_cursor(conn, item.transcript_path).offset == 500


def test_processed_extractions_helpers(conn):
    assert not queue.is_processed(conn, "p", "s", 0)
    assert queue.processed_version(conn, "p", "s", 0) is None
    queue.mark_processed(conn, "p", "s", 0, 11, "heuristic-1", now=T0)
    assert queue.is_processed(conn, "p", "s", 0)
    assert queue.processed_version(conn, "p", "s", 0) == "heuristic-1"
    assert not queue.is_processed(conn, "p", "s", 1)
    assert not queue.is_processed(conn, "p", "other", 0)

    queue.mark_processed(conn, "p", "s", 0, 42, "heuristic-2", now=at(1))
    row = conn.execute("SELECT * FROM processed_extractions").fetchall()
    assert len(row) == 1
    assert (row[0]["latest_event_id"], row[0]["latest_extractor_version"], row[0]["updated_at"]) == (
        42,
        "heuristic-2",
        at(1),
    )


# --- property: random interleavings never lose or double-process an item ---------------------------------------

LEASE = 60
MAX_ATTEMPTS = 3
WORKERS = ("a", "b", "c")


class QueueMachine(RuleBasedStateMachine):
    def __init__(self) -> None:
        super().__init__()
        self.tmp = tempfile.mkdtemp(prefix="nous-queue-")
        self.conn = open_db(Path(self.tmp) / "q.db", create=True)
        self.t = 0.0
        self.keys: set[str] = set()
        self.completions: Counter[int] = Counter()
        self.claims: set[tuple[int, str]] = set()  # (ingest_id, worker) as the worker believes

    @property
    def now(self) -> str:
        return at(self.t)

    def rows(self) -> dict[int, dict]:
        return {r["ingest_id"]: dict(r) for r in self.conn.execute("SELECT * FROM ingest_events")}

    def holds(self, row: dict, worker: str, *, live: bool) -> bool:
        return (
            row["status"] == "processing"
            and row["claimed_by"] == worker
            and (not live or row["lease_expires_at"] >= self.now)
        )

    @rule(k=st.integers(0, 11))
    def enqueue(self, k):
        item, created = put(self.conn, f"k{k}", now=self.now)
        assert created == (f"k{k}" not in self.keys)
        self.keys.add(f"k{k}")
        assert item.idempotency_key == f"k{k}"

    @rule(worker=st.sampled_from(WORKERS), limit=st.integers(1, 4))
    def claim(self, worker, limit):
        before = self.rows()
        due = sorted(
            i
            for i, r in before.items()
            if r["status"] in ("pending", "failed")
            and (r["next_attempt_at"] is None or r["next_attempt_at"] <= self.now)
        )
        got = queue.claim(self.conn, worker, limit=limit, lease_seconds=LEASE, now=self.now)
        assert [i.ingest_id for i in got] == due[:limit]
        for item in got:
            assert item.status == "processing" and item.claimed_by == worker
            self.claims.add((item.ingest_id, worker))

    @rule(data=st.data())
    def complete(self, data):
        if not self.claims:
            return
        ingest_id, worker = data.draw(st.sampled_from(sorted(self.claims)))
        self.claims.discard((ingest_id, worker))
        expected = self.holds(self.rows()[ingest_id], worker, live=True)
        assert queue.complete(self.conn, ingest_id, worker, now=self.now) == expected
        if expected:
            self.completions[ingest_id] += 1

    @rule(data=st.data())
    def fail(self, data):
        if not self.claims:
            return
        ingest_id, worker = data.draw(st.sampled_from(sorted(self.claims)))
        self.claims.discard((ingest_id, worker))
        row = self.rows()[ingest_id]
        status = queue.fail(self.conn, ingest_id, worker, "boom", max_attempts=MAX_ATTEMPTS, now=self.now)
        if self.holds(row, worker, live=False):
            assert status == ("dead_letter" if row["retry_count"] + 1 >= MAX_ATTEMPTS else "failed")
            assert self.rows()[ingest_id]["retry_count"] == row["retry_count"] + 1
        else:
            assert status == row["status"] and self.rows()[ingest_id] == row

    @rule(data=st.data())
    def heartbeat(self, data):
        if not self.claims:
            return
        ingest_id, worker = data.draw(st.sampled_from(sorted(self.claims)))
        expected = self.holds(self.rows()[ingest_id], worker, live=True)
        assert queue.heartbeat(self.conn, ingest_id, worker, lease_seconds=LEASE, now=self.now) == expected

    @rule(seconds=st.sampled_from([1, 29, 30, 59, 61, 120, 600]))
    def advance(self, seconds):
        self.t += seconds

    @rule()
    def sweep(self):
        before = self.rows()
        stale = {i for i, r in before.items() if r["status"] == "processing" and r["lease_expires_at"] < self.now}
        assert queue.sweep_expired(self.conn, max_attempts=MAX_ATTEMPTS, now=self.now) == len(stale)
        after = self.rows()
        for i in stale:
            assert after[i]["retry_count"] == before[i]["retry_count"] + 1
            assert after[i]["status"] in ("pending", "dead_letter") and after[i]["last_error"] == "lease_expired"

    @invariant()
    def rows_are_consistent(self):
        rows = self.rows()
        assert len(rows) == len(self.keys)
        for i, r in rows.items():
            claimed = (r["claimed_by"], r["claimed_at"], r["lease_expires_at"])
            if r["status"] == "processing":
                assert None not in claimed
            else:
                assert claimed == (None, None, None)
            assert self.completions[i] == (1 if r["status"] == "completed" else 0)
            if r["status"] == "dead_letter":
                assert r["retry_count"] >= MAX_ATTEMPTS and r["next_attempt_at"] is None
            if r["status"] == "failed":
                assert 1 <= r["retry_count"] < MAX_ATTEMPTS and r["next_attempt_at"] is not None

    def teardown(self):
        try:
            for _ in range(4 * MAX_ATTEMPTS):  # drain: everything ends completed or dead-lettered
                self.t += 2 * 3600
                queue.sweep_expired(self.conn, max_attempts=MAX_ATTEMPTS, now=self.now)
                for item in queue.claim(self.conn, "drain", limit=1000, lease_seconds=LEASE, now=self.now):
                    assert queue.complete(self.conn, item.ingest_id, "drain", now=self.now)
                    self.completions[item.ingest_id] += 1
            rows = self.rows()
            assert len(rows) == len(self.keys)
            assert all(r["status"] in queue.TERMINAL_STATUSES for r in rows.values())
            for i, r in rows.items():
                assert self.completions[i] == (1 if r["status"] == "completed" else 0)
        finally:
            self.conn.close()
            shutil.rmtree(self.tmp, ignore_errors=True)


QueueMachine.TestCase.settings = settings(
    max_examples=40, stateful_step_count=30, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
test_queue_state_machine = QueueMachine.TestCase


def test_the_provider_enqueues_idempotently(conn):
    """``POST /v1/artifacts`` enqueues through the SQLite provider (the contract's ``IngestQueueStore``; PostgreSQL
    has none: nothing extracts there)."""
    from nous_assets.store.protocols import IngestQueueStore
    from nous_assets.store.sqlite.queue import SqliteIngestQueueStore

    provider = SqliteIngestQueueStore(conn)
    assert isinstance(provider, IngestQueueStore)
    artifact = dict(source="fs_watch", project_id="p", session_id="s", transcript_path="/t", file_inode=None,
                    file_offset=0, idempotency_key="k")  # fmt: skip
    item, created = provider.enqueue(**artifact, payload={"lines": [1, 2], "note": "é"})
    again, created_again = provider.enqueue(**artifact, payload={"other": True})
    assert created and not created_again and again == item == provider.get(item.ingest_id)
    assert item.payload == {"lines": [1, 2], "note": "é"} and provider.counts()["pending"] == 1
    with pytest.raises(ValueError, match="file_offset"):
        provider.enqueue(**(artifact | {"file_offset": -1, "idempotency_key": "k2"}), payload={})
    assert sum(provider.counts().values()) == 1

"""IngestQueueStore contract: the enqueue side ``POST /v1/artifacts`` uses, idempotent and validated.

Claims, leases, heartbeats, the sweeper, backoff and dead letters are the laptop worker's, on SQLite only:
``tests/store/test_queue.py`` holds them (threads and processes claiming one file)."""

from __future__ import annotations

import pytest

from nous_assets.store.protocols import IngestQueueStore

T0 = "2025-06-01T12:00:00.000000Z"


def put(q, key: str, *, now: str = T0, payload: dict | None = None):
    return q.enqueue(
        source="fs_watch", project_id="proj", session_id="sess", transcript_path="/t/sess.jsonl", file_inode="1:2",
        file_offset=7, payload={"key": key} if payload is None else payload, idempotency_key=key, now=now,
    )  # fmt: skip


def test_providers_satisfy_the_protocol(backend):
    assert isinstance(backend.queue, IngestQueueStore)


def test_enqueue_is_idempotent(backend):
    q = backend.queue
    item, created = put(q, "k1", payload={"lines": [1, 2], "note": "é"})
    assert created and item.status == "pending" and item.payload == {"lines": [1, 2], "note": "é"}
    again, created_again = put(q, "k1", payload={"other": True})
    assert not created_again and again == item
    assert q.get(item.ingest_id) == item
    assert q.counts()["pending"] == 1 and sum(q.counts().values()) == 1


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

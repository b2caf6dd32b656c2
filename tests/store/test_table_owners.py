"""Store functions that took over SQL from capture/, extract/ and embed/, over a real migrated cortex.db."""

from __future__ import annotations

import json

import numpy as np

from nous_assets.store.db import atomic
from nous_assets.store.ingest import cursors
from nous_assets.store.search import chunk_vectors, memory_lookup
from nous_assets.store.sqlite import queue

T0 = "2025-06-01T12:00:00.000000Z"


def test_day_progress_keeps_the_furthest_completed_offset(conn):
    assert cursors.completed_offset(conn, "/t/a.jsonl", "1:2", "2025-06-01") is None
    with atomic(conn):
        cursors.record_day_progress(conn, "/t/a.jsonl", "1:2", "2025-06-01", 500, 500, T0)
        cursors.record_day_progress(conn, "/t/a.jsonl", "1:2", "2025-06-01", 800, 0, T0)  # scanned, not completed
    assert cursors.completed_offset(conn, "/t/a.jsonl", "1:2", "2025-06-01") == 500
    assert cursors.completed_offset(conn, "/t/a.jsonl", "9:9", "2025-06-01") is None  # another inode
    cursors.rewind(conn, "/t/a.jsonl", "1:2", None, now=T0)
    assert cursors.completed_offset(conn, "/t/a.jsonl", "1:2", "2025-06-01") == 0


def _enqueue(conn, key: str, path: str, date: str) -> int:
    item, _ = queue.enqueue(
        conn, source="fs_watch", project_id="p", session_id="s", transcript_path=path, file_inode="1:2",
        file_offset=0, payload={"date": date}, idempotency_key=key, now=T0,
    )  # fmt: skip
    return item.ingest_id


def test_incomplete_paths_are_the_files_with_unfinished_items_of_that_day(conn):
    _enqueue(conn, "a", "/t/a.jsonl", "2025-06-01")
    _enqueue(conn, "b", "/t/b.jsonl", "2025-06-01")
    _enqueue(conn, "c", "/t/c.jsonl", "2025-06-02")
    claimed = {item.transcript_path: item for item in queue.claim(conn, "w", limit=10, now=T0)}
    assert queue.complete(conn, claimed["/t/a.jsonl"].ingest_id, "w", now=T0)
    assert queue.incomplete_paths(conn, "2025-06-01") == {"/t/b.jsonl"}
    assert queue.incomplete_paths(conn, "2025-06-02") == {"/t/c.jsonl"}


def _chunk(conn, n: int, text: str) -> None:
    conn.execute(
        "INSERT INTO transcript_chunks(id, uuid, project_id, session_id, date, role, timestamp, text, source_path, "
        "line_offsets_json, uuids_json) VALUES (?, ?, 'p', 's', '2025-06-01', 'user', ?, ?, '/t/a.jsonl', '[0]', '[]')",
        (n, f"u{n}", T0, text),
    )


def test_chunk_vectors_round_trip(conn):
    with atomic(conn):
        chunk_vectors.recreate_table(conn, 3)
        for n, text in enumerate(("first", "second", "third"), start=1):
            _chunk(conn, n, text)
    assert "FLOAT[3]" in (chunk_vectors.table_sql(conn) or "")
    assert chunk_vectors.pending_count(conn, "m", 3) == 3
    assert chunk_vectors.pending_count(conn, None, 0) == 3
    assert chunk_vectors.pending_texts(conn, "m", 3, 2) == [(1, "first"), (2, "second")]
    unit = np.eye(3, dtype=np.float32)
    with atomic(conn):
        for n in (1, 2, 3):
            chunk_vectors.put(conn, n, unit[n - 1].tobytes(), "m", 3, f"h{n}", T0)
        chunk_vectors.put(conn, 3, unit[2].tobytes(), "m", 3, "h3", T0)  # replacing is allowed
    assert chunk_vectors.pending_count(conn, "m", 3) == 0
    assert chunk_vectors.pending_count(conn, "other-model", 3) == 3
    nearest = chunk_vectors.knn(conn, unit[1].tobytes(), 2)
    assert nearest[0][0] == 2 and abs(nearest[0][1]) < 1e-6
    within = chunk_vectors.knn(conn, unit[1].tobytes(), 2, chunk_ids=[1, 3])
    assert {cid for cid, _ in within} == {1, 3}
    with atomic(conn):
        chunk_vectors.delete(conn, 2)
    assert chunk_vectors.pending_texts(conn, "m", 3, 10) == [(2, "second")]


def test_injected_clocks_come_from_the_memories_a_session_was_given(conn):
    for n, clock in ((1, {"s1": 1}), (2, None)):
        conn.execute(
            "INSERT INTO memories(id, learning_id, content, type, scope, project_id, source_session, "
            "reinforcement_score, created_at, temporal_confidence, vector_clock_json, extractor_version, "
            "last_event_id) VALUES (?, ?, ?, 'learning', 'project', 'p', 's0', 1.0, ?, 'high', ?, 'v1', ?)",
            (n, f"l{n}", f"memory {n}", T0, json.dumps(clock) if clock else None, n),
        )
        conn.execute("INSERT INTO access_log(memory_id, session_id, accessed_at) VALUES (?, 'sess', ?)", (n, T0))
    assert memory_lookup.injected_clocks(conn, "sess", limit=63) == ['{"s1": 1}']
    assert memory_lookup.injected_clocks(conn, "another", limit=63) == []

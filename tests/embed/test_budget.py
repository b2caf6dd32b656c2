"""A run's embedding budget: the deadline is checked before every batch (not every eight), the first batch
always runs so each run makes progress, and what is left is counted for the next run."""

from __future__ import annotations

import json
import time

from test_embeddings import FakeEmbedder, extracted

from nous_assets.embed.backlog import embedding_backlog
from nous_assets.embed.chunk_embedding import embed_pending_chunks, pending_chunk_count
from nous_assets.embed.memory_embedding import embed_pending
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project


def _memories(conn, count: int) -> None:
    store = SqliteEventStore(conn)
    for i in range(count):
        store.append(extracted(f"m{i}", f"Memory number {i}: prefer tool {i} for task {i * 7}.", [f"tool{i}"]))
    project(conn)


def _chunks(conn, count: int) -> None:
    for i in range(count):
        conn.execute(
            "INSERT INTO transcript_chunks(uuid, project_id, session_id, date, role, timestamp, text, source_path, "
            "line_offsets_json, uuids_json) VALUES (?, 'p', 's', '2026-01-01', 'user', '2026-01-01T00:00:00Z', ?, "
            "'/t.jsonl', ?, ?)",
            (f"u{i}", f"chunk text {i} about deploying service {i}", json.dumps([i * 100]), json.dumps([f"u{i}"])),
        )
    conn.commit()


def test_a_passed_deadline_embeds_one_batch_and_reports_the_rest(conn):
    _memories(conn, 10)
    provider = FakeEmbedder()
    stats = embed_pending(conn, provider, batch_size=3, deadline=time.monotonic())
    assert stats.batches == 1 and provider.texts_embedded == 3
    assert stats.remaining == 7
    assert embedding_backlog(conn) == 7
    stats = embed_pending(conn, provider, batch_size=3, deadline=time.monotonic() + 3600)
    assert stats.batches == 3 and stats.remaining == 0
    assert embedding_backlog(conn) == 0


def test_chunks_are_read_and_embedded_one_batch_at_a_time_within_the_deadline(conn):
    _chunks(conn, 7)
    provider = FakeEmbedder()
    done, left = embed_pending_chunks(conn, provider, batch_size=2, deadline=time.monotonic())
    assert (done, left) == (2, 5) and [len(c) for c in provider.calls] == [2]
    done, left = embed_pending_chunks(conn, provider, batch_size=2, max_batches=2)
    assert (done, left) == (4, 1)
    done, left = embed_pending_chunks(conn, provider, batch_size=2)
    assert (done, left) == (1, 0) and pending_chunk_count(conn, provider.model, provider.dimensions) == 0

"""SQL of the redaction rescan: the sanctioned payload rewrite, chunk and cache updates, and the audit trail.

Why here: the store owns SQL, and the rescan (:mod:`nous_assets.capture.rescan`) is the only writer allowed
to change a stored event. :func:`rescan_transaction` sets ``nous_meta.redaction_rescan_in_progress`` inside
one ``BEGIN IMMEDIATE`` transaction (migration 006's trigger lets ``payload_json`` change only then) and
removes it before committing, so no other writer ever sees the flag and a crash leaves nothing half-done.
Audit rows say what kind of secret was removed, where and when, never the secret.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import transcript_chunks
from nous_assets.timeutil import now_iso

RESCAN_FLAG = "redaction_rescan_in_progress"


@dataclass(frozen=True)
class AuditRow:
    """One redaction by the rescan: ``count`` secrets of ``kind`` removed from ``field`` of ``row_ref``."""

    location: str  # learning_events, transcript_chunks, injection_cache, lake:transcripts/date=…
    row_ref: str  # event_id, chunk id, cache key, turn uuid
    field: str  # a JSON path into the payload ($.content) or a column / turn field
    kind: str
    count: int


@contextlib.contextmanager
def rescan_transaction(conn: Connection) -> Iterator[Connection]:
    """One write transaction in which event payloads may be rewritten (and only in it)."""
    with atomic(conn):
        conn.execute("INSERT OR REPLACE INTO nous_meta(key, value) VALUES (?, ?)", (RESCAN_FLAG, now_iso()))
        yield conn
        conn.execute("DELETE FROM nous_meta WHERE key = ?", (RESCAN_FLAG,))


def iter_event_payloads(conn: Connection, batch: int = 5000) -> Iterator[tuple[int, str]]:
    """``(event_id, payload_json)`` of every event, in pages (the log can hold millions)."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT event_id, payload_json FROM learning_events WHERE event_id > ? ORDER BY event_id LIMIT ?",
            (last, batch),
        ).fetchall()
        if not rows:
            return
        yield from ((int(r[0]), r[1]) for r in rows)
        last = int(rows[-1][0])


def event_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM learning_events").fetchone()[0])


def rewrite_event_payload(conn: Connection, event_id: int, payload: Mapping) -> None:
    """Replace one event's payload (inside :func:`rescan_transaction`; the trigger refuses it elsewhere)."""
    payload_json = json.dumps(dict(payload), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    conn.execute("UPDATE learning_events SET payload_json = ? WHERE event_id = ?", (payload_json, event_id))


def iter_chunks(conn: Connection, batch: int = 5000) -> Iterator[tuple[int, str]]:
    """``(id, text)`` of every transcript chunk, in pages."""
    last = 0
    while True:
        rows = conn.execute(
            "SELECT id, text FROM transcript_chunks WHERE id > ? ORDER BY id LIMIT ?", (last, batch)
        ).fetchall()
        if not rows:
            return
        yield from ((int(r[0]), r[1]) for r in rows)
        last = int(rows[-1][0])


def chunk_count(conn: Connection) -> int:
    return int(conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0])


def rewrite_chunk_text(conn: Connection, chunk_id: int, text: str) -> None:
    """New chunk text, re-indexed in FTS; its vector and concepts are dropped so the next run redoes them."""
    conn.execute("UPDATE transcript_chunks SET text = ? WHERE id = ?", (text, chunk_id))
    transcript_chunks.reindex(conn, [chunk_id])  # its neighbours' FTS context holds its text too
    conn.execute("DELETE FROM chunk_vectors WHERE chunk_id = ?", (chunk_id,))
    conn.execute("DELETE FROM chunk_vector_meta WHERE chunk_id = ?", (chunk_id,))
    conn.execute("DELETE FROM chunk_concepts WHERE chunk_id = ?", (chunk_id,))  # derived from the old text


def iter_packets(conn: Connection) -> list[tuple[str, str]]:
    """``(cache_key, packet_text)`` of every precomputed injection packet."""
    return [(r[0], r[1]) for r in conn.execute("SELECT cache_key, packet_text FROM injection_cache ORDER BY 1")]


def rewrite_packet(conn: Connection, cache_key: str, text: str) -> None:
    conn.execute(
        "UPDATE injection_cache SET packet_text = ?, char_count = ? WHERE cache_key = ?", (text, len(text), cache_key)
    )


def iter_queue_errors(conn: Connection) -> list[tuple[int, str]]:
    """``(ingest_id, last_error)`` of queue items that failed (error messages may quote bad input)."""
    return [
        (int(r[0]), r[1])
        for r in conn.execute("SELECT ingest_id, last_error FROM ingest_events WHERE last_error IS NOT NULL")
    ]


def rewrite_queue_error(conn: Connection, ingest_id: int, message: str) -> None:
    conn.execute("UPDATE ingest_events SET last_error = ? WHERE ingest_id = ?", (message, ingest_id))


def drop_memory_vectors(conn: Connection, memory_ids: set[int]) -> None:
    """Forget the vectors of these memories (ids are event ids), so they are embedded again from new text."""
    ids = json.dumps(sorted(memory_ids))
    with atomic(conn):
        conn.execute("DELETE FROM vectors WHERE memory_id IN (SELECT value FROM json_each(?))", (ids,))
        conn.execute("DELETE FROM vector_meta WHERE memory_id IN (SELECT value FROM json_each(?))", (ids,))


def record_audit(conn: Connection, run_id: str, redactor_version: str, rows: list[AuditRow]) -> None:
    now = now_iso()
    conn.executemany(
        "INSERT INTO redaction_audit(run_id, redactor_version, location, row_ref, field, kind, count, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [(run_id, redactor_version, r.location, r.row_ref, r.field, r.kind, r.count, now) for r in rows],
    )


def audit_rows(conn: Connection, run_id: str | None = None) -> list[dict]:
    """Audit rows (of one run, or all), oldest first."""
    sql = "SELECT run_id, redactor_version, location, row_ref, field, kind, count, created_at FROM redaction_audit"
    params: tuple = ()
    if run_id is not None:
        sql += " WHERE run_id = ?"
        params = (run_id,)
    cols = ("run_id", "redactor_version", "location", "row_ref", "field", "kind", "count", "created_at")
    return [dict(zip(cols, r, strict=True)) for r in conn.execute(sql + " ORDER BY id", params)]

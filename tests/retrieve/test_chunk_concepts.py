"""Stored chunk concepts (migration 015): the same sets a query would compute, never trusted once the text changed."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from nous_assets.capture.parser import parse_chunk
from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.episodic import chunk_candidates, index_chunk_concepts
from nous_assets.retrieve.query import Query, concepts_from_text
from nous_assets.settings import load_settings
from nous_assets.store.ingest import redaction
from nous_assets.store.search import chunk_concepts

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"
SOURCE = SHARED / "spotter" / "8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl"
QUERIES = ["sqlite migration", "git push upstream branch", "run the tests before commit"]


def _real_turns():
    turns = parse_chunk(SOURCE.read_bytes(), base_offset=0, path=str(SOURCE), project_id="spotter").turns
    return [t for t in turns if t.role in ("user", "assistant") and t.text.strip()]


def _candidates(conn, settings):
    return {
        q: {c.id: c.concepts for c in chunk_candidates(conn, Query.from_text(q, project_id="spotter"), settings)}
        for q in QUERIES
    }


def test_stored_concepts_are_what_a_query_computes_and_indexing_is_idempotent(conn, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    upsert_chunks(conn, _real_turns())
    before = _candidates(conn, settings)  # nothing stored yet: computed per query
    assert sum(len(v) for v in before.values()) > 10
    stored = index_chunk_concepts(conn)
    assert stored == conn.execute("SELECT count(*) FROM transcript_chunks").fetchone()[0]
    assert index_chunk_concepts(conn) == 0
    for chunk_id, text in conn.execute("SELECT id, text FROM transcript_chunks LIMIT 50"):
        assert set(chunk_concepts.for_ids(conn, [chunk_id])[chunk_id][1]) == set(concepts_from_text(text))
    assert _candidates(conn, settings) == before


def test_a_changed_text_is_never_scored_with_its_old_concepts(conn, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    turns = _real_turns()
    upsert_chunks(conn, turns)
    index_chunk_concepts(conn)
    chunk_id, text, uuid = conn.execute(
        "SELECT id, text, uuid FROM transcript_chunks WHERE length(text) BETWEEN 40 AND 900 ORDER BY id"
    ).fetchone()
    with conn:  # a stale row left behind (as by an older writer): the digest no longer matches
        conn.execute("UPDATE transcript_chunks SET text = ? WHERE id = ?", (text + " zebrafish", chunk_id))
    found = {c.id: c.concepts for c in chunk_candidates(conn, Query.from_text(text[:300]), settings)}
    assert "zebrafish" in found[chunk_id]
    edited = [replace(t, text=t.text + " narwhal") if t.uuid == uuid else t for t in turns]
    upsert_chunks(conn, edited)  # capture refreshes a changed chunk: its stored concepts go with its vector
    assert chunk_concepts.for_ids(conn, [chunk_id]) == {}
    assert index_chunk_concepts(conn) == 1
    assert "narwhal" in json.loads(
        conn.execute("SELECT concepts_json FROM chunk_concepts WHERE chunk_id = ?", (chunk_id,)).fetchone()[0]
    )
    with conn:
        redaction.rewrite_chunk_text(conn, chunk_id, "redacted [REDACTED:secret]")
    assert chunk_concepts.for_ids(conn, [chunk_id]) == {}

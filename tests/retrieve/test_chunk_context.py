"""Chunk FTS with neighbouring turns and the session date (migration 012), on a real SQLite file."""

from __future__ import annotations

from dataclasses import replace

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from nous_assets.store.db import MIGRATIONS, _split_statements, connect, migrate
from nous_assets.store.ingest import redaction, transcript_chunks
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-app"


def _turn(n: int, text: str, session: str = "s1", day: str = "2023-05-08"):
    return chunk_turn(n, text, role="user" if n % 2 else "assistant", session=session, day=day)


TURNS = ["where did you spend the weekend", "we drove up to the mountains", "any hiking", "yes, a long trail",
         "sounds lovely", "unrelated remark about invoices"]


def _fts_row(conn, text_like: str) -> tuple[str, str, str]:
    return conn.execute(
        "SELECT f.text, f.context, f.dated FROM chunks_fts f JOIN transcript_chunks c ON c.id = f.rowid "
        "WHERE c.text LIKE ?", (f"%{text_like}%",)).fetchone()


def test_a_chunk_is_indexed_with_two_neighbours_each_side_and_its_date(conn):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS)])
    text, context, dated = _fts_row(conn, "any hiking")
    assert text == "any hiking"
    assert context.split(" ")[:3] == ["where", "did", "you"] and "a long trail" in context and "lovely" in context
    assert "invoices" not in context  # three turns away
    assert dated == "2023-05-08 8 May 2023"


def test_chunks_arriving_later_refresh_their_neighbours_context(conn):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS[:3])])
    assert "trail" not in _fts_row(conn, "mountains")[1]
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS) if i >= 3])
    assert "a long trail" in _fts_row(conn, "mountains")[1]
    once = conn.execute("SELECT rowid, text, context, dated FROM chunks_fts ORDER BY rowid").fetchall()
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS)])  # idempotent: the same index again
    assert conn.execute("SELECT rowid, text, context, dated FROM chunks_fts ORDER BY rowid").fetchall() == once


def test_other_sessions_are_no_context(conn):
    upsert_chunks(conn, [_turn(0, "first session words")] + [_turn(1, "second session words", session="s2")])
    assert _fts_row(conn, "first session")[1] == ""


def test_a_redacted_chunk_leaves_no_trace_in_its_neighbours_context(conn):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS)])
    chunk_id = conn.execute("SELECT id FROM transcript_chunks WHERE text = 'any hiking'").fetchone()[0]
    redaction.rewrite_chunk_text(conn, chunk_id, "[REDACTED]")
    assert not any("hiking" in (c or "") for (c,) in conn.execute("SELECT context FROM chunks_fts"))


def test_a_reply_is_found_by_the_words_of_the_turn_it_answers(conn, tmp_path):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS)])
    query = Query.from_text("weekend", project_id=PROJECT)
    context_off = load_settings({"HOME": str(tmp_path)})
    context_off = replace(context_off, retrieve=replace(context_off.retrieve, chunk_context_weight=0.0,
                                                        chunk_date_weight=0.0))
    assert [r.content for r in retrieve(conn, query, context_off, include_episodes=True)] == [TURNS[0]]
    found = [r.content for r in retrieve(conn, query, load_settings({"HOME": str(tmp_path)}), include_episodes=True)]
    assert found[0] == TURNS[0] and TURNS[1] in found and TURNS[5] not in found


def test_own_words_outrank_the_same_words_in_context(conn):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(TURNS)])
    hits = transcript_chunks.text_matches(conn, '"trail"', project_id=PROJECT, as_at=None, limit=10,
                                          weights=(1.0, 0.5, 0.5))
    best = min(hits, key=hits.get)
    assert conn.execute("SELECT text FROM transcript_chunks WHERE id = ?", (best,)).fetchone()[0] == TURNS[3]
    assert len(hits) == 5  # the chunk and its four neighbours
    own_only = transcript_chunks.text_matches(conn, '"trail"', project_id=PROJECT, as_at=None, limit=10)
    assert list(own_only) == [best]


def test_a_question_naming_the_day_finds_that_days_chunks(conn):
    upsert_chunks(conn, [_turn(0, "we talked about invoices", day="2023-05-08"),
                         _turn(0, "we talked about invoices", session="s2", day="2023-06-09")])
    hits = transcript_chunks.text_matches(conn, '"invoices" OR "may"', project_id=PROJECT, as_at=None, limit=10,
                                          weights=(1.0, 0.5, 0.5))
    best = min(hits, key=hits.get)
    assert conn.execute("SELECT date FROM transcript_chunks WHERE id = ?", (best,)).fetchone()[0] == "2023-05-08"


def test_migration_012_rebuilds_the_index_of_existing_chunks(tmp_path):
    """A database at 011 with chunks gets the same index rows as chunks written after the upgrade."""
    conn = connect(tmp_path / "old.db", create=True)
    for version, _name, sql in MIGRATIONS:
        if version > 11:
            break
        for statement in _split_statements(sql):
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {version}")
    for i, t in enumerate(TURNS):
        conn.execute("INSERT INTO transcript_chunks(uuid, project_id, session_id, date, role, timestamp, text, "
                     "source_path, line_offsets_json, uuids_json) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                     (f"u{i}", PROJECT, "s1", "2023-05-08", "user", f"2023-05-08T10:00:{i:02d}Z", t, "/x", "[0]", "[]"))
    conn.commit()
    assert 12 in migrate(conn)
    by_sql = conn.execute("SELECT rowid, text, context, dated FROM chunks_fts ORDER BY rowid").fetchall()
    assert len(by_sql) == len(TURNS) and "any hiking" in by_sql[1][2]
    transcript_chunks.reindex(conn, [r[0] for r in by_sql])
    assert conn.execute("SELECT rowid, text, context, dated FROM chunks_fts ORDER BY rowid").fetchall() == by_sql
    conn.close()

"""Owner-narrowed search (migration 016): a project's queries read only its own (and global) rows in the
indexes, and return exactly what reading every project's rows and filtering afterwards returned."""

from __future__ import annotations

import random
from dataclasses import dataclass

import pytest

from nous_assets.evaluate.corpus import TOPICS, build_corpus, project_cwd
from nous_assets.store import db
from nous_assets.store.db import atomic
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.projection import identity
from nous_assets.store.search import memory_search, owners
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, rebuild
from resolver.project import project_id_from_cwd
from tests.store.eventgen import extracted
from tests.store.old_schema import copy_at_schema

T0 = "2026-01-01T00:00:00.000000Z"
PROJECTS = [project_id_from_cwd(project_cwd(p)) for p in range(6)]


@dataclass
class Scope:
    project_id: str | None
    include_expired: bool = False
    as_at: str | None = None
    reference_time: str = "2027-01-01T00:00:00Z"


@pytest.fixture(scope="module")
def corpus(tmp_path_factory):
    path = tmp_path_factory.mktemp("owners") / "c.db"
    conn = build_corpus(path, 900, projects=6, seed=5)  # ~3% global scope
    yield conn
    conn.close()


def _owners_follow_memories(conn) -> None:
    memories = {int(r[0]): (r[1], r[2]) for r in conn.execute("SELECT id, project_id, scope FROM memories")}
    for memory_id, owner in conn.execute("SELECT memory_id, owner FROM concepts"):
        assert owner == owners.concept_owner(*memories[memory_id])
    fts = dict(conn.execute("SELECT rowid, owner FROM memories_fts").fetchall())
    assert fts == {i: owners.memory_token(*pm) for i, pm in memories.items()}


def _reference_concept_members(conn, concept: str, scope: Scope, window: int) -> list[int]:
    """Before migration 016: every project's members of the concept, newest first, filtered afterwards."""
    where, params = memory_search._filters(scope)
    sql = (
        "SELECT c.memory_id FROM concepts c JOIN memories m ON m.id = c.memory_id "
        f"WHERE c.concept = :concept AND {where} ORDER BY c.id DESC LIMIT :window"
    )
    return [int(r[0]) for r in conn.execute(sql, {**params, "concept": concept, "window": window})]


def _reference_fts(conn, match: str, scope: Scope, limit: int) -> dict[int, float]:
    where, params = memory_search._filters(scope)
    rows = conn.execute(
        "SELECT m.id, bm25(memories_fts, 1.0, 1.0, 0.0) AS r FROM memories_fts JOIN memories m "
        f"ON m.id = memories_fts.rowid WHERE memories_fts MATCH :match AND {where} ORDER BY r, m.id LIMIT :limit",
        {**params, "match": f"{{content concepts}} : ({match})", "limit": limit},
    ).fetchall()
    return {int(r[0]): float(r[1]) for r in rows}


def test_the_projector_writes_every_owner(corpus):
    _owners_follow_memories(corpus)
    assert corpus.execute("SELECT count(*) FROM concepts WHERE owner IS NULL").fetchone()[0] > 0  # some global


@pytest.mark.parametrize("window", [5, 40, 400])
def test_a_projects_concept_members_are_those_of_reading_every_project(corpus, window):
    concepts = [r[0] for r in corpus.execute("SELECT DISTINCT concept FROM concepts ORDER BY 1")]
    for project_id in [*PROJECTS, None]:
        for concept in concepts:
            scope = Scope(project_id)
            assert memory_search.concept_members(corpus, concept, scope, window) == _reference_concept_members(
                corpus, concept, scope, window
            ), (project_id, concept)


def test_a_projects_text_matches_and_their_bm25_are_those_of_reading_every_project(corpus):
    rng = random.Random(8)
    words = sorted({w for ws in TOPICS.values() for w in ws})
    for _ in range(40):
        match = " OR ".join(f'"{w}"' for w in rng.sample(words, 3))
        for project_id in [*PROJECTS, None]:
            scope = Scope(project_id)
            got = memory_search.fts_matches(corpus, match, scope, 10_000)
            want = _reference_fts(corpus, match, scope, 10_000)
            assert got.keys() == want.keys() and all(got[i] == pytest.approx(want[i]) for i in got)


def test_owners_follow_a_memory_that_changes_project_or_scope(tmp_path):
    conn = db.open_db(tmp_path / "c.db", create=True)
    store = SqliteEventStore(conn)
    store.append_many(
        [
            extracted("a", "pin the rust toolchain", concepts=["rust", "toolchain"], project="f1", session="s1"),
            extracted("b", "vitest needs jsdom", concepts=["vitest"], project="f2", session="s2"),
        ]
    )
    project(conn)
    # a refresh that makes "a" global, then identity moves folder f2's memories to project p9
    store.append_many([extracted("a", "pin the rust toolchain", key="x:a2", project="f1",
                                 payload_extra={"scope": "global"})])
    project(conn)
    with atomic(conn):
        identity.remap_memories(conn, identity.ProjectMap(folders={"f2": "p9"}), ["f2"])
    assert conn.execute("SELECT scope FROM memories WHERE learning_id = 'a'").fetchone()[0] == "global"
    assert conn.execute("SELECT project_id FROM memories WHERE learning_id = 'b'").fetchone()[0] == "p9"
    _owners_follow_memories(conn)
    assert memory_search.concept_members(conn, "vitest", Scope("p9"), 10) != []
    assert memory_search.concept_members(conn, "vitest", Scope("f2"), 10) == []
    assert memory_search.fts_matches(conn, '"rust"', Scope("f2"), 10)  # a global memory is everyone's
    rebuild(conn)
    _owners_follow_memories(conn)
    conn.close()


def _chunks(conn, folders: list[str], per_folder: int) -> None:
    rows = [
        (f"u-{f}-{n}", folder, f"s-{f}-{n % 3}", "2026-01-01", "user", T0, f"deploy text {n} of {folder}",
         "/t.jsonl", "[0]", "[]")
        for f, folder in enumerate(folders)
        for n in range(per_folder)
    ]
    transcript_chunks.upsert_chunk_rows(conn, rows)


def test_a_projects_chunk_matches_are_those_of_reading_every_folder(tmp_path):
    conn = db.open_db(tmp_path / "c.db", create=True)
    _chunks(conn, ["fa", "fb", "fc", "fd"], 30)
    with atomic(conn):  # a session of fb belongs to fa; folder fd is mapped to project fc
        conn.executemany(
            "INSERT INTO project_aliases(kind, alias, project_id, evidence, updated_at) VALUES (?, ?, ?, 'test', ?)",
            [("session", "s-1-0", "fa", T0), ("folder", "fd", "fc", T0)],
        )
    for project_id in ["fa", "fb", "fc", "fd", "nowhere"]:
        got = transcript_chunks.text_matches(conn, '"deploy"', project_id=project_id, as_at=None, limit=1000)
        where, params = transcript_chunks._scope(project_id, None)
        want = {
            int(r[0])
            for r in conn.execute(f"SELECT c.id FROM transcript_chunks c WHERE 1{where}", params).fetchall()
        }
        assert set(got) == want, project_id
    assert len(transcript_chunks.text_matches(conn, '"deploy"', project_id="fa", as_at=None, limit=1000)) == 40
    conn.close()


def test_migration_016_gives_existing_rows_the_owners_the_writers_give(tmp_path):
    new = build_corpus(tmp_path / "new.db", 200, projects=3, seed=2)
    _chunks(new, ["fa", "fb"], 10)
    new.close()
    old = copy_at_schema(tmp_path / "new.db", tmp_path / "old.db", 16)
    assert "owner" not in [r[1] for r in old.execute("PRAGMA table_info(concepts)")]
    assert 16 in db.migrate(old)
    new = db.open_db(tmp_path / "new.db")
    for sql in (
        "SELECT id, memory_id, concept, owner FROM concepts ORDER BY id",
        "SELECT rowid, content, concepts, owner FROM memories_fts ORDER BY rowid",
        "SELECT rowid, text, context, dated, owner FROM chunks_fts ORDER BY rowid",
    ):
        assert old.execute(sql).fetchall() == new.execute(sql).fetchall(), sql
    old.close()
    new.close()

"""Partitioned vector search (migrations 013/014) over real sqlite-vec tables: exact against brute force,
isolated per project, carried over from the old layout, and absent sqlite-vec falls back to text only."""

from __future__ import annotations

import numpy as np
import pytest

from nous_assets.embed import chunk_embedding, memory_embedding
from nous_assets.evaluate.corpus import build_corpus, project_cwd
from nous_assets.store import db
from nous_assets.store.db import atomic
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import chunk_vectors, vectors
from nous_assets.store.sqlite.projection import project
from resolver.project import project_id_from_cwd
from tests.store.eventgen import extracted
from tests.store.old_schema import copy_at_schema

DIMS = 8
MODEL = "m"
T0 = "2026-01-01T00:00:00.000000Z"


def _units(rng: np.random.Generator, count: int, dims: int = DIMS) -> np.ndarray:
    mat = rng.standard_normal((count, dims)).astype(np.float32)
    return mat / np.linalg.norm(mat, axis=1, keepdims=True)


def _memory_vectors(conn, seed: int, dims: int = DIMS) -> dict[int, np.ndarray]:
    """A random unit vector for every memory, written through the store as the embedding pass does."""
    memory_embedding.ensure_vector_table(conn, dims, model=MODEL)
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY id")]
    mat = _units(np.random.default_rng(seed), len(ids), dims)
    with atomic(conn):
        vectors.replace(
            conn, {i: v.tobytes() for i, v in zip(ids, mat, strict=True)}, dict.fromkeys(ids, "h"), MODEL, dims, T0
        )
    return dict(zip(ids, mat, strict=True))


def _scopes(conn) -> dict[int, tuple[str, str]]:
    return {int(r[0]): (r[1], r[2]) for r in conn.execute("SELECT id, scope, project_id FROM memories")}


def _brute_force(vecs: dict[int, np.ndarray], allowed, query: np.ndarray, k: int) -> list[tuple[int, float]]:
    sims = sorted(((float(vecs[i] @ query), i) for i in allowed), key=lambda t: (-t[0], t[1]))
    return [(i, s) for s, i in sims[:k]]


@pytest.fixture
def corpus(tmp_path):
    conn = build_corpus(tmp_path / "c.db", 600, projects=6, seed=5)  # ~3% global scope
    yield conn
    conn.close()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_partitioned_knn_is_the_exact_top_k_of_the_project_and_global_memories(corpus, seed):
    vecs = _memory_vectors(corpus, seed)
    scopes = _scopes(corpus)
    rng = np.random.default_rng(100 + seed)
    for p in range(6):
        project_id = project_id_from_cwd(project_cwd(p))
        allowed = [i for i, (scope, pid) in scopes.items() if scope == "global" or pid == project_id]
        for query, k in zip(_units(rng, 3), (5, 40, 500), strict=True):
            got = memory_embedding.search(corpus, query, k, project_id=project_id)
            want = _brute_force(vecs, allowed, query, k)
            assert [i for i, _ in got] == [i for i, _ in want]
            assert np.allclose([s for _, s in got], [s for _, s in want], atol=1e-5)
    query = _units(rng, 1)[0]  # no project: every memory, as before
    got = memory_embedding.search(corpus, query, 50)
    assert [i for i, _ in got] == [i for i, _ in _brute_force(vecs, scopes, query, 50)]


def test_a_memory_that_becomes_global_is_refiled_and_seen_by_other_projects(corpus):
    vecs = _memory_vectors(corpus, 7)
    owner = project_id_from_cwd(project_cwd(0))
    other = project_id_from_cwd(project_cwd(1))
    memory_id, learning_id = corpus.execute(
        "SELECT id, learning_id FROM memories WHERE project_id = ? AND scope = 'project' LIMIT 1", (owner,)
    ).fetchone()
    probe = vecs[memory_id]  # its own vector: the nearest of all once it is in scope
    assert memory_id not in dict(memory_embedding.search(corpus, probe, 10, project_id=other))
    from nous_assets.store.sqlite.events import SqliteEventStore

    SqliteEventStore(corpus).append_many(
        [extracted(learning_id, "now a global rule", key="promote", project=owner, payload_extra={"scope": "global"})]
    )
    project(corpus)
    assert memory_embedding.refile(corpus) == 1
    assert memory_embedding.refile(corpus) == 0  # idempotent
    assert memory_embedding.search(corpus, probe, 1, project_id=other)[0][0] == memory_id


def _chunks(conn, folders: list[str], per_folder: int) -> None:
    rows = [
        (f"u-{f}-{n}", folder, f"s-{f}-{n % 3}", "2026-01-01", "user", T0, f"text {n}", "/t.jsonl", "[0]", "[]")
        for f, folder in enumerate(folders)
        for n in range(per_folder)
    ]
    transcript_chunks.upsert_chunk_rows(conn, rows)


def test_chunk_search_scans_the_projects_folders_and_is_exact_there(conn):
    _chunks(conn, ["fa", "fb", "fc"], 60)
    with atomic(conn):  # one session of folder fb belongs to project fa (e.g. a repository moved folders)
        conn.execute(
            "INSERT INTO project_aliases(kind, alias, project_id, evidence, updated_at) "
            "VALUES ('session', 's-1-0', 'fa', 'test', ?)",
            (T0,),
        )
    chunk_embedding.ensure_chunk_table(conn, DIMS)
    rows = conn.execute("SELECT id, project_id FROM transcript_chunks ORDER BY id").fetchall()
    mat = _units(np.random.default_rng(11), len(rows))
    with atomic(conn):
        for (cid, _), v in zip(rows, mat, strict=True):
            chunk_vectors.put(conn, cid, v.tobytes(), MODEL, DIMS, "h", T0)
    vecs = {int(cid): v for (cid, _), v in zip(rows, mat, strict=True)}
    folder_of = {int(cid): folder for cid, folder in rows}
    assert transcript_chunks.folders_for(conn, "fa") == ["fa", "fb"]
    assert transcript_chunks.folders_for(conn, "fc") == ["fc"]
    for query in _units(np.random.default_rng(12), 4):
        got = chunk_embedding.search_chunks(conn, query, 30, project_id="fc")
        assert {folder_of[i] for i, _ in got} == {"fc"}
        want = _brute_force(vecs, [i for i, f in folder_of.items() if f == "fc"], query, 30)
        assert [i for i, _ in got] == [i for i, _ in want]
        scoped = chunk_embedding.search_chunks(conn, query, 500, project_id="fa")
        assert {folder_of[i] for i, _ in scoped} == {"fa", "fb"} and len(scoped) == 120
        allowed = transcript_chunks.in_scope(conn, [i for i, _ in scoped], project_id="fa", as_at=None)
        assert allowed == {i for i, f in folder_of.items() if f == "fa"} | {
            int(r[0]) for r in conn.execute("SELECT id FROM transcript_chunks WHERE session_id = 's-1-0'")
        }


def _old_layout(conn) -> None:
    """The schema before 013 (vec0 tables without partitions), as an existing database has it."""
    for version, _name, sql in db.MIGRATIONS:
        if version >= 13:
            break
        with atomic(conn):
            for statement in db._split_statements(sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {version}")


def test_migration_carries_existing_vectors_into_the_partitions(tmp_path):
    new = build_corpus(tmp_path / "new.db", 300, projects=3, seed=9)
    _chunks(new, ["fa", "fb"], 20)
    new.close()
    conn = copy_at_schema(tmp_path / "new.db", tmp_path / "old.db", 13)
    assert db.schema_version(conn) < 13 and "PARTITION" not in (vectors.table_sql(conn) or "").upper()
    ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY id")]
    mat = _units(np.random.default_rng(3), len(ids), 384)
    with atomic(conn):  # the old writer: vec0 row + bookkeeping, no bytes in vector_meta
        for i, v in zip(ids, mat, strict=True):
            conn.execute("INSERT INTO vectors(memory_id, embedding) VALUES (?, ?)", (i, v.tobytes()))
            conn.execute(
                "INSERT INTO vector_meta(memory_id, model, dimensions, content_hash, embedded_at) "
                "VALUES (?, ?, ?, ?, ?)",
                (i, MODEL, 384, "h", T0),
            )
    chunk_ids = [int(r[0]) for r in conn.execute("SELECT id FROM transcript_chunks ORDER BY id")]
    cmat = _units(np.random.default_rng(4), len(chunk_ids), 384)
    with atomic(conn):
        for cid, v in zip(chunk_ids, cmat, strict=True):
            conn.execute("INSERT INTO chunk_vectors(chunk_id, embedding) VALUES (?, ?)", (cid, v.tobytes()))
            conn.execute(
                "INSERT INTO chunk_vector_meta(chunk_id, model, dimensions, content_hash, embedded_at) "
                "VALUES (?, ?, 384, 'h', ?)",
                (cid, MODEL, T0),
            )

    with atomic(conn):  # an interrupted migration (a statement fails) leaves the old tables as they were
        conn.execute("CREATE TABLE vector_carry (x)")
    with pytest.raises(db.OperationalError):
        db.migrate(conn)
    assert db.schema_version(conn) < 13
    assert (
        len(memory_embedding.search(conn, mat[0], 5)) == 5 and memory_embedding.search(conn, mat[0], 1)[0][0] == ids[0]
    )
    with atomic(conn):
        conn.execute("DROP TABLE vector_carry")

    assert db.migrate(conn)[:2] == [13, 14]  # the partition migrations, then any later ones
    assert db.migrate(conn) == []  # idempotent
    assert memory_embedding.vector_table_spec(conn) == (384, "cosine", True)
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(ids)
    carried = vectors.blobs_for(conn, ids)
    assert all(carried[i] == v.tobytes() for i, v in zip(ids, mat, strict=True))
    vecs = dict(zip(ids, mat, strict=True))
    scopes = _scopes(conn)
    project_id = project_id_from_cwd(project_cwd(1))
    allowed = [i for i, (scope, pid) in scopes.items() if scope == "global" or pid == project_id]
    query = _units(np.random.default_rng(5), 1, 384)[0]
    got = memory_embedding.search(conn, query, 20, project_id=project_id)
    assert [i for i, _ in got] == [i for i, _ in _brute_force(vecs, allowed, query, 20)]
    assert chunk_vectors.pending_count(conn, MODEL, 384) == 0  # chunk vectors carried over, none to re-embed
    chunk_hits = chunk_embedding.search_chunks(conn, cmat[0], 3, project_id="fa")
    assert chunk_hits[0][0] == chunk_ids[0]
    # a new dimension rebuilds the table; vectors of the old one are dropped with their bookkeeping
    assert memory_embedding.ensure_vector_table(conn, 16, model="m16")
    assert conn.execute("SELECT count(*) FROM vector_meta").fetchone()[0] == 0
    conn.close()


def test_a_vector_of_another_dimension_survives_the_migration_and_comes_back_with_its_table(tmp_path):
    build_corpus(tmp_path / "new.db", 60, projects=2, seed=2).close()
    conn = copy_at_schema(tmp_path / "new.db", tmp_path / "old16.db", 13)
    with atomic(conn):
        conn.execute("DROP TABLE vectors")
        conn.execute(
            "CREATE VIRTUAL TABLE vectors USING vec0(memory_id INTEGER PRIMARY KEY, "
            "embedding FLOAT[16] distance_metric=cosine)"
        )
        ids = [int(r[0]) for r in conn.execute("SELECT id FROM memories ORDER BY id")]
        mat = _units(np.random.default_rng(6), len(ids), 16)
        for i, v in zip(ids, mat, strict=True):
            conn.execute("INSERT INTO vectors(memory_id, embedding) VALUES (?, ?)", (i, v.tobytes()))
            conn.execute(
                "INSERT INTO vector_meta(memory_id, model, dimensions, content_hash, embedded_at) "
                "VALUES (?, 'm16', 16, 'h', ?)",
                (i, T0),
            )
    db.migrate(conn)
    assert memory_embedding.vector_table_spec(conn).dimensions == 384  # the migration's default table
    assert memory_embedding.ensure_vector_table(conn, 16, model="m16")  # the next embedding pass
    assert conn.execute("SELECT count(*) FROM vectors").fetchone()[0] == len(ids)
    assert memory_embedding.search(conn, mat[3], 1)[0][0] == ids[3]
    conn.close()


def test_without_sqlite_vec_retrieval_falls_back_to_text_and_never_raises(tmp_path):
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve
    from nous_assets.settings import load_settings

    conn = build_corpus(tmp_path / "novec.db", 200, projects=2, seed=4)
    vecs = _memory_vectors(conn, 8, dims=384)
    _chunks(conn, [project_id_from_cwd(project_cwd(0))], 10)
    conn.close()
    plain = db.sqlite3.connect(str(tmp_path / "novec.db"), isolation_level=None)  # sqlite-vec never loaded
    plain.row_factory = db.sqlite3.Row
    with pytest.raises(db.OperationalError, match="vec0"):
        plain.execute("SELECT count(*) FROM vectors").fetchone()
    settings = load_settings({"HOME": str(tmp_path)})
    project_id = project_id_from_cwd(project_cwd(0))
    query = Query.from_text("pytest ruff", project_id=project_id, query_vector=next(iter(vecs.values())))
    results = retrieve(plain, query, settings, k=5, include_episodes=True)
    assert results and all("vector" not in r.sources for r in results)
    assert all(r.scope == "global" or r.project_id == project_id for r in results)
    plain.close()

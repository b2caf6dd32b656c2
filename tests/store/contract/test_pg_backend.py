"""What only the PostgreSQL backend has: its migrations with checksums, the configuration that selects it,
errors that never show the password, the HNSW index the vector search uses, and tenant_id on every table
and in every query of its modules."""

from __future__ import annotations

import ast
import json
import re
import socket
import uuid
from pathlib import Path

import pytest

from nous_assets.cli import main
from nous_assets.errors import ConfigError, SchemaError
from nous_assets.settings import load_settings
from nous_assets.store import backend as backend_mod
from nous_assets.store.pg import db as pgdb

PG_DIR = Path(pgdb.__file__).parent
TABLES = ("learning_events", "memories", "concepts", "edges", "projection_checkpoints", "memory_vectors",
          "injection_cache", "ingest_events", "intervention_candidates", "intervention_transitions",
          "active_interventions", "ingest_cursors", "ingest_file_partitions", "project_aliases",
          "service_tokens", "service_receipts")  # fmt: skip


@pytest.fixture
def database(pg_server):
    """A fresh database of its own (migration tests change the schema bookkeeping)."""
    name = f"m{uuid.uuid4().hex[:10]}"
    with pgdb.connect(pg_server.dsn()) as admin:
        admin.execute(f"CREATE DATABASE {name}")
    yield pg_server.dsn(name)
    with pgdb.connect(pg_server.dsn()) as admin:
        admin.execute(f"DROP DATABASE {name} WITH (FORCE)")


def test_migrations_apply_once_and_record_their_checksums(database):
    conn = pgdb.connect(database)
    try:
        assert pgdb.migrate(conn) == [v for v, _, _ in pgdb.MIGRATIONS]
        assert pgdb.migrate(conn) == []
        assert pgdb.schema_version(conn) == pgdb.LATEST_VERSION
        rows = conn.execute("SELECT name, length(checksum) FROM pg_schema_migrations ORDER BY version").fetchall()
        assert rows == [(name, 64) for _, name, _ in pgdb.MIGRATIONS]
    finally:
        conn.close()


def test_an_edited_or_unknown_migration_is_refused(database):
    conn = pgdb.connect(database)
    try:
        pgdb.migrate(conn)
        conn.execute("UPDATE pg_schema_migrations SET checksum = 'x' WHERE version = 1")
        with pytest.raises(SchemaError, match="changed after it was applied"):
            pgdb.migrate(conn)
        conn.execute("UPDATE pg_schema_migrations SET checksum = %s WHERE version = 1",
                     (__import__("hashlib").sha256(pgdb.MIGRATIONS[0][2].encode()).hexdigest(),))  # fmt: skip
        conn.execute("INSERT INTO pg_schema_migrations VALUES (999, '999_future.sql', 'y', 'now')")
        with pytest.raises(SchemaError, match="newer than this build"):
            pgdb.migrate(conn)
    finally:
        conn.close()


def test_a_migration_numbered_below_the_newest_applied_one_is_still_applied(database, monkeypatch):
    """Migration numbers are reserved per branch, so a lower number can arrive after higher ones ran."""
    conn = pgdb.connect(database)
    try:
        pgdb.migrate(conn)
        known = {v for v, _, _ in pgdb.MIGRATIONS}
        number = min(set(range(1, pgdb.LATEST_VERSION)) - known, default=0)  # a free number below the newest
        late = (number, f"{number:03d}_late_branch.sql", "CREATE TABLE late_branch (tenant_id TEXT NOT NULL)")
        monkeypatch.setattr(pgdb, "MIGRATIONS", sorted([*pgdb.MIGRATIONS, late]))
        assert pgdb.migrate(conn) == [number]
        assert conn.execute("SELECT to_regclass('late_branch')").fetchone()[0] == "late_branch"
        assert pgdb.migrate(conn) == []
    finally:
        conn.close()


def test_migration_004_partitions_the_vectors_and_keeps_every_row(database, monkeypatch):
    from eventgen import extracted

    from nous_assets.store.pg.projection import PgProjectionStore
    from nous_assets.store.projection.identity import ProjectMap

    # the schema before 004, plus the memory status column today's projection writes (006)
    before = [m for m in pgdb.MIGRATIONS if m[0] < 4 or m[1].endswith("_memory_status.sql")]
    monkeypatch.setattr(pgdb, "MIGRATIONS", before)
    monkeypatch.setattr(PgProjectionStore, "_project_map", lambda self: ProjectMap())  # no aliases table yet
    conn = pgdb.open_pg(database)
    try:
        stores = [backend_mod.postgres_backend(conn, tenant) for tenant in ("t1", "t2")]
        for n, b in enumerate(stores):
            b.events.append_many([extracted(f"L{i}", key=f"x{i}") for i in range(5)])
            b.projection.project()
            ids = [e.event_id for e in b.events.replay(0)]
            b.vectors.upsert({i: [float(i), 1.0, float(n)] for i in ids}, model="m",
                             content_hashes=dict.fromkeys(ids, "h"), at="2026-01-01T00:00:00Z")  # fmt: skip
        rows = (
            "SELECT tenant_id, memory_id, model, dimensions, content_hash, embedding::text, embedded_at "
            "FROM memory_vectors ORDER BY 1, 2"
        )
        old = conn.execute(rows).fetchall()
        assert len(old) == 10 and conn.execute("SELECT to_regclass('idx_memory_vectors_hnsw_3')").fetchone()[0]
        monkeypatch.undo()
        assert pgdb.migrate(conn) == [m[0] for m in pgdb.MIGRATIONS if m not in before]
        assert conn.execute(rows).fetchall() == old
        partitioned = conn.execute("SELECT relkind FROM pg_class WHERE relname = 'memory_vectors'").fetchone()[0]
        assert partitioned == "p"
        assert conn.execute("SELECT to_regclass('memory_vectors_unpartitioned')").fetchone() == (None,)
        hnsw_partitions = conn.execute(
            "SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid "
            "WHERE i.inhparent = 'idx_memory_vectors_hnsw_3'::regclass"
        ).fetchone()[0]
        assert hnsw_partitions == 64
        hit, distance = stores[1].vectors.search([float(old[5][1]), 1.0, 1.0], 1, model="m")[0]
        assert (hit, round(distance, 6)) == (old[5][1], 0.0)
        stores[0].projection.rebuild()  # the cascade from memories still reaches the partitions
        assert conn.execute("SELECT count(*) FROM memory_vectors WHERE tenant_id = 't1'").fetchone()[0] == 0
    finally:
        conn.close()


def test_every_table_has_a_tenant_id_leading_its_primary_key(pg_server):
    with pgdb.connect(pg_server.dsn()) as conn:
        tables = {
            r[0]
            for r in conn.execute(
                "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
                "WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND NOT c.relispartition "
                "AND c.relname <> 'pg_schema_migrations'"
            )
        }
        assert tables == set(TABLES)
        partitions = conn.execute(
            "SELECT count(*), pg_get_partkeydef('memory_vectors'::regclass) FROM pg_inherits "
            "WHERE inhparent = 'memory_vectors'::regclass"
        ).fetchone()
        assert partitions == (64, "HASH (tenant_id)")
        for table in tables:
            cols = [r[0] for r in conn.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s", (table,))]  # fmt: skip
            assert "tenant_id" in cols, table


def _sql_literals(path: Path) -> list[str]:
    """Every string (or f-string's literal text) in a module that reads or writes a table."""
    found = []
    tree = ast.parse(path.read_text())
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}
    for node in ast.walk(tree):
        if id(node) in parts:  # a piece of an f-string: checked as part of the whole
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            text = node.value
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant))
        else:
            continue
        if re.search(r"\b(SELECT .* FROM|UPDATE \w+ |INSERT INTO|DELETE FROM|JOIN)\b", text, re.S) and any(
            re.search(rf"\b{t}\b", text) for t in TABLES
        ):
            found.append(text)
    return found


def test_every_query_of_the_backend_names_the_tenant():
    modules = [p for p in PG_DIR.glob("*.py") if p.name not in ("db.py", "embedded.py", "__init__.py")]
    checked = 0
    for module in modules:
        for sql in _sql_literals(module):
            checked += 1
            assert "tenant_id" in sql, f"{module.name}: {sql[:100]!r}"
    assert checked > 40  # the walk really found the backend's queries


def test_vector_search_is_served_by_the_hnsw_index_of_the_tenants_partition(pg_server):
    from eventgen import extracted

    tenant = f"t-{uuid.uuid4().hex}"
    backend = backend_mod.postgres_backend(pgdb.open_pg(pg_server.dsn()), tenant)
    try:
        backend.events.append_many([extracted(f"L{i}", key=f"x{i}") for i in range(3)])
        backend.projection.project()
        ids = [e.event_id for e in backend.events.replay(0)]
        backend.vectors.upsert({i: [float(i), 1.0, 0.5] for i in ids}, model="m",
                               content_hashes=dict.fromkeys(ids, "h"), at="2026-01-01T00:00:00Z")  # fmt: skip
        conn = backend.vectors.conn
        partition = conn.execute(
            "SELECT tableoid::regclass::text FROM memory_vectors WHERE tenant_id = %s LIMIT 1", (tenant,)
        ).fetchone()[0]
        with conn.transaction():  # no sequential scan, no sort: only an index that yields cosine order will do
            conn.execute("SET LOCAL enable_seqscan = off")
            conn.execute("SET LOCAL enable_sort = off")
            explain = conn.execute(
                "EXPLAIN SELECT memory_id FROM memory_vectors WHERE tenant_id = %s AND dimensions = 3 "
                "AND model = 'm' ORDER BY embedding::vector(3) <=> '[1,2,3]'::vector(3) LIMIT 5",
                (tenant,),
            )
            plan = "\n".join(r[0] for r in explain)
        scans = re.findall(r"Index Scan using (\S+) on (\S+)", plan)
        assert scans and {table for _, table in scans} == {partition}, plan  # pruned to the tenant's partition
        index = conn.execute("SELECT indexdef FROM pg_indexes WHERE indexname = %s", (scans[0][0],)).fetchone()[0]
        assert "USING hnsw" in index and "vector_cosine_ops" in index
    finally:
        backend.close()


@pytest.mark.parametrize(
    "dsn, secret",
    [
        ("postgresql://nous:hunter2@db.internal:5432/nous", "hunter2"),
        ("host=db.internal user=nous password=hunter2 dbname=nous", "hunter2"),
        ("host=db user=nous password='two words' dbname=nous", "two words"),
    ],
)
def test_a_dsn_is_shown_without_its_password(dsn, secret):
    shown = pgdb.redact_dsn(dsn)
    assert secret not in shown and "***" in shown and "nous" in shown


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_an_unreachable_server_is_one_clear_error_without_the_password():
    dsn = f"postgresql://nous:hunter2secret@127.0.0.1:{_closed_port()}/nous"
    with pytest.raises(pgdb.BackendUnavailableError) as err:
        pgdb.connect(dsn)
    message = str(err.value)
    assert "cannot connect to PostgreSQL" in message and "127.0.0.1" in message
    assert "hunter2secret" not in message and "\n" not in message


def test_settings_select_the_backend(tmp_path):
    base = {"HOME": str(tmp_path)}
    assert load_settings(base).backend == "sqlite"
    with pytest.raises(ConfigError, match="NOUS_PG_DSN"):
        load_settings({**base, "NOUS_BACKEND": "postgres"})
    with pytest.raises(ConfigError, match="sqlite or postgres"):
        load_settings({**base, "NOUS_BACKEND": "oracle"})
    s = load_settings({**base, "NOUS_BACKEND": "Postgres", "NOUS_PG_DSN": "postgresql://h/db", "NOUS_TENANT": "t1"})
    assert (s.backend, s.pg_dsn, s.tenant_id) == ("postgres", "postgresql://h/db", "t1")


def test_open_backend_follows_the_settings(pg_server, tmp_path):
    env = {"HOME": str(tmp_path), "NOUS_DATA_DIR": str(tmp_path / "data")}
    with backend_mod.open_backend(load_settings(env), create=True) as lite:
        assert lite.capabilities.name == "sqlite" and lite.events.last_event_id() == 0
    settings = load_settings({**env, "NOUS_BACKEND": "postgres", "NOUS_PG_DSN": pg_server.dsn(),
                              "NOUS_TENANT": f"t-{uuid.uuid4().hex}"})  # fmt: skip
    with backend_mod.open_backend(settings) as pg:
        assert pg.capabilities.name == "postgres" and pg.tenant_id == settings.tenant_id
        assert pg.events.last_event_id() == 0
    with pytest.raises(ValueError, match="tenant_id"):
        backend_mod.open_backend(settings, tenant_id="bad\ttenant")


def test_nous_config_shows_the_backend_but_never_the_password(nous_env, monkeypatch, capsys):
    assert main(["config"]) == 0
    local = json.loads(capsys.readouterr().out)
    assert local["backend"] == "sqlite" and "pg_dsn" not in local and "tenant_id" not in local
    monkeypatch.setenv("NOUS_BACKEND", "postgres")
    monkeypatch.setenv("NOUS_PG_DSN", "postgresql://nous:hunter2@db.internal/nous")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    shown = json.loads(out)
    assert shown["backend"] == "postgres" and shown["pg_dsn"] == "postgresql://nous:***@db.internal/nous"
    assert "hunter2" not in out

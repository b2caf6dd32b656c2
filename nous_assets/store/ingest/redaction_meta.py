"""SQL of the metadata rescan: the cortex.db columns that hold paths, branches and project ids, and their rewrite.

Why here: the store owns SQL; :mod:`nous_assets.capture.rescan_meta` decides what each value becomes. A token in a
directory or branch name reached every column below before capture redacted metadata (issue 20, point 5), and
project ids are derived from directory names. Values are rewritten per distinct value (a few hundred paths and
ids, however many rows share them), inside :func:`~nous_assets.store.ingest.redaction.rescan_transaction`: the only
transaction in which ``learning_events.project_id`` may change (migration 020).

Derived rows are dropped rather than rewritten, and rebuilt by the next pipeline run: injection packets (their
cache keys and fingerprints embed the project and the checkout), the interventions digest that would otherwise
tell the builder a dropped project's packets are current, and ``memory_stale`` (emptied at any time, 019).
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from nous_assets.store.db import Connection
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import chunk_vectors

Treatment = str  # "path": a path, redacted one name at a time; "project": a project id or Claude Code folder


@dataclass(frozen=True)
class Column:
    """One stored metadata column: how its values are redacted, and which rows it covers (``where``)."""

    table: str
    column: str
    treatment: Treatment
    where: str = ""
    keyed: bool = False  # part of a unique key: a rewrite that collides with a row already redacted drops the old row


COLUMNS: tuple[Column, ...] = (
    Column("learning_events", "project_id", "project"),
    Column("memories", "project_id", "project"),  # its trigger moves the FTS and concept owners along (016)
    Column("memory_holds", "project_id", "project"),
    Column("processed_extractions", "project_id", "project", keyed=True),
    Column("access_log", "project_id", "project"),
    Column("ingest_events", "project_id", "project"),
    Column("ingest_events", "transcript_path", "path"),
    Column("ingest_cursors", "transcript_path", "path", keyed=True),
    Column("ingest_file_partitions", "transcript_path", "path", keyed=True),
    Column("transcript_chunks", "project_id", "project"),
    Column("transcript_chunks", "source_path", "path"),
    Column("identity_sessions", "folder", "project"),
    Column("identity_sessions", "start_cwd", "path"),
    Column("identity_paths", "path", "path", keyed=True),
    Column("identity_paths", "git_main", "path"),
    Column("identity_paths", "git_remote", "path"),
    Column("identity_session_paths", "path", "path", keyed=True),
    Column("identity_worktree_adds", "base_cwd", "path", keyed=True),
    Column("identity_worktree_adds", "path", "path", keyed=True),
    Column("project_aliases", "alias", "path", "kind IN ('cwd', 'remote')", keyed=True),
    Column("project_aliases", "alias", "project", "kind = 'folder'", keyed=True),
    Column("project_aliases", "project_id", "project"),
    Column("active_interventions", "target_project_id", "project"),
    Column("service_receipts", "project_id", "project"),
)


def _where(col: Column) -> str:
    return f" AND {col.where}" if col.where else ""


def values(conn: Connection, col: Column) -> list[str]:
    """The distinct values of ``col`` (its rows only)."""
    sql = f"SELECT DISTINCT {col.column} FROM {col.table} WHERE {col.column} IS NOT NULL{_where(col)}"
    return [r[0] for r in conn.execute(sql) if isinstance(r[0], str)]


def count(conn: Connection, col: Column, value: str) -> int:
    """Rows of ``col`` holding ``value`` (what :func:`rename` would change, for a dry run)."""
    sql = f"SELECT count(*) FROM {col.table} WHERE {col.column} = ?{_where(col)}"
    return int(conn.execute(sql, (value,)).fetchone()[0])


def rename(conn: Connection, col: Column, old: str, new: str) -> int:
    """Give the rows of ``col`` holding ``old`` the value ``new``; rows changed (or dropped, see :class:`Column`)."""
    match = f"{col.column} = ?{_where(col)}"
    changed = conn.execute(f"UPDATE OR IGNORE {col.table} SET {col.column} = ? WHERE {match}", (new, old)).rowcount
    if col.keyed:  # the row already redacted (written since the upgrade) is the newer one
        changed += conn.execute(f"DELETE FROM {col.table} WHERE {match}", (old,)).rowcount
    return changed


def chunk_ids_of(conn: Connection, project_ids: Iterable[str]) -> list[int]:
    """Transcript chunks read from these folders."""
    ids: list[int] = []
    for project_id in sorted(set(project_ids)):
        ids += [int(r[0]) for r in conn.execute("SELECT id FROM transcript_chunks WHERE project_id = ?", (project_id,))]
    return ids


def refile_chunks(conn: Connection, chunk_ids: list[int]) -> None:
    """After chunks changed folder: their FTS owners, and every vector re-inserted under its chunk's folder (vec0
    keeps partition values in its own tables: the table is rebuilt from the vectors, nothing is re-embedded)."""
    transcript_chunks.reindex(conn, chunk_ids)
    create = chunk_vectors.table_sql(conn)
    if not chunk_ids or create is None:
        return
    conn.execute("CREATE TEMP TABLE chunk_vector_carry AS SELECT chunk_id, embedding FROM chunk_vectors")
    conn.execute("DROP TABLE chunk_vectors")
    conn.execute(create)
    conn.execute(
        "INSERT INTO chunk_vectors(chunk_id, folder, embedding) SELECT v.chunk_id, c.project_id, v.embedding "
        "FROM temp.chunk_vector_carry v JOIN transcript_chunks c ON c.id = v.chunk_id ORDER BY c.project_id, v.chunk_id"
    )
    conn.execute("DROP TABLE temp.chunk_vector_carry")


def packets(conn: Connection) -> list[tuple[str, str, dict]]:
    """``(cache_key, project_id, fingerprint)`` of every injection packet (a corrupt fingerprint reads as {})."""
    out = []
    for key, project_id, fingerprint_json in conn.execute(
        "SELECT cache_key, project_id, fingerprint_json FROM injection_cache ORDER BY cache_key"
    ):
        try:
            fingerprint = json.loads(fingerprint_json or "{}")
        except ValueError:
            fingerprint = {}
        out.append((key, project_id, fingerprint if isinstance(fingerprint, dict) else {}))
    return out


def drop_packets(conn: Connection, keys: Iterable[str], projects: Iterable[str]) -> int:
    """Remove these packets, and the interventions digests of these projects so their packets are rebuilt."""
    dropped = 0
    for key in sorted(set(keys)):
        dropped += conn.execute("DELETE FROM injection_cache WHERE cache_key = ?", (key,)).rowcount
    for project_id in sorted(set(projects)):
        conn.execute("DELETE FROM packet_interventions WHERE project_id = ?", (project_id,))
    return dropped


def digest_projects(conn: Connection) -> list[str]:
    """Projects with an interventions digest (``packet_interventions``)."""
    return [r[0] for r in conn.execute("SELECT project_id FROM packet_interventions")]


def stale_rows(conn: Connection) -> list[tuple[int, str, str]]:
    """``(memory_id, project_id, checkout)`` of ``memory_stale``."""
    return [(int(r[0]), r[1], r[2]) for r in conn.execute("SELECT memory_id, project_id, checkout FROM memory_stale")]


def drop_stale(conn: Connection, memory_ids: Iterable[int]) -> int:
    """Forget these rows of ``memory_stale`` (derived: the next packet build checks the checkout again)."""
    return sum(
        conn.execute("DELETE FROM memory_stale WHERE memory_id = ?", (i,)).rowcount for i in sorted(set(memory_ids))
    )

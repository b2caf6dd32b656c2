"""A database at an older schema holding what today's writers produced, for migration tests.

Today's writers (projector, chunk capture) write today's columns, so an old-schema database cannot be
filled by running them on it. Instead the content is built at the current schema and copied, table by
table and column by column (the columns both schemas have), into a database migrated only below
``version``: what an installation of that version would have held.
"""

from __future__ import annotations

from pathlib import Path

from nous_assets.store import db

# virtual tables copied by their columns; the others (vec0) are left for the test to fill as it needs
_TEXT_INDEXES = ("memories_fts", "chunks_fts")


def _columns(conn: db.Connection, schema: str, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f'PRAGMA {schema}.table_info("{table}")')]


def copy_at_schema(source: Path, target: Path, version: int) -> db.Connection:
    """A new database at ``target`` migrated below ``version``, holding ``source``'s rows (shared columns)."""
    conn = db.connect(target, create=True)
    for number, _name, sql in db.MIGRATIONS:
        if number >= version:
            break
        with db.atomic(conn):
            for statement in db._split_statements(sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    conn.execute("ATTACH DATABASE ? AS src", (str(source),))
    plain = [
        r[0]
        for r in conn.execute(
            "SELECT name FROM main.sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%' "
            "AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '%fts_%' AND name NOT LIKE '%vectors_%'"
        )
    ]
    with db.atomic(conn):
        for table in [*plain, *_TEXT_INDEXES]:
            shared = [c for c in _columns(conn, "main", table) if c in _columns(conn, "src", table)]
            if table in _TEXT_INDEXES:
                shared = ["rowid", *shared]
            names = ", ".join(f'"{c}"' for c in shared)
            conn.execute(f'INSERT INTO main."{table}"({names}) SELECT {names} FROM src."{table}"')
    conn.execute("DETACH DATABASE src")
    return conn

"""Migration 021: the event log accepts source 'agent' (MCP ``remember``) and keeps everything else as it was."""

from __future__ import annotations

from pathlib import Path

import pytest

from nous_assets.errors import InvalidEventError
from nous_assets.store import db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore


def _extracted(key: str, source: str, parent: int | None = None) -> LearningEvent:
    payload = {"content": f"learning {key}", "extractor_version": "t", "concepts": [], "edges": []}
    return LearningEvent("LearningExtracted", f"lid-{key}", payload, "s1", "p1", source, key,
                         parent_event_id=parent)  # fmt: skip


def _at_020(path: Path) -> db.Connection:
    conn = db.connect(path, create=True)
    for number, _name, sql in db.MIGRATIONS:
        if number > 20:
            break
        with db.atomic(conn):
            for statement in db._split_statements(sql):
                conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {number}")
    return conn


def test_021_keeps_rows_ids_triggers_and_accepts_agent(tmp_path):
    conn = _at_020(tmp_path / "cortex.db")
    store = SqliteEventStore(conn)
    first = store.append(_extracted("a", "fs_watch")).event
    store.append(_extracted("b", "user_review", parent=first.event_id))
    with pytest.raises(InvalidEventError, match="CHECK constraint"):  # the 020 schema refuses it
        store.append(_extracted("c", "agent"))
    with db.atomic(conn):  # events archived away above the live maximum: their ids must stay used
        conn.execute("UPDATE sqlite_sequence SET seq = 40 WHERE name = 'learning_events'")
    before = conn.execute("SELECT * FROM learning_events ORDER BY event_id").fetchall()

    assert 21 in db.migrate(conn)
    after = conn.execute("SELECT * FROM learning_events ORDER BY event_id").fetchall()
    assert [tuple(r) for r in after] == [tuple(r) for r in before]
    assert conn.execute("PRAGMA foreign_key_check").fetchall() == []
    assert conn.execute("SELECT value FROM nous_meta WHERE key = 'migration_021_seq'").fetchone() is None
    created = store.append(_extracted("d", "agent", parent=first.event_id)).event
    assert created.source == "agent" and created.event_id == 41
    with pytest.raises(db.IntegrityError, match="append-only"):
        conn.execute("UPDATE learning_events SET payload_json = '{}' WHERE event_id = 41")
    with pytest.raises(db.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM learning_events WHERE event_id = 41")
    with pytest.raises(db.IntegrityError, match="FOREIGN KEY"):
        conn.execute(
            "INSERT INTO learning_events(event_uuid, learning_id, event_type, idempotency_key, schema_version, "
            "transaction_time, payload_json, parent_event_id, session_id, project_id, source) "
            "VALUES ('u', 'l', 'LearningArchived', 'k', 2, 't', '{}', 999, 's', 'p', 'agent')"
        )
    with pytest.raises(db.IntegrityError, match="CHECK"):
        conn.execute(
            "INSERT INTO learning_events(event_uuid, learning_id, event_type, idempotency_key, schema_version, "
            "transaction_time, payload_json, session_id, project_id, source) "
            "VALUES ('u', 'l', 'LearningArchived', 'k', 2, 't', '{}', 's', 'p', 'robot')"
        )
    indexes = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE tbl_name = 'learning_events'")}
    assert {"idx_learning_events_learning", "idx_learning_events_project", "idx_learning_events_tx_time",
            "learning_events_no_update", "learning_events_no_delete",
            "learning_events_rescan_payload_only"} <= indexes  # fmt: skip
    with pytest.raises(InvalidEventError, match="unknown source 'robot'"):
        store.append(_extracted("e", "robot"))
    conn.close()

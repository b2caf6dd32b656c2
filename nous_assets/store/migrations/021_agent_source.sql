-- 021: a new event source, 'agent': a learning Claude records through the MCP `remember` tool because the
-- user asked it to keep something (nous_assets/mcp_server/remember.py). SQLite cannot widen a CHECK in
-- place, so learning_events is rebuilt as 004 rebuilt edges: same columns and rows, the source CHECK gains
-- 'agent', then its indexes and the append-only triggers (001, 006, 020) come back unchanged. The new table's
-- parent reference names the new table, which the rename carries to 'learning_events'. The AUTOINCREMENT
-- high-water mark is kept (nous_meta holds it across the swap): an archived event's id is never reused.
PRAGMA defer_foreign_keys = ON;
INSERT INTO nous_meta(key, value)
SELECT 'migration_021_seq', CAST(seq AS TEXT) FROM sqlite_sequence WHERE name = 'learning_events';
CREATE TABLE learning_events_021 (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_uuid TEXT NOT NULL UNIQUE,
    learning_id TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (
        event_type IN (
            'LearningExtracted', 'LearningValidated', 'LearningReinforced',
            'LearningWeakened', 'LearningContradicted', 'LearningSuperseded',
            'LearningArchived'
        )
    ),
    idempotency_key TEXT NOT NULL UNIQUE,
    schema_version INTEGER NOT NULL,
    transaction_time TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    vector_clock_json TEXT,
    payload_json TEXT NOT NULL,
    parent_event_id INTEGER REFERENCES learning_events_021(event_id),
    session_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (
        source IN ('fs_watch', 'fs_reconcile', 'historical_backfill', 'user_review', 'agent')
    )
);
INSERT INTO learning_events_021 SELECT * FROM learning_events ORDER BY event_id;
DROP TABLE learning_events;
ALTER TABLE learning_events_021 RENAME TO learning_events;
DELETE FROM sqlite_sequence WHERE name = 'learning_events';
INSERT INTO sqlite_sequence(name, seq)
SELECT 'learning_events', max(CAST(value AS INTEGER), coalesce((SELECT max(event_id) FROM learning_events), 0))
FROM nous_meta WHERE key = 'migration_021_seq';
DELETE FROM nous_meta WHERE key = 'migration_021_seq';
CREATE INDEX idx_learning_events_learning ON learning_events(learning_id, event_id);
CREATE INDEX idx_learning_events_project ON learning_events(project_id, event_id);
CREATE INDEX idx_learning_events_tx_time ON learning_events(transaction_time);
CREATE TRIGGER learning_events_no_update BEFORE UPDATE ON learning_events
WHEN (SELECT value FROM nous_meta WHERE key = 'redaction_rescan_in_progress') IS NULL
BEGIN
    SELECT RAISE(ABORT, 'learning_events is append-only: events are never updated');
END;
CREATE TRIGGER learning_events_no_delete BEFORE DELETE ON learning_events
WHEN (SELECT value FROM nous_meta WHERE key = 'archive_in_progress') IS NULL
BEGIN
    SELECT RAISE(ABORT, 'learning_events is append-only: events are never deleted');
END;
CREATE TRIGGER learning_events_rescan_payload_only BEFORE UPDATE ON learning_events
WHEN NEW.event_id IS NOT OLD.event_id OR NEW.event_uuid IS NOT OLD.event_uuid
    OR NEW.learning_id IS NOT OLD.learning_id OR NEW.event_type IS NOT OLD.event_type
    OR NEW.idempotency_key IS NOT OLD.idempotency_key OR NEW.schema_version IS NOT OLD.schema_version
    OR NEW.transaction_time IS NOT OLD.transaction_time OR NEW.valid_from IS NOT OLD.valid_from
    OR NEW.valid_until IS NOT OLD.valid_until OR NEW.vector_clock_json IS NOT OLD.vector_clock_json
    OR NEW.parent_event_id IS NOT OLD.parent_event_id OR NEW.session_id IS NOT OLD.session_id
    OR NEW.source IS NOT OLD.source
BEGIN
    SELECT RAISE(ABORT, 'the redaction rescan may only rewrite payload_json and project_id');
END;

-- 012: the hot tier's index of events moved to cold archive segments by `nous archive`.
-- The event rows themselves live in the segment files (cortex-archive-YYYY*.db.zst, listed in
-- archive_segments); what stays here is what the live log must still answer without opening a segment:
-- that an idempotency key was already written (a replayed extraction writes nothing), that a learning
-- was extracted (later events may refer to it) and that an event id exists (a parent). Rows are written
-- in the same transaction as the move and removed in the same transaction as a restore.
CREATE TABLE archived_events (
    event_id INTEGER PRIMARY KEY,
    idempotency_key TEXT NOT NULL UNIQUE,
    learning_id TEXT NOT NULL,
    event_type TEXT NOT NULL,
    segment_id TEXT NOT NULL REFERENCES archive_segments(segment_id)
);
CREATE INDEX idx_archived_events_learning ON archived_events(learning_id, event_type);
CREATE INDEX idx_archived_events_segment ON archived_events(segment_id);

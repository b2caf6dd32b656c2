-- 007: events with source 'agent' (SQLite migration 021): a learning Claude records through the MCP `remember`
-- tool at the user's request. PostgreSQL widens the CHECK in place (the inline constraint's default name).
ALTER TABLE learning_events DROP CONSTRAINT learning_events_source_check;
ALTER TABLE learning_events ADD CONSTRAINT learning_events_source_check
    CHECK (source IN ('fs_watch', 'fs_reconcile', 'historical_backfill', 'user_review', 'agent'));

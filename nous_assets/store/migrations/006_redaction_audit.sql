-- 006: `nous redact --rescan`, the one sanctioned in-place edit of the event log. A newer redactor may find
-- a secret an older one let through; the rescan then rewrites the stored payloads. It may do so only while
-- nous_meta holds 'redaction_rescan_in_progress' (set and cleared inside its own transaction), and even then
-- only payload_json may change. Every change is recorded in redaction_audit: what kind of secret, where and
-- when, never the secret itself.
DROP TRIGGER learning_events_no_update;
CREATE TRIGGER learning_events_no_update BEFORE UPDATE ON learning_events
WHEN (SELECT value FROM nous_meta WHERE key = 'redaction_rescan_in_progress') IS NULL
BEGIN
    SELECT RAISE(ABORT, 'learning_events is append-only: events are never updated');
END;
CREATE TRIGGER learning_events_rescan_payload_only BEFORE UPDATE ON learning_events
WHEN NEW.event_id IS NOT OLD.event_id OR NEW.event_uuid IS NOT OLD.event_uuid
    OR NEW.learning_id IS NOT OLD.learning_id OR NEW.event_type IS NOT OLD.event_type
    OR NEW.idempotency_key IS NOT OLD.idempotency_key OR NEW.schema_version IS NOT OLD.schema_version
    OR NEW.transaction_time IS NOT OLD.transaction_time OR NEW.valid_from IS NOT OLD.valid_from
    OR NEW.valid_until IS NOT OLD.valid_until OR NEW.vector_clock_json IS NOT OLD.vector_clock_json
    OR NEW.parent_event_id IS NOT OLD.parent_event_id OR NEW.session_id IS NOT OLD.session_id
    OR NEW.project_id IS NOT OLD.project_id OR NEW.source IS NOT OLD.source
BEGIN
    SELECT RAISE(ABORT, 'the redaction rescan may only rewrite payload_json');
END;

CREATE TABLE redaction_audit (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    redactor_version TEXT NOT NULL,
    location TEXT NOT NULL,
    row_ref TEXT NOT NULL,
    field TEXT NOT NULL,
    kind TEXT NOT NULL,
    count INTEGER NOT NULL CHECK (count > 0),
    created_at TEXT NOT NULL
);
CREATE INDEX idx_redaction_audit_run ON redaction_audit(run_id);

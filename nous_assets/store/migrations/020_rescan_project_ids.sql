-- 020: `nous redact --rescan` may also rewrite an event's project_id. Project ids are derived from the folder
-- Claude Code names after a session's cwd, so a token in that directory's name was in the id too; the rescan
-- replaces it by the redacted id (resolver.project.project_id_from_folder), as capture now stores it. As for
-- payload_json, only while nous_meta holds 'redaction_rescan_in_progress' (learning_events_no_update, 006).
DROP TRIGGER learning_events_rescan_payload_only;
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

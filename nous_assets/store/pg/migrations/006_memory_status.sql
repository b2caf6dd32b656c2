-- 006: every memory carries a status (SQLite migration 018; nous_assets/status.py), the same default rule for
-- rows projected before: 'superseded' when superseded, 'stated' for what the user said, else 'observed'.
ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'observed'
    CHECK (status IN ('verified', 'stated', 'observed', 'hypothesis', 'refuted', 'superseded'));
UPDATE memories SET status = CASE
    WHEN superseded_by IS NOT NULL THEN 'superseded'
    WHEN kind IN ('preference', 'correction') THEN 'stated'
    ELSE 'observed'
END;
CREATE INDEX idx_memories_status ON memories(tenant_id, project_id, status);

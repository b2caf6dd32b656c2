-- 018: every memory carries a status: how far the transcripts back it (nous_assets/status.py). Events set it
-- (payload.status on LearningExtracted, LearningReinforced, LearningValidated, LearningWeakened); events
-- written before carry none, and a memory of theirs takes the default rule of status.default_status: what the
-- user said (preference, correction) is 'stated', a superseded one 'superseded', anything else 'observed'. The
-- rows below get the same rule, so a replay of the log agrees with this projection.
ALTER TABLE memories ADD COLUMN status TEXT NOT NULL DEFAULT 'observed'
    CHECK (status IN ('verified', 'stated', 'observed', 'hypothesis', 'refuted', 'superseded'));
UPDATE memories SET status = CASE
    WHEN superseded_by IS NOT NULL THEN 'superseded'
    WHEN kind IN ('preference', 'correction') THEN 'stated'
    ELSE 'observed'
END;
CREATE INDEX idx_memories_status ON memories(project_id, status);

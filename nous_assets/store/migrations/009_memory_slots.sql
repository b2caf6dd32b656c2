-- 009: what a learning is about and when it applies (extraction payload fields, projected onto memories).
-- slot: the single-valued thing a learning states the current value of (`config:<file>[#<key>]`,
-- `gate:<repo>`, `cmd:<purpose>`, `tool:<purpose>`); a later learning on the same (project, slot)
-- supersedes the earlier by validity time. applies_when / source_ref: shown on the packet's bullet.
-- Older events carry none of them: the columns stay NULL for their memories.
ALTER TABLE memories ADD COLUMN slot TEXT;
ALTER TABLE memories ADD COLUMN applies_when TEXT;
ALTER TABLE memories ADD COLUMN source_ref TEXT;
CREATE INDEX idx_memories_slot ON memories(project_id, slot) WHERE slot IS NOT NULL;

-- 004: causal edges (D-T-D: consecutive learnings of a session, subagent briefing/debriefing) need their
-- own rel_type. SQLite cannot alter a CHECK constraint, so the edges table is rebuilt with its rows.
CREATE TABLE edges_new (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    target_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    rel_type TEXT NOT NULL CHECK (rel_type IN ('relates_to', 'supersedes', 'contradicts', 'depends_on', 'causes')),
    weight REAL NOT NULL CHECK (weight >= 0 AND weight <= 1),
    origin TEXT NOT NULL DEFAULT 'event' CHECK (origin IN ('event', 'derived')),
    created_at TEXT NOT NULL,
    CHECK (source_id <> target_id),
    UNIQUE (source_id, target_id, rel_type)
);
INSERT INTO edges_new SELECT id, source_id, target_id, rel_type, weight, origin, created_at FROM edges;
DROP TABLE edges;
ALTER TABLE edges_new RENAME TO edges;
CREATE INDEX idx_edges_target ON edges(target_id);
CREATE INDEX idx_edges_origin ON edges(origin, rel_type);

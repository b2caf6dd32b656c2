-- 019: memories whose citations no longer resolve in the project's checkout (retrieve/citations.py): a file,
-- script, npm script, make target or mise task the memory names is gone. Packet building checks every project
-- that has a checkout on this machine and replaces its rows here; stale memories are not injected and
-- `nous review` lists them. Derived: the table can be emptied at any time, the next packet build refills it.
CREATE TABLE memory_stale (
    memory_id INTEGER PRIMARY KEY REFERENCES memories(id) ON DELETE CASCADE,
    project_id TEXT NOT NULL,
    unresolved_json TEXT NOT NULL,
    checkout TEXT NOT NULL,
    checked_at TEXT NOT NULL
);
CREATE INDEX idx_memory_stale_project ON memory_stale(project_id);

-- 005: ingest cursors, per-day file progress and project aliases on PostgreSQL (SQLite's ingest_cursors, migration 001, and
-- ingest_file_partitions, migration 003), keyed by tenant. A NULL inode is one key, not many
-- (NULLS NOT DISTINCT), so an upsert finds the row SQLite's update-then-insert finds.
CREATE TABLE ingest_cursors (
    tenant_id TEXT NOT NULL,
    cursor_id BIGINT GENERATED ALWAYS AS IDENTITY,
    transcript_path TEXT NOT NULL,
    file_inode TEXT,
    last_offset BIGINT NOT NULL CHECK (last_offset >= 0),
    last_mtime TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, cursor_id),
    UNIQUE NULLS NOT DISTINCT (tenant_id, transcript_path, file_inode)
);

CREATE TABLE ingest_file_partitions (
    tenant_id TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    file_inode TEXT NOT NULL,
    date TEXT NOT NULL,
    scanned_offset BIGINT NOT NULL,
    completed_offset BIGINT NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, transcript_path, file_inode, date)
);

-- Project identity (SQLite migration 008): each alias (a Claude Code folder, a session, a cwd, a remote) names
-- its canonical project. The projection maps events by 'session', then 'folder', as on SQLite.
CREATE TABLE project_aliases (
    tenant_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('cwd', 'remote', 'folder', 'session')),
    alias TEXT NOT NULL,
    project_id TEXT NOT NULL,
    evidence TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, kind, alias)
);
CREATE INDEX idx_learning_events_session ON learning_events(tenant_id, session_id);
CREATE INDEX idx_learning_events_folder ON learning_events(tenant_id, project_id);

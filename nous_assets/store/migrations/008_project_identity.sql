-- 008: project identity. A project is a repository, not a directory: the worktrees, the main checkout and the
-- subdirectories of one repository are one project. Identity is a projection concern: events keep the
-- project_id they were written with (Claude Code's folder); memories carry the canonical project.
-- The evidence tables accumulate what the transcripts (and the disk, while a path exists) say; the aliases are
-- recomputed from all of it, so they do not depend on the order in which days were ingested.

-- Where each session started (its earliest main-thread turn), and in which Claude Code folder it is stored.
CREATE TABLE identity_sessions (
    session_id TEXT PRIMARY KEY,
    folder TEXT NOT NULL,
    start_cwd TEXT,
    started_at TEXT NOT NULL
);

-- Directories sessions ran in (as_cwd = 1) or named (cd, git -C; as_cwd = 0). git_main / git_remote are what
-- the .git files said the last time the directory existed (kept when it is gone: worktrees get removed).
CREATE TABLE identity_paths (
    path TEXT PRIMARY KEY,
    as_cwd INTEGER NOT NULL CHECK (as_cwd IN (0, 1)),
    has_branch INTEGER NOT NULL CHECK (has_branch IN (0, 1)),
    first_seen TEXT NOT NULL,
    last_seen TEXT NOT NULL,
    git_main TEXT,
    git_remote TEXT,
    probed_at TEXT
);

-- Which directories each session ran in or named.
CREATE TABLE identity_session_paths (
    session_id TEXT NOT NULL,
    path TEXT NOT NULL,
    PRIMARY KEY (session_id, path)
) WITHOUT ROWID;

-- `git worktree add PATH` commands a session ran: PATH is a worktree of the repository at base_cwd.
CREATE TABLE identity_worktree_adds (
    base_cwd TEXT NOT NULL,
    path TEXT NOT NULL,
    first_seen TEXT NOT NULL,
    PRIMARY KEY (base_cwd, path)
) WITHOUT ROWID;

-- The result: every cwd seen (and each main checkout), remote URL, Claude Code folder and session mapped to
-- its canonical project, with the evidence that decided it. The SessionStart resolver reads kind 'cwd' and
-- 'remote'; the projection maps events by 'session', then 'folder'.
CREATE TABLE project_aliases (
    kind TEXT NOT NULL CHECK (kind IN ('cwd', 'remote', 'folder', 'session')),
    alias TEXT NOT NULL,
    project_id TEXT NOT NULL,
    evidence TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (kind, alias)
) WITHOUT ROWID;
CREATE INDEX idx_project_aliases_project ON project_aliases(project_id, kind);

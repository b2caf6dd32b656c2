-- 007: memories held out of injection packets by the packet guard, for `nous review`.
-- A memory whose text would have Claude run remote code, force-push a main branch, skip permissions or the
-- sandbox, disable checks, exfiltrate data, or that carries a secret is never injected while it is 'held';
-- the user approves it (a LearningValidated event, source user_review, bound to the content's hash: status
-- 'approved', injectable but still framed as a note) or rejects it (LearningArchived: the row goes).
-- Derived data: recomputed from memory content (the guard is deterministic) and the review events.
CREATE TABLE memory_holds (
    memory_id INTEGER PRIMARY KEY,
    learning_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('project', 'global')),
    status TEXT NOT NULL CHECK (status IN ('held', 'approved')),
    reason TEXT NOT NULL,
    findings_json TEXT NOT NULL,
    content_sha256 TEXT NOT NULL,
    guard_version TEXT NOT NULL,
    checked_at TEXT NOT NULL
);
CREATE INDEX idx_memory_holds_status ON memory_holds(status, project_id);

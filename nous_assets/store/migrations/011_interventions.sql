-- 013: the observer/intervention model's audit trail (spec "Observer and Intervention Model").
-- intervention_candidates (001) are immutable once emitted: their `state` column is the state they were
-- emitted in ('candidate'); every later change (approved, suppressed, expired, dismissed in review) is a row
-- appended to intervention_transitions, so each state change can be explained after the fact.
CREATE TRIGGER intervention_candidates_no_update BEFORE UPDATE ON intervention_candidates
BEGIN
    SELECT RAISE(ABORT, 'intervention_candidates is append-only: state changes go to intervention_transitions');
END;
CREATE TRIGGER intervention_candidates_no_delete BEFORE DELETE ON intervention_candidates
BEGIN
    SELECT RAISE(ABORT, 'intervention_candidates is append-only: candidates are never deleted');
END;

CREATE TABLE intervention_candidate_keys (
    -- what the reducer dedupes on and the evidence behind each candidate (kept apart from the spec's table)
    candidate_id TEXT PRIMARY KEY REFERENCES intervention_candidates(candidate_id),
    dedupe_key TEXT NOT NULL,
    evidence_json TEXT NOT NULL
);
CREATE INDEX idx_intervention_candidate_keys_dedupe ON intervention_candidate_keys(dedupe_key);

CREATE TABLE intervention_transitions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    candidate_id TEXT NOT NULL REFERENCES intervention_candidates(candidate_id),
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL CHECK (to_state IN ('approved', 'suppressed', 'delivered', 'expired')),
    reason TEXT NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('reducer', 'user_review')),
    at TEXT NOT NULL
);
CREATE INDEX idx_intervention_transitions_candidate ON intervention_transitions(candidate_id, id);
CREATE TRIGGER intervention_transitions_no_update BEFORE UPDATE ON intervention_transitions
BEGIN
    SELECT RAISE(ABORT, 'intervention_transitions is an append-only audit trail');
END;
CREATE TRIGGER intervention_transitions_no_delete BEFORE DELETE ON intervention_transitions
BEGIN
    SELECT RAISE(ABORT, 'intervention_transitions is an append-only audit trail');
END;

-- which active interventions each project's packets were built with, so a change rebuilds them
CREATE TABLE packet_interventions (
    project_id TEXT PRIMARY KEY,
    digest TEXT NOT NULL,
    built_at TEXT NOT NULL
);

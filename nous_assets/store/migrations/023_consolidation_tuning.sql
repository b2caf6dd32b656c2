-- 023: consolidation's thresholds move with its quality (seed 003, CX15 auto-tuning), within configured bounds;
-- every move is a row here, append-only, so the value in force and why it changed can be read back.
CREATE TABLE consolidation_tuning (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    parameter TEXT NOT NULL,
    old_value REAL NOT NULL,
    new_value REAL NOT NULL,
    reason TEXT NOT NULL,
    metrics_json TEXT NOT NULL,
    at TEXT NOT NULL
);
CREATE INDEX idx_consolidation_tuning_parameter ON consolidation_tuning(parameter, id);
CREATE TRIGGER consolidation_tuning_no_update BEFORE UPDATE ON consolidation_tuning
BEGIN
    SELECT RAISE(ABORT, 'consolidation_tuning is an append-only audit trail');
END;
CREATE TRIGGER consolidation_tuning_no_delete BEFORE DELETE ON consolidation_tuning
BEGIN
    SELECT RAISE(ABORT, 'consolidation_tuning is an append-only audit trail');
END;

-- 001: the cortex.db schema of the Nous v3 spec (event log, projections, queue, cache, archive).
-- Applied in one transaction by nous_assets.store.db.migrate(); the vec0 table is created there too,
-- because it needs the sqlite-vec extension loaded on the connection.

-- Small key/value table for store-level flags (the archive job is the only one allowed to move events).
CREATE TABLE nous_meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Immutable, append-only event log: the source of truth. Never updated or deleted.
CREATE TABLE learning_events (
    event_id INTEGER PRIMARY KEY AUTOINCREMENT,
    event_uuid TEXT NOT NULL UNIQUE,
    learning_id TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (
        event_type IN (
            'LearningExtracted', 'LearningValidated', 'LearningReinforced',
            'LearningWeakened', 'LearningContradicted', 'LearningSuperseded',
            'LearningArchived'
        )
    ),
    idempotency_key TEXT NOT NULL UNIQUE,
    schema_version INTEGER NOT NULL,
    transaction_time TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    vector_clock_json TEXT,
    payload_json TEXT NOT NULL,
    parent_event_id INTEGER REFERENCES learning_events(event_id),
    session_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (
        source IN ('fs_watch', 'fs_reconcile', 'historical_backfill', 'user_review')
    )
);
CREATE INDEX idx_learning_events_learning ON learning_events(learning_id, event_id);
CREATE INDEX idx_learning_events_project ON learning_events(project_id, event_id);
CREATE INDEX idx_learning_events_tx_time ON learning_events(transaction_time);

CREATE TRIGGER learning_events_no_update BEFORE UPDATE ON learning_events
BEGIN
    SELECT RAISE(ABORT, 'learning_events is append-only: events are never updated');
END;
CREATE TRIGGER learning_events_no_delete BEFORE DELETE ON learning_events
WHEN (SELECT value FROM nous_meta WHERE key = 'archive_in_progress') IS NULL
BEGIN
    SELECT RAISE(ABORT, 'learning_events is append-only: events are never deleted');
END;

-- Projection of the event log: current memories. id = event_id of the LearningExtracted that created it,
-- so a full replay reproduces the same ids.
CREATE TABLE memories (
    id INTEGER PRIMARY KEY,
    learning_id TEXT NOT NULL,
    content TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('learning', 'knowledge')),
    kind TEXT,
    domain TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('project', 'global')),
    project_id TEXT NOT NULL,
    source_session TEXT NOT NULL,
    reinforcement_score REAL NOT NULL,
    created_at TEXT NOT NULL,
    accessed_at TEXT,
    valid_from TEXT,
    valid_until TEXT,
    temporal_confidence TEXT NOT NULL CHECK (temporal_confidence IN ('low', 'medium', 'high')),
    validated_at TEXT,
    superseded_by TEXT,
    contradiction_count INTEGER NOT NULL DEFAULT 0,
    vector_clock_json TEXT,
    extractor_version TEXT NOT NULL,
    provenance_json TEXT,
    last_event_id INTEGER NOT NULL,
    CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until >= valid_from)
);
-- a named unique index (not an inline UNIQUE) so a full replay can drop it and build it once, sorted
CREATE UNIQUE INDEX idx_memories_learning ON memories(learning_id);
CREATE INDEX idx_memories_project ON memories(project_id, scope);
CREATE INDEX idx_memories_valid ON memories(valid_from, valid_until);

-- OR-set of normalised concept phrases per memory (add-wins union across events).
CREATE TABLE concepts (
    id INTEGER PRIMARY KEY,
    memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    concept TEXT NOT NULL CHECK (concept = lower(trim(concept)) AND length(concept) > 0),
    UNIQUE (memory_id, concept)
);
CREATE INDEX idx_concepts_concept ON concepts(concept);

-- Graph between memories. origin 'event' edges come from the event log (replayable);
-- 'derived' edges are computed by the pipeline (similarity, causal) and rebuilt at will.
CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    target_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
    rel_type TEXT NOT NULL CHECK (rel_type IN ('relates_to', 'supersedes', 'contradicts', 'depends_on')),
    weight REAL NOT NULL CHECK (weight >= 0 AND weight <= 1),
    origin TEXT NOT NULL DEFAULT 'event' CHECK (origin IN ('event', 'derived')),
    created_at TEXT NOT NULL,
    CHECK (source_id <> target_id),
    UNIQUE (source_id, target_id, rel_type)
);
CREATE INDEX idx_edges_target ON edges(target_id);

-- Full-text index over memory content and concepts (rowid = memories.id), kept in step by the projector.
CREATE VIRTUAL TABLE memories_fts USING fts5(content, concepts, tokenize = 'porter unicode61');

-- Which memories were injected into which session, and whether it helped.
CREATE TABLE access_log (
    id INTEGER PRIMARY KEY,
    memory_id INTEGER NOT NULL,
    session_id TEXT NOT NULL,
    project_id TEXT,
    was_useful INTEGER CHECK (was_useful IN (0, 1)),
    source TEXT,
    accessed_at TEXT NOT NULL
);
CREATE INDEX idx_access_log_memory ON access_log(memory_id, accessed_at);
CREATE INDEX idx_access_log_session ON access_log(session_id);

-- Embedding bookkeeping next to the vec0 table `vectors` (model, dimension and content hash per memory).
CREATE TABLE vector_meta (
    memory_id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL CHECK (dimensions > 0),
    content_hash TEXT NOT NULL,
    embedded_at TEXT NOT NULL
);

CREATE TABLE nli_results (
    id INTEGER PRIMARY KEY,
    memory_id_a INTEGER NOT NULL,
    memory_id_b INTEGER NOT NULL,
    nli_label TEXT NOT NULL CHECK (nli_label IN ('entailment', 'neutral', 'contradiction')),
    confidence REAL NOT NULL,
    model_version TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    -- the spec lists this CHECK between columns; SQLite wants table constraints last
    CHECK (memory_id_a < memory_id_b),
    UNIQUE (memory_id_a, memory_id_b)
);
CREATE INDEX idx_nli_results_updated_at ON nli_results(updated_at);

CREATE TABLE projection_checkpoints (
    projector_name TEXT PRIMARY KEY,
    last_event_id INTEGER NOT NULL,
    updated_at TEXT NOT NULL
);

-- Precomputed context packets read by the SessionStart resolver (plain table: stdlib sqlite3 reads it).
CREATE TABLE injection_cache (
    cache_key TEXT PRIMARY KEY,
    project_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('project', 'global', 'session')),
    fingerprint_json TEXT NOT NULL,
    packet_text TEXT NOT NULL,
    memory_ids_json TEXT NOT NULL,
    char_count INTEGER NOT NULL CHECK (char_count >= 0),
    built_from_event_id INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT
);
CREATE INDEX idx_injection_cache_project ON injection_cache(project_id, scope);

-- Durable ingest queue (spec "Ingest Queue Durability Contract").
CREATE TABLE ingest_events (
    ingest_id INTEGER PRIMARY KEY,
    source TEXT NOT NULL CHECK (source IN ('fs_watch', 'fs_reconcile', 'historical_backfill')),
    project_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    file_inode TEXT,
    file_offset INTEGER NOT NULL,
    payload_json TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('pending', 'processing', 'completed', 'failed', 'dead_letter')),
    retry_count INTEGER NOT NULL DEFAULT 0,
    claimed_by TEXT,
    claimed_at TEXT,
    lease_expires_at TEXT,
    next_attempt_at TEXT,
    last_error TEXT,
    idempotency_key TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    UNIQUE (idempotency_key)
);
CREATE INDEX idx_ingest_events_status_next ON ingest_events(status, next_attempt_at);
CREATE INDEX idx_ingest_events_lease ON ingest_events(status, lease_expires_at);

CREATE TABLE ingest_cursors (
    cursor_id INTEGER PRIMARY KEY,
    transcript_path TEXT NOT NULL,
    file_inode TEXT,
    last_offset INTEGER NOT NULL,
    last_mtime TEXT,
    updated_at TEXT NOT NULL,
    UNIQUE (transcript_path, file_inode)
);

CREATE TABLE processed_extractions (
    project_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    learning_index INTEGER NOT NULL,
    latest_event_id INTEGER NOT NULL,
    latest_extractor_version TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (project_id, session_id, learning_index)
);

CREATE TABLE intervention_candidates (
    candidate_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project', 'global')),
    target_session_id TEXT,
    target_project_id TEXT,
    reason_codes_json TEXT NOT NULL,
    confidence REAL NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    ttl_seconds INTEGER NOT NULL,
    cooldown_seconds INTEGER NOT NULL,
    payload_text TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('candidate', 'approved', 'suppressed', 'delivered', 'expired')),
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE active_interventions (
    intervention_id TEXT PRIMARY KEY,
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project', 'global')),
    target_session_id TEXT,
    target_project_id TEXT,
    payload_text TEXT NOT NULL,
    priority INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    cooldown_until TEXT,
    dedupe_key TEXT NOT NULL UNIQUE,
    source_candidate_id TEXT,
    updated_at TEXT NOT NULL
);
CREATE INDEX idx_active_interventions_scope
    ON active_interventions(scope, target_session_id, target_project_id, expires_at);

CREATE TABLE archive_segments (
    segment_id TEXT PRIMARY KEY,
    archive_path TEXT NOT NULL UNIQUE,
    tier TEXT NOT NULL CHECK (tier IN ('cold')),
    min_event_id INTEGER NOT NULL,
    max_event_id INTEGER NOT NULL,
    event_count INTEGER NOT NULL,
    stream_checksum_sha256 TEXT NOT NULL,
    compressed_bytes INTEGER NOT NULL,
    created_at TEXT NOT NULL,
    restored_at TEXT
);
CREATE INDEX idx_archive_segments_event_range ON archive_segments(min_event_id, max_event_id);

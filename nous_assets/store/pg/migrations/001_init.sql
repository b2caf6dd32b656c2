-- 001: the team-mode schema on PostgreSQL: the same tables and rules as cortex.db, each keyed by tenant_id.
-- Applied in one transaction by nous_assets.store.pg.db.migrate() with its checksum recorded in pg_schema_migrations.
-- Times stay canonical UTC ISO-8601 text, as in SQLite, so both backends compare and project them alike.
CREATE EXTENSION IF NOT EXISTS vector;

-- Immutable, append-only event log. event_id is one sequence for every tenant (ordering within a tenant is
-- what projection uses); idempotency keys and event uuids are unique per tenant.
CREATE TABLE learning_events (
    tenant_id TEXT NOT NULL,
    event_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_uuid TEXT NOT NULL,
    learning_id TEXT NOT NULL,
    event_type TEXT NOT NULL CHECK (
        event_type IN (
            'LearningExtracted', 'LearningValidated', 'LearningReinforced',
            'LearningWeakened', 'LearningContradicted', 'LearningSuperseded',
            'LearningArchived'
        )
    ),
    idempotency_key TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    transaction_time TEXT NOT NULL,
    valid_from TEXT,
    valid_until TEXT,
    vector_clock_json TEXT,
    payload_json TEXT NOT NULL,
    parent_event_id BIGINT REFERENCES learning_events(event_id),
    session_id TEXT NOT NULL,
    project_id TEXT NOT NULL,
    source TEXT NOT NULL CHECK (source IN ('fs_watch', 'fs_reconcile', 'historical_backfill', 'user_review')),
    UNIQUE (tenant_id, idempotency_key),
    UNIQUE (tenant_id, event_uuid)
);
CREATE INDEX idx_learning_events_tenant ON learning_events(tenant_id, event_id);
CREATE INDEX idx_learning_events_learning ON learning_events(tenant_id, learning_id, event_id);

CREATE FUNCTION learning_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'learning_events is append-only: events are never updated or deleted';
END;
$$;
CREATE TRIGGER learning_events_no_change BEFORE UPDATE OR DELETE ON learning_events
    FOR EACH ROW EXECUTE FUNCTION learning_events_append_only();

-- Projection: current memories (id = event_id of the LearningExtracted that created it).
-- search_tsv is the full-text index over content and concepts (the FTS5 table of cortex.db).
CREATE TABLE memories (
    tenant_id TEXT NOT NULL,
    id BIGINT NOT NULL,
    learning_id TEXT NOT NULL,
    content TEXT NOT NULL,
    type TEXT NOT NULL CHECK (type IN ('learning', 'knowledge')),
    kind TEXT,
    domain TEXT,
    scope TEXT NOT NULL CHECK (scope IN ('project', 'global')),
    project_id TEXT NOT NULL,
    source_session TEXT NOT NULL,
    reinforcement_score DOUBLE PRECISION NOT NULL,
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
    last_event_id BIGINT NOT NULL,
    slot TEXT,
    applies_when TEXT,
    source_ref TEXT,
    concepts_text TEXT NOT NULL DEFAULT '',
    search_tsv tsvector GENERATED ALWAYS AS (
        to_tsvector('english', content || ' ' || concepts_text)
    ) STORED,
    PRIMARY KEY (tenant_id, id),
    UNIQUE (tenant_id, learning_id),
    CHECK (valid_until IS NULL OR valid_from IS NULL OR valid_until >= valid_from)
);
CREATE INDEX idx_memories_project ON memories(tenant_id, project_id, scope);
CREATE INDEX idx_memories_search ON memories USING gin(search_tsv);

CREATE TABLE concepts (
    tenant_id TEXT NOT NULL,
    memory_id BIGINT NOT NULL,
    concept TEXT NOT NULL CHECK (concept = lower(btrim(concept)) AND length(concept) > 0),
    PRIMARY KEY (tenant_id, memory_id, concept),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories(tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_concepts_concept ON concepts(tenant_id, concept);

CREATE TABLE edges (
    tenant_id TEXT NOT NULL,
    source_id BIGINT NOT NULL,
    target_id BIGINT NOT NULL,
    rel_type TEXT NOT NULL CHECK (rel_type IN ('relates_to', 'supersedes', 'contradicts', 'depends_on')),
    weight DOUBLE PRECISION NOT NULL CHECK (weight >= 0 AND weight <= 1),
    origin TEXT NOT NULL DEFAULT 'event' CHECK (origin IN ('event', 'derived')),
    created_at TEXT NOT NULL,
    CHECK (source_id <> target_id),
    PRIMARY KEY (tenant_id, source_id, target_id, rel_type),
    FOREIGN KEY (tenant_id, source_id) REFERENCES memories(tenant_id, id) ON DELETE CASCADE,
    FOREIGN KEY (tenant_id, target_id) REFERENCES memories(tenant_id, id) ON DELETE CASCADE
);
CREATE INDEX idx_edges_target ON edges(tenant_id, target_id);

CREATE TABLE projection_checkpoints (
    tenant_id TEXT NOT NULL,
    projector_name TEXT NOT NULL,
    last_event_id BIGINT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, projector_name)
);

-- Vectors: any dimension in one column; nous_assets.store.pg.vectors creates one HNSW (cosine) expression
-- index per dimension in use, partial on that dimension.
CREATE TABLE memory_vectors (
    tenant_id TEXT NOT NULL,
    memory_id BIGINT NOT NULL,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL CHECK (dimensions > 0),
    content_hash TEXT NOT NULL,
    embedding vector NOT NULL,
    embedded_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, memory_id),
    FOREIGN KEY (tenant_id, memory_id) REFERENCES memories(tenant_id, id) ON DELETE CASCADE,
    CHECK (vector_dims(embedding) = dimensions)
);

CREATE TABLE injection_cache (
    tenant_id TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    project_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('project', 'global', 'session')),
    fingerprint_json TEXT NOT NULL,
    packet_text TEXT NOT NULL,
    memory_ids_json TEXT NOT NULL,
    char_count INTEGER NOT NULL CHECK (char_count >= 0),
    built_from_event_id BIGINT NOT NULL,
    created_at TEXT NOT NULL,
    expires_at TEXT,
    PRIMARY KEY (tenant_id, cache_key)
);
CREATE INDEX idx_injection_cache_project ON injection_cache(tenant_id, project_id, scope);

-- Durable ingest queue (spec "Ingest Queue Durability Contract"), claimed with FOR UPDATE SKIP LOCKED.
CREATE TABLE ingest_events (
    tenant_id TEXT NOT NULL,
    ingest_id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    source TEXT NOT NULL CHECK (source IN ('fs_watch', 'fs_reconcile', 'historical_backfill')),
    project_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    transcript_path TEXT NOT NULL,
    file_inode TEXT,
    file_offset BIGINT NOT NULL,
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
    UNIQUE (tenant_id, idempotency_key)
);
CREATE INDEX idx_ingest_events_due ON ingest_events(tenant_id, status, next_attempt_at);
CREATE INDEX idx_ingest_events_lease ON ingest_events(tenant_id, status, lease_expires_at);

-- Interventions (spec "Observer and Intervention Model"): immutable candidates, one active row per dedupe key,
-- every state change appended to intervention_transitions.
CREATE TABLE intervention_candidates (
    tenant_id TEXT NOT NULL,
    candidate_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project', 'global')),
    target_session_id TEXT,
    target_project_id TEXT,
    reason_codes_json TEXT NOT NULL,
    confidence DOUBLE PRECISION NOT NULL,
    priority INTEGER NOT NULL,
    ttl_seconds INTEGER NOT NULL,
    cooldown_seconds INTEGER NOT NULL,
    payload_text TEXT NOT NULL,
    dedupe_key TEXT NOT NULL,
    evidence_json TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, candidate_id)
);
CREATE INDEX idx_intervention_candidates_dedupe ON intervention_candidates(tenant_id, dedupe_key);

CREATE TABLE intervention_transitions (
    tenant_id TEXT NOT NULL,
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    candidate_id TEXT NOT NULL,
    from_state TEXT NOT NULL,
    to_state TEXT NOT NULL CHECK (to_state IN ('approved', 'suppressed', 'delivered', 'expired')),
    reason TEXT NOT NULL,
    actor TEXT NOT NULL CHECK (actor IN ('reducer', 'user_review')),
    at TEXT NOT NULL,
    FOREIGN KEY (tenant_id, candidate_id) REFERENCES intervention_candidates(tenant_id, candidate_id)
);
CREATE INDEX idx_intervention_transitions_candidate ON intervention_transitions(tenant_id, candidate_id, id);

CREATE TABLE active_interventions (
    tenant_id TEXT NOT NULL,
    intervention_id TEXT NOT NULL,
    scope TEXT NOT NULL CHECK (scope IN ('session', 'project', 'global')),
    target_session_id TEXT,
    target_project_id TEXT,
    payload_text TEXT NOT NULL,
    priority INTEGER NOT NULL,
    expires_at TEXT NOT NULL,
    cooldown_until TEXT,
    dedupe_key TEXT NOT NULL,
    source_candidate_id TEXT,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, dedupe_key)
);
CREATE INDEX idx_active_interventions_scope ON active_interventions(tenant_id, scope, target_project_id, expires_at);

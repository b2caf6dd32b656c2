-- 017: nous serve. Bearer tokens per client, stored as a salted digest (the token itself is shown once and
-- never stored), and the receipt of every accepted write: which client sent which key, from which source.
CREATE TABLE service_tokens (
    token_id TEXT PRIMARY KEY,
    tenant_id TEXT NOT NULL,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    salt TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT
);
CREATE INDEX idx_service_tokens_client ON service_tokens(tenant_id, client_id);

-- Audit of writes through the service (spec "Multi-Client Correctness Rules" 5): the event log keeps its own
-- columns; who delivered a key first, and as what source, is kept here. One row per tenant, kind and key.
CREATE TABLE service_receipts (
    tenant_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('event', 'artifact')),
    idempotency_key TEXT NOT NULL,
    client_id TEXT NOT NULL,
    event_source TEXT NOT NULL,
    project_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    received_at TEXT NOT NULL,
    PRIMARY KEY (tenant_id, kind, idempotency_key)
);

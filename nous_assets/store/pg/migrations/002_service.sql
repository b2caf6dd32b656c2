-- 002: nous serve on PostgreSQL. Bearer tokens per client (salted digest only; token_id is the public half
-- of a token, unique across tenants because a request names no tenant before its token is checked), and
-- the receipt of every accepted write (which client delivered which key, as which source).
CREATE TABLE service_tokens (
    tenant_id TEXT NOT NULL,
    token_id TEXT NOT NULL UNIQUE,
    client_id TEXT NOT NULL,
    scopes TEXT NOT NULL,
    salt TEXT NOT NULL,
    digest TEXT NOT NULL,
    created_at TEXT NOT NULL,
    revoked_at TEXT,
    PRIMARY KEY (tenant_id, token_id)
);

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

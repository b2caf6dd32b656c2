-- 004: memory_vectors hash-partitioned by tenant_id (64 partitions), so a tenant's KNN search walks the HNSW
-- graph of its own partition (~1/64 of the table, shared with few other tenants) instead of one global graph
-- whose nearest neighbours mostly belong to other tenants and are filtered away (benchmarks/RESULTS.md, "Scale":
-- at 1M vectors over 100 tenants one global index gave recall@10 0.82 at p95 107 ms, the partitions 1.0 at 14 ms).
-- Hash, not list: a new tenant needs no DDL. Rows, constraints and the per-dimension partial HNSW expression
-- indexes are carried over; the indexes are declared on the parent, so every partition gets one.
ALTER TABLE memory_vectors RENAME TO memory_vectors_unpartitioned;
ALTER TABLE memory_vectors_unpartitioned RENAME CONSTRAINT memory_vectors_pkey TO memory_vectors_unpartitioned_pkey;

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
) PARTITION BY HASH (tenant_id);

DO $$
BEGIN
    FOR i IN 0..63 LOOP
        EXECUTE format(
            'CREATE TABLE memory_vectors_p%s PARTITION OF memory_vectors FOR VALUES WITH (MODULUS 64, REMAINDER %s)',
            lpad(i::text, 2, '0'), i
        );
    END LOOP;
END;
$$;

INSERT INTO memory_vectors SELECT tenant_id, memory_id, model, dimensions, content_hash, embedding, embedded_at
FROM memory_vectors_unpartitioned;

DO $$
DECLARE
    d INTEGER;
BEGIN
    FOR d IN SELECT DISTINCT dimensions FROM memory_vectors_unpartitioned LOOP
        EXECUTE format('DROP INDEX IF EXISTS idx_memory_vectors_hnsw_%s', d);
        EXECUTE format(
            'CREATE INDEX idx_memory_vectors_hnsw_%s ON memory_vectors '
            'USING hnsw ((embedding::vector(%s)) vector_cosine_ops) WHERE dimensions = %s',
            d, d, d
        );
    END LOOP;
END;
$$;

DROP TABLE memory_vectors_unpartitioned;

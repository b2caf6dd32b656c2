-- 013: memory vectors partitioned by scope, and the float32 vector kept next to its bookkeeping.
-- `vectors` becomes a vec0 table with a partition key `part`: 'g' for a global-scope memory, 'p:' || project_id
-- for a project-scope one, so a query scans its project's partition and the global one instead of every
-- vector (KNN inside a partition is exact). `vector_meta.embedding` holds the same float32 bytes: loading the
-- vectors of a few hundred candidates by id from vec0 scans the whole table, from here it is a primary-key
-- lookup; it is also what `vectors` is rebuilt from when its dimension changes. `vector_meta.part` is the
-- partition a vector was filed under (a memory whose scope or project changed is refiled by the embedding pass).
-- Existing vectors are carried over; a vector of another dimension than 384 stays in `vector_meta` and is put
-- back by the next embedding pass (which recreates `vectors` for the provider's dimension).
ALTER TABLE vector_meta ADD COLUMN part TEXT;
ALTER TABLE vector_meta ADD COLUMN embedding BLOB;
CREATE TABLE vector_carry (memory_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
INSERT INTO vector_carry(memory_id, embedding) SELECT memory_id, embedding FROM vectors;
UPDATE vector_meta SET embedding = (SELECT c.embedding FROM vector_carry c WHERE c.memory_id = vector_meta.memory_id);
UPDATE vector_meta SET part = (
    SELECT CASE WHEN m.scope = 'global' THEN 'g' ELSE 'p:' || m.project_id END FROM memories m
    WHERE m.id = vector_meta.memory_id
);
DELETE FROM vector_meta WHERE embedding IS NULL;
DROP TABLE vector_carry;
DROP TABLE vectors;
CREATE VIRTUAL TABLE vectors USING vec0(
    memory_id INTEGER PRIMARY KEY,
    part TEXT PARTITION KEY,
    embedding FLOAT[384] distance_metric=cosine
);
INSERT INTO vectors(memory_id, part, embedding)
    SELECT memory_id, part, embedding FROM vector_meta
    WHERE part IS NOT NULL AND dimensions = 384 AND length(embedding) = 1536
    ORDER BY part, memory_id;
CREATE INDEX idx_vector_meta_model ON vector_meta(model, dimensions);

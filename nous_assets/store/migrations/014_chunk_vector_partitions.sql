-- 014: episodic chunk vectors partitioned by the Claude Code folder the chunk was read from
-- (`transcript_chunks.project_id`, which never changes for a chunk), so a query scans the folders its project's
-- sessions live in instead of every chunk vector. Existing 384-dimension vectors are carried over; vectors of
-- another dimension lose their bookkeeping and are embedded again by the next pass (it recreates the table for
-- the provider's dimension anyway). The session index finds the folders of a project's aliased sessions.
CREATE TABLE chunk_vector_carry (chunk_id INTEGER PRIMARY KEY, embedding BLOB NOT NULL);
INSERT INTO chunk_vector_carry(chunk_id, embedding) SELECT chunk_id, embedding FROM chunk_vectors;
DROP TABLE chunk_vectors;
CREATE VIRTUAL TABLE chunk_vectors USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    folder TEXT PARTITION KEY,
    embedding FLOAT[384] distance_metric=cosine
);
INSERT INTO chunk_vectors(chunk_id, folder, embedding)
    SELECT v.chunk_id, c.project_id, v.embedding FROM chunk_vector_carry v JOIN transcript_chunks c ON c.id = v.chunk_id
    WHERE length(v.embedding) = 1536
    ORDER BY c.project_id, v.chunk_id;
DELETE FROM chunk_vector_meta WHERE chunk_id NOT IN (SELECT chunk_id FROM chunk_vectors);
DROP TABLE chunk_vector_carry;
CREATE INDEX idx_transcript_chunks_session ON transcript_chunks(session_id);

-- 015: the concepts of each episodic chunk, computed once by the embeddings asset instead of on every query
-- (concept extraction was the largest stage of a hybrid search). Keyed by a digest of the text they were
-- computed from: a row whose chunk text has changed since is ignored and recomputed.
CREATE TABLE chunk_concepts (
    chunk_id INTEGER PRIMARY KEY,
    text_digest TEXT NOT NULL,
    concepts_json TEXT NOT NULL
);

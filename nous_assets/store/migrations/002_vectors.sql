-- 002: dense vectors in a sqlite-vec vec0 table (cosine distance). Needs the sqlite-vec extension,
-- which nous_assets.store.db.connect() loads on every connection. 384 = all-MiniLM-L6-v2.
CREATE VIRTUAL TABLE vectors USING vec0(
    memory_id INTEGER PRIMARY KEY,
    embedding FLOAT[384] distance_metric=cosine
);

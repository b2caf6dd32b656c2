-- 005: episodic evidence. User and assistant messages from the lake, searchable next to memories
-- (FTS5 + vectors), each pointing back at its transcript lines. Derived data: rebuilt from the lake.
CREATE TABLE transcript_chunks (
    id INTEGER PRIMARY KEY,
    uuid TEXT NOT NULL UNIQUE,
    project_id TEXT NOT NULL,
    session_id TEXT NOT NULL,
    date TEXT NOT NULL,
    role TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    text TEXT NOT NULL,
    source_path TEXT NOT NULL,
    line_offsets_json TEXT NOT NULL,
    uuids_json TEXT NOT NULL
);
CREATE INDEX idx_transcript_chunks_project ON transcript_chunks(project_id, date);
CREATE INDEX idx_transcript_chunks_date ON transcript_chunks(date);
CREATE VIRTUAL TABLE chunks_fts USING fts5(text, tokenize = 'porter unicode61');
CREATE VIRTUAL TABLE chunk_vectors USING vec0(
    chunk_id INTEGER PRIMARY KEY,
    embedding FLOAT[384] distance_metric=cosine
);
CREATE TABLE chunk_vector_meta (
    chunk_id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    dimensions INTEGER NOT NULL,
    content_hash TEXT NOT NULL,
    embedded_at TEXT NOT NULL
);

-- 003: per-file, per-day ingest progress. A transcript file's lines can fall on several days
-- (a session running past midnight); its cursor may only move past bytes once every day those
-- bytes belong to has been extracted and completed.
CREATE TABLE ingest_file_partitions (
    transcript_path TEXT NOT NULL,
    file_inode TEXT NOT NULL,
    date TEXT NOT NULL,
    scanned_offset INTEGER NOT NULL,
    completed_offset INTEGER NOT NULL DEFAULT 0,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (transcript_path, file_inode, date)
);

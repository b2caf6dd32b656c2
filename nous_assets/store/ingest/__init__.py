"""What capture writes and reads besides events: file cursors, the ingest floor, transcript files and
chunks, redaction rescans, ingested auto-memory notes."""

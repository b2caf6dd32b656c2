"""Process mining over the event log: ``nous metrics`` and the ``metrics`` asset (DuckDB over read-only reads)."""

"""The PostgreSQL + pgvector backend (team mode, ``NOUS_BACKEND=postgres``): every table keyed by tenant."""

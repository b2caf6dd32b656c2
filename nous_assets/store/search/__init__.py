"""Reads and derived tables for retrieval: full-text and vector search over memories and chunks, concepts,
owners, edges and their walks."""

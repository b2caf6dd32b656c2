"""Read models: what review, doctor, metrics, observers, the MCP tools and the assets read (counts, holds,
trails, timelines, access, retention inputs)."""

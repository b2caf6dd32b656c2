"""Memories a user names by their words (``nous forget QUERY``): every word in the text, nothing fuzzy.

Forgetting is destructive, so the match is the plainest one a user can predict: each word of the query occurs
in the memory's content (case-insensitive for ASCII letters), not a ranked search that would also pull in what
is merely related.
"""

from __future__ import annotations

from nous_assets.store.db import Connection


def _like(word: str) -> str:
    return "%" + word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def containing(conn: Connection, words: list[str], project_id: str | None, limit: int) -> list[int]:
    """Ids of current memories whose content contains every one of ``words`` (in ``project_id`` and global ones
    when given), newest first, at most ``limit``."""
    if not words:
        return []
    clauses = " AND ".join("content LIKE ? ESCAPE '\\'" for _ in words)
    params: list = [_like(w) for w in words]
    if project_id is not None:
        clauses += " AND (project_id = ? OR scope = 'global')"
        params.append(project_id)
    rows = conn.execute(f"SELECT id FROM memories WHERE {clauses} ORDER BY id DESC LIMIT ?", (*params, limit))
    return [int(r[0]) for r in rows]

"""Whose a searched row is, in the form the FTS indexes hold it (migration 016).

A project's search asks the index for its own rows only (``owner : (…)`` in the MATCH, a doclist
intersection) instead of ranking every project's matches and dropping the others'. The token must be
one FTS token for any project id: ``k`` + the id's UTF-8 in lower-case hex + ``x`` (the migration and its
trigger compute the same with SQL's ``hex()``); global memories share :data:`GLOBAL`.
"""

from __future__ import annotations

GLOBAL = "kglobalx"  # 'g', 'l', 'o' are never hex digits: no project's token can equal it


def token(project_id: str) -> str:
    """The owner token of a project (or of the Claude Code folder a chunk was read from)."""
    return "k" + project_id.encode("utf-8").hex() + "x"


def memory_token(project_id: str, scope: str) -> str:
    """A memory's owner token: its project's, or :data:`GLOBAL` for a global memory."""
    return GLOBAL if scope == "global" else token(project_id)


def concept_owner(project_id: str, scope: str) -> str | None:
    """``concepts.owner`` of a memory's concepts: its project, NULL for a global memory."""
    return None if scope == "global" else project_id


def match_filter(tokens: list[str]) -> str:
    """The MATCH clause that keeps rows owned by one of ``tokens``."""
    return "owner : (" + " OR ".join(f'"{t}"' for t in tokens) + ")"

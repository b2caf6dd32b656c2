"""Transcript chunks as retrieval candidates, scored by the same seven dimensions as memories.

A chunk is evidence, not knowledge: it enters the scorer with a neutral reinforcement (0.5), valid
from the moment it was said, concepts mined from its text, its FTS bm25 and its vector cosine.
Its candidate id is the chunk id negated, so it can never collide with a memory id; results carry
``type='episode'`` and the source ``episodic`` so callers mark them as such.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from nous_assets.retrieve.query import Query, concepts_from_text, fts_match_expression
from nous_assets.retrieve.scoring import Candidate
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, DatabaseError

EPISODE = "episode"


def is_episode(candidate_id: int) -> bool:
    return candidate_id < 0


def chunk_id(candidate_id: int) -> int:
    return -candidate_id


def _project_filter(query: Query) -> tuple[str, tuple]:
    """Chunks keep their Claude Code folder as project: a project's are those of every folder mapped to it."""
    if query.project_id is None:
        return "", ()
    return (
        " AND (c.project_id = ? OR c.project_id IN "
        "(SELECT alias FROM project_aliases WHERE kind = 'folder' AND project_id = ?))",
        (query.project_id, query.project_id),
    )


def chunk_candidates(
    conn: Connection, query: Query, settings: Settings, *, query_vector: Any = None, limit: int | None = None
) -> list[Candidate]:
    """FTS and vector hits among the project's chunks (valid at ``query.as_at`` when given)."""
    limit = limit or settings.retrieve.candidates
    where, params = _project_filter(query)
    if query.as_at:
        where += " AND c.timestamp <= ?"
        params += (query.as_at,)
    bm25: dict[int, float] = {}
    match = fts_match_expression(query.text)
    if match:
        try:
            rows = conn.execute(
                f"SELECT c.id, bm25(chunks_fts) FROM chunks_fts JOIN transcript_chunks c ON c.id = chunks_fts.rowid "
                f"WHERE chunks_fts MATCH ?{where} ORDER BY bm25(chunks_fts) LIMIT ?",
                (match, *params, limit),
            ).fetchall()
            bm25 = {int(i): float(b) for i, b in rows}
        except DatabaseError:
            bm25 = {}
    cosines: dict[int, float] = {}
    if query_vector is not None:
        from nous_assets.embed.chunks import search_chunks

        hits = search_chunks(conn, np.asarray(query_vector, dtype=np.float32), min(4096, limit * 4))
        if hits:
            allowed = {
                int(r[0])
                for r in conn.execute(
                    f"SELECT c.id FROM transcript_chunks c WHERE c.id IN ({','.join('?' * len(hits))}){where}",
                    (*[h[0] for h in hits], *params),
                )
            }
            cosines = {cid: cos for cid, cos in hits if cid in allowed}
            cosines = dict(sorted(cosines.items(), key=lambda kv: -kv[1])[:limit])
    ids = sorted(set(bm25) | set(cosines))
    if not ids:
        return []
    out = []
    for i in range(0, len(ids), 900):
        chunk = ids[i : i + 900]
        for cid, project, session, role, ts, text in conn.execute(
            f"SELECT id, project_id, session_id, role, timestamp, text FROM transcript_chunks "
            f"WHERE id IN ({','.join('?' * len(chunk))})",
            chunk,
        ):
            out.append(
                Candidate(
                    id=-int(cid),
                    content=text,
                    learning_id=f"chunk:{cid}",
                    type=EPISODE,
                    kind=role,
                    scope="project",
                    project_id=project,
                    source_session=session,
                    created_at=ts,
                    valid_from=ts,
                    temporal_confidence="high",
                    concepts=concepts_from_text(text),
                    bm25=bm25.get(cid),
                    vector_cosine=cosines.get(cid),
                    sources=frozenset({"episodic"}),
                )
            )
    return out

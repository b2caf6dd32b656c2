"""Transcript chunks as retrieval candidates, scored by the same seven dimensions as memories.

A chunk is evidence, not knowledge: it enters the scorer with a neutral reinforcement (0.5), valid
from the moment it was said, concepts mined from its text, its FTS bm25 and its vector cosine.
Its candidate carries the chunk's own id with ``row_kind = EPISODE`` (so ``key`` tells it from the
memory of the same number); results also carry ``type='episode'`` and the source ``episodic``.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from nous_assets.retrieve.query import Query, concept_words, concepts_from_text, fts_match_expression
from nous_assets.retrieve.resolution import asks_about_a_problem
from nous_assets.retrieve.scoring import EPISODE, Candidate
from nous_assets.settings import Settings
from nous_assets.store.db import Connection, atomic
from nous_assets.store.ingest import transcript_chunks
from nous_assets.store.search import chunk_concepts

INDEX_BATCH = 2000
# Entity hop (a second retrieval round): the names the first round's best chunks mention that the question does
# not ("Becoming Nicole", "Rome") are searched again, so a second turn about the same thing joins the candidates
# with its bm25 scaled by HOP_WEIGHT (0 = off; a bench switch, measured per lever). LoCoMo dev recall@10 (cat 1-4):
# alone 0.775 -> 0.777 (multi-hop .418 -> .430; conv-30 .392 -> .438), with the speaker lever 0.799 -> 0.802.
HOP_WEIGHT = 0.5
HOP_SEEDS = 3
HOP_LIMIT = 20  # second-round hits kept: each one more candidate to load and score
HOP_TERMS = 6
# The answer to a question is the turn after it, which often shares none of its words ("What inspired you?" ->
# "I painted this after I visited a LGBTQ center"): each of the first round's REPLY_SEEDS best turns whose question
# sentence itself holds a word of the asked question lends the reply it got its bm25 and cosine, scaled by
# REPLY_WEIGHT (0 = off), where they beat the reply's own. LoCoMo dev recall@10 (cat 1-4) 0.777 -> 0.792 (single-hop
# .825 -> .851, multi-hop .430 -> .441; adversarial .887 -> .958); any question turn lending (no word test) 0.773.
REPLY_WEIGHT = 1.0
REPLY_SEEDS = 10
_ENTITY = re.compile(r"(?<![.!?]\s)(?<!^)\b([A-Z][a-z]+(?:\s[A-Z][a-z]+)*)")
_SPEAKER_PREFIX = re.compile(r"^[A-Z][\w'-]*(?: [A-Z][\w'-]*)?: ")


def text_digest(text: str) -> str:
    """What a stored concept set was computed from (a changed text invalidates it)."""
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=12).hexdigest()


def index_chunk_concepts(conn: Connection) -> int:
    """Store the concepts of every chunk that has none yet, a batch per transaction; how many were stored."""
    done = 0
    while batch := chunk_concepts.missing(conn, INDEX_BATCH):
        with atomic(conn):
            chunk_concepts.put_many(conn, [(i, text_digest(t), concepts_from_text(t)) for i, t in batch])
        done += len(batch)
    return done


def _concepts(conn: Connection, rows: Sequence[tuple]) -> dict[int, frozenset[str]]:
    """Each row's concepts: stored when its digest matches the text, else computed now."""
    stored = chunk_concepts.for_ids(conn, [int(r[0]) for r in rows])
    out = {}
    for row in rows:
        cid, text = int(row[0]), row[-1]
        hit = stored.get(cid)
        out[cid] = frozenset(hit[1]) if hit and hit[0] == text_digest(text) else concepts_from_text(text)
    return out


def hop_terms(texts: Sequence[str], question: str, limit: int = HOP_TERMS) -> list[str]:
    """Capitalised names in ``texts`` (speaker prefixes and sentence starts aside) that ``question`` lacks."""
    asked = {t.lower() for t in re.findall(r"\w+", question)}
    seen: dict[str, None] = {}
    for text in texts:
        for name in _ENTITY.findall(_SPEAKER_PREFIX.sub("", text)):
            if name.lower() not in asked and not all(w.lower() in asked for w in name.split()):
                seen.setdefault(name, None)
    return list(seen)[:limit]


def _seeds(bm25: dict[int, float], cosines: dict[int, float], n: int) -> list[int]:
    """The first round's best ``n`` chunks by rank sum over the text and the vector ranking."""
    rank: dict[int, float] = {}
    for ranking in (sorted(bm25, key=lambda i: bm25[i]), sorted(cosines, key=lambda i: -cosines[i])):
        for place, cid in enumerate(ranking[:20]):
            rank[cid] = rank.get(cid, 0.0) + 1.0 / (10 + place)
    return sorted(rank, key=lambda i: -rank[i])[:n]


_QUESTION = re.compile(r"[^.!?\n]*\?")


def _stems(text: str) -> set[str]:
    """A text's concept words cut to five letters: "painting" meets "painted", "inspired" "inspire"."""
    return {t[:5] for t in concept_words(text)}


def _shares(text: str, asked: set[str]) -> bool:
    """Whether ``text`` holds one of the ``asked`` stems."""
    return bool(asked & _stems(text))


def asks_about(text: str, asked: set[str]) -> bool:
    """Whether a question sentence of ``text`` holds one of the ``asked`` stems: a turn that matched on other
    words and only ends with "How about you?" lends its reply nothing."""
    return any(_shares(q, asked) for q in _QUESTION.findall(text))


def reports_a_problem(text: str, asked: set[str]) -> bool:
    """Whether a user's turn reports a problem (an error, a failure) in words of the question: its reply answers it as
    it would a question ("something wrong: `failed to verify jws signature`" → "the API restarted, so …")."""
    return asks_about_a_problem(text) and _shares(text, asked)


def _lend_to_replies(conn, query: Query, scope: dict, bm25: dict[int, float], cosines: dict[int, float]) -> None:
    """Give the replies to the best question turns (in scope) the question's bm25 and cosine where better."""
    asked = {c[:5] for c in query.concepts}  # the question's concept words, mined once with the query
    seeds = _seeds(bm25, cosines, REPLY_SEEDS)
    problem = asks_about_a_problem(query.text)
    asking = [
        row[0]
        for row in transcript_chunks.rows_by_id(conn, seeds)
        if asks_about(row[-1], asked) or (problem and row[3] == "user" and reports_a_problem(row[-1], asked))
    ]
    replies = transcript_chunks.replies(conn, asking)
    allowed = transcript_chunks.in_scope(conn, list(set(replies.values())), **scope)
    for question, reply in replies.items():
        if reply not in allowed:
            continue
        if question in bm25:
            bm25[reply] = min(bm25.get(reply, 0.0), bm25[question] * REPLY_WEIGHT)
        if question in cosines:
            cosines[reply] = max(cosines.get(reply, 0.0), cosines[question] * REPLY_WEIGHT)


def _entity_hop(conn, query, bm25, cosines, scope, limit, weights) -> dict[int, float]:
    """Second round: bm25 of chunks matching the entities of the first round's best chunks (by rank sum)."""
    seeds = _seeds(bm25, cosines, HOP_SEEDS)
    texts = [row[-1] for row in transcript_chunks.rows_by_id(conn, seeds)]
    terms = hop_terms(texts, query.text)
    match = " OR ".join(f'"{t}"' for t in terms) if terms else None
    limit = min(limit, HOP_LIMIT)
    return transcript_chunks.text_matches(conn, match, **scope, limit=limit, weights=weights) if match else {}


def chunk_candidates(
    conn: Connection, query: Query, settings: Settings, *, query_vector: Any = None, limit: int | None = None
) -> list[Candidate]:
    """FTS and vector hits among the project's chunks (valid at ``query.as_at`` when given)."""
    limit = limit or settings.retrieve.candidates
    scope = {"project_id": query.project_id, "as_at": query.as_at}
    match = fts_match_expression(query.text)
    weights = (1.0, settings.retrieve.chunk_context_weight, settings.retrieve.chunk_date_weight)
    bm25 = transcript_chunks.text_matches(conn, match, **scope, limit=limit, weights=weights) if match else {}
    cosines: dict[int, float] = {}
    if query_vector is not None:
        from nous_assets.embed.chunk_embedding import search_chunks

        vector = np.asarray(query_vector, dtype=np.float32)
        hits = search_chunks(conn, vector, min(4096, limit * 4), project_id=query.project_id)
        if hits:
            allowed = transcript_chunks.in_scope(conn, [h[0] for h in hits], **scope)
            cosines = {cid: cos for cid, cos in hits if cid in allowed}
            cosines = dict(sorted(cosines.items(), key=lambda kv: -kv[1])[:limit])
    hop: dict[int, float] = {}
    if HOP_WEIGHT > 0 and (bm25 or cosines):
        hop = _entity_hop(conn, query, bm25, cosines, scope, limit, weights)
        bm25 = {**{cid: b * HOP_WEIGHT for cid, b in hop.items()}, **bm25}
    if REPLY_WEIGHT > 0 and (bm25 or cosines):
        _lend_to_replies(conn, query, scope, bm25, cosines)
    ids = sorted(set(bm25) | set(cosines))
    rows = list(transcript_chunks.rows_by_id(conn, ids))
    concepts = _concepts(conn, rows)
    return [
        Candidate(
            id=int(cid),
            row_kind=EPISODE,
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
            concepts=concepts[int(cid)],
            bm25=bm25.get(cid),
            vector_cosine=cosines.get(cid),
            sources=frozenset({"episodic"}),
        )
        for cid, project, session, role, ts, text in rows
    ]

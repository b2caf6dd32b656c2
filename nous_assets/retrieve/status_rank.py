"""Status-aware ranking: what the transcripts disproved never outranks what they still back.

A memory is a claim with a status (:mod:`nous_assets.status`). Search keeps refuted and superseded claims
findable ("what did we believe before?" is a fair question, and the status says what became of it), but a closed
claim is never listed above one that still holds: results rank by score within two tiers, holding claims first.
Within the first tier a claim the evidence backs (verified, or stated by the user) gets a modest lift over an
excerpt or a guess of the same relevance: the transcripts say most things many times, the memory says what held.
A ``superseded_by`` link is often missing (a deleted file, a reversed plan name no successor), so the tier is
the guarantee that the replacement, whatever it is, comes first.

A transcript chunk is no claim, but it can hold the turn where one was made: when that claim was later refuted
or superseded (:func:`nous_assets.store.ingest.transcript_chunks.rejected_claims`), the chunk takes that status, is
shown as such, and falls into the second tier, so an excerpt of a rejected explanation cannot answer first.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nous_assets.retrieve.scoring import MEMORY, Candidate, CandidateKey, ScoredMemory
from nous_assets.status import CLOSED, STATED, VERIFIED
from nous_assets.store.db import Connection
from nous_assets.store.ingest import transcript_chunks

BACKED = frozenset({VERIFIED, STATED})
BACKED_FACTOR = 1.1
"""Coding questions dev/dev2/dev3, hit@1: 0.25/0.35/0.35 at 1.0, 0.35/0.40/0.35 at 1.1; at 1.2 dev's hit@3 drops
(0.55 -> 0.50): more would let status overtake relevance."""


def mark_rejected_chunks(conn: Connection, candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` with each chunk that holds a later-rejected claim carrying that claim's status."""
    chunk_ids = [c.id for c in candidates if c.is_episode]
    rejected = transcript_chunks.rejected_claims(conn, chunk_ids) if chunk_ids else {}
    if not rejected:
        return candidates
    return [replace(c, status=rejected[c.id]) if c.is_episode and c.id in rejected else c for c in candidates]


def by_status(scored: Sequence[ScoredMemory], status: dict[CandidateKey, str]) -> list[ScoredMemory]:
    """``scored`` reordered by what the lifecycle knows: a memory the evidence backs (verified, or stated by the
    user) scores :data:`BACKED_FACTOR` times its relevance, so it outranks an excerpt or a guess that matches as
    well; then every refuted or superseded claim comes after every claim that still holds, each tier in score
    order."""
    lifted = sorted(
        (replace(s, score=s.score * BACKED_FACTOR) if s.key.row_kind == MEMORY and status.get(s.key) in BACKED
         else s for s in scored),
        key=lambda s: (-s.score, s.key.tie_order),
    )  # fmt: skip
    return [s for s in lifted if status.get(s.key) not in CLOSED] + [s for s in lifted if status.get(s.key) in CLOSED]


def shown_status(result: Candidate) -> str | None:
    """The status a reader sees: a memory's own; a chunk's only when a claim in it was later refuted or superseded
    (an excerpt is what was said, not a claim: it has no status of its own)."""
    if result.is_episode:
        return result.status if result.status in CLOSED else None
    return result.status

"""Status-aware ranking: what the transcripts disproved never outranks what they still back.

A memory is a claim with a status (:mod:`nous_assets.status`). Search keeps refuted and superseded claims
findable ("what did we believe before?" is a fair question, and the status says what became of it), but a closed
claim is never listed above one that still holds: results rank by score within two tiers, holding claims first.
Ranking within a tier is left to relevance: a lift for verified and stated memories (1.1x, 1.2x) moved the right
answer of coding questions to rank 1 more often but lost LoCoMo open-domain evidence (category 3: 0.455 -> 0.409).
A ``superseded_by`` link is often missing (a deleted file, a reversed plan name no successor), so the tier is
the guarantee that the replacement, whatever it is, comes first.

A transcript chunk is no claim, but it can hold the turn where one was made: when that claim was later refuted
or superseded (:func:`nous_assets.store.ingest.transcript_chunks.rejected_claims`), the chunk takes that status, is
shown as such, and falls into the second tier, so an excerpt of a rejected explanation cannot answer first. So
does an assistant turn the assistant itself takes back in its next turn ("Wait, that's wrong — …", "Wait, I already
tried this approach and it broke npm ci. Let me revert that"): the plan or claim just before it is refuted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from nous_assets.extract.rules.retraction import retracts
from nous_assets.retrieve.scoring import Candidate, CandidateKey, ScoredMemory
from nous_assets.status import CLOSED, REFUTED
from nous_assets.store.db import Connection
from nous_assets.store.ingest import transcript_chunks


def mark_rejected_chunks(conn: Connection, candidates: list[Candidate]) -> list[Candidate]:
    """``candidates`` with each chunk that holds a later-rejected claim carrying that claim's status, and each
    assistant chunk its next turn takes back refuted."""
    chunk_ids = [c.id for c in candidates if c.is_episode]
    rejected = transcript_chunks.rejected_claims(conn, chunk_ids) if chunk_ids else {}
    said = [c.id for c in candidates if c.is_episode and c.kind == "assistant" and c.id not in rejected]
    for chunk_id, (role, text) in transcript_chunks.next_in_session(conn, said).items():
        if role == "assistant" and retracts(text):
            rejected[chunk_id] = REFUTED
    if not rejected:
        return candidates
    return [replace(c, status=rejected[c.id]) if c.is_episode and c.id in rejected else c for c in candidates]


def closed_at(candidate: Candidate, as_at: str | None) -> bool:
    """Whether ``candidate`` is a refuted or superseded claim for a question asked ``as_at`` (None: now). Asked
    about a past moment, a claim closed later still held then: only one whose validity ended by ``as_at`` is
    closed (a status carries no date, so a chunk or a claim closed without an end of validity holds then)."""
    if candidate.status not in CLOSED:
        return False
    return as_at is None or bool(candidate.valid_until and candidate.valid_until <= as_at)


def by_status(scored: Sequence[ScoredMemory], closed: set[CandidateKey]) -> list[ScoredMemory]:
    """``scored`` (best first) with every ``closed`` claim after every claim that still holds; each tier keeps its
    score order."""
    return [s for s in scored if s.key not in closed] + [s for s in scored if s.key in closed]


def shown_status(result: Candidate) -> str | None:
    """The status a reader sees: a memory's own; a chunk's only when a claim in it was later refuted or superseded
    (an excerpt is what was said, not a claim: it has no status of its own)."""
    if result.is_episode:
        return result.status if result.status in CLOSED else None
    return result.status

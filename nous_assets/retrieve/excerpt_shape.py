"""An excerpt that only announces is no answer: it ranks below excerpts that say something.

Coding transcripts repeat a question's words most often where the assistant announces what it is about to do
("I'll fix the failing coverage ratchet. Let me first look at …"): such a chunk shares every keyword of the
question and none of the answer, so by relevance alone it comes first. A short chunk that opens with an
announcement keeps :data:`DISCOUNT` of its score; a longer one is left alone (it may hold the finding after the
preamble).

Questions are not discounted, though a chunk asking the question back is no answer either: in conversations
(LoCoMo) a question turn is often the evidence itself ("did you finally go to the concert on Saturday?"), and
discounting them cost temporal and open-domain recall (category 2 0.984 -> 0.952, category 3 0.455 -> 0.364).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace

from nous_assets.retrieve.scoring import Candidate, CandidateKey, ScoredMemory

DISCOUNT = 0.85
"""Coding questions dev3 hit@3 0.45 -> 0.50 at 0.85, 0.7 or 0.5 alike (dev, dev2 unchanged; LoCoMo dev unchanged)."""
FACTOR = "announces"  # the breakdown's key for the discount, beside "contradiction": score = dimensions x factors
SHORT = 240  # characters: an announcement with room for little else
_ANNOUNCES = re.compile(r"^\W*(?:now,? )?(?:i'll|i will|i'm going to|let me|let's|i need to|next,? i'll)\b", re.I)


def announces(text: str) -> bool:
    """A short chunk that opens with what its speaker is about to do."""
    body = " ".join(text.split())
    return len(body) <= SHORT and bool(_ANNOUNCES.match(body))


def discounted(scored: Sequence[ScoredMemory], candidates: dict[CandidateKey, Candidate]) -> list[ScoredMemory]:
    """``scored`` with every announcing chunk at :data:`DISCOUNT` of its score (its breakdown says so), best first
    again."""
    out = [replace(s, score=s.score * DISCOUNT, breakdown={**s.breakdown, FACTOR: DISCOUNT})
           if candidates[s.key].is_episode and announces(candidates[s.key].content) else s
           for s in scored]  # fmt: skip
    return sorted(out, key=lambda s: (-s.score, s.key.tie_order))

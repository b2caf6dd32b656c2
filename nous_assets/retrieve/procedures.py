"""How-to questions are answered by the project's procedures and canonical commands, not by status chatter.

"How do we release?", "how do I run the tests?", "what's the command to lint?" ask for what the project brief
holds: the release procedure, the quality gate, the canonical runner, mined from commands that ran and passed
across sessions (:mod:`nous_assets.brief`). The transcripts say the same words far more often ("the release
workflow is queued", "let me run the tests"), so by score alone chatter outranks the procedure. For a how-to
question the brief's items that match it in words nearly as well as the best match (or closely in meaning) come
first, in score order; a question of another shape ranks as before. "Nearly as well": any shared word was enough
once, and "how do I run the JS tests?" got the generic quality gate ("before committing: mix test, …") ahead of
the `vitest run` script that answers it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from nous_assets.brief.item import SLOT as BRIEF_SLOT
from nous_assets.retrieve.scoring import Candidate, CandidateKey, ScoredMemory
from nous_assets.status import CLOSED

HOW_TO_RE = re.compile(
    r"^\W*(?:how (?:do|can|should|would|did|does|to)\b|how's\b|what(?:'s| is| are)? the (?:\w+ )?"
    r"(?:command|commands|way|steps|procedure)\b|which (?:command|script|task|target)\b|what (?:command|script)\b)",
    re.IGNORECASE,
)
NOT_HOW = frozenset({BRIEF_SLOT + "layout"})  # the stack and folders: what the project is, not how to do a thing
MIN_COSINE = 0.45  # a brief item matching in meaning only must be close: a how-to question shares words with most
MIN_TEXT_SHARE = 0.75  # of the best text relevance among the candidates: a match in words must be a strong one


def is_how_to(text: str) -> bool:
    """Whether ``text`` asks how something is done (a procedure or a command), by its opening words."""
    return bool(HOW_TO_RE.search(text or ""))


def _answers(candidate: Candidate, scored: ScoredMemory, best_text: float) -> bool:
    """A brief item that matches the question in words nearly as well as the best candidate does, or in meaning
    closely enough."""
    slot = str(candidate.slot or "")
    if candidate.is_episode or candidate.status in CLOSED or not slot.startswith(BRIEF_SLOT) or slot in NOT_HOW:
        return False
    text = scored.breakdown.get("s_text", 0.0)
    return (text > 0.0 and text >= MIN_TEXT_SHARE * best_text) or scored.breakdown.get("s_vector", 0.0) >= MIN_COSINE


def procedures_first(
    scored: Sequence[ScoredMemory], candidates: dict[CandidateKey, Candidate], question: str
) -> list[ScoredMemory]:
    """``scored`` with, for a how-to question, the brief items that answer it first (each group in its order)."""
    if not is_how_to(question):
        return list(scored)
    best_text = max((s.breakdown.get("s_text", 0.0) for s in scored), default=0.0)
    first = [s for s in scored if _answers(candidates[s.key], s, best_text)]
    chosen = {s.key for s in first}
    return first + [s for s in scored if s.key not in chosen]

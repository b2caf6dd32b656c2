"""The assistant taking back its own last step, at the start of its next turn.

"Wait, that's wrong — I want to exclude them, not include them", "Wait, I already tried this approach and it broke
npm ci. Let me revert that": the turn before it holds a plan or claim the assistant itself refuted, and the sentence
narrates the work rather than finding anything. The heuristic extractor keeps no diagnosis from such a sentence;
search marks the turn before it refuted (:mod:`nous_assets.retrieve.status_rank`). Only ``re`` is imported: search
and the MCP server read it on every query.
"""

from __future__ import annotations

import re

_RETRACT_RE = re.compile(
    r"^\W*(?:wait|actually|hmm|oops|hold on|on second thought|scratch that)\b[^\n]{0,160}?"
    r"\b(?:revert|undo|roll(?:ing)? back|back out|(?:that'?s|that is|this is|i was) (?:wrong|not right|incorrect)"
    r"|(?:won'?t|doesn'?t|didn'?t) work|my mistake|already tried)",
    re.I,
)


def retracts(text: str) -> bool:
    """Whether ``text`` opens by taking back what the assistant just said or did."""
    return bool(_RETRACT_RE.search(text))

"""How a problem ended: the sentence a debugging session closes with ("the fix was …", "fixed by …", "the root
cause: …", "works now"), or the turn that opens with "Found it" (the idiom with which the cause is announced).

The turns before it hold the guesses the session went through, and they repeat the problem's words more often
than the answer does; the report of the ending is what the session established. Search lifts such a transcript
turn for a question about a problem (:data:`~nous_assets.retrieve.scoring.RESOLUTION_BOOST`). A packet does not
admit a memory for it alone (:mod:`~nous_assets.retrieve.confidence` says why). "The fix is complete" reports that
work ended, not what fixed it, and is not one.
"""

from __future__ import annotations

import re

_RESOLUTION_RE = re.compile(
    r"\b(?:the (?:fix|solution|workaround) (?:was|is to)|fixed (?:it )?by|(?:the )?root cause(?: was| is|:)"
    r"|the (?:issue|problem|bug|culprit) was|(?:is|are) (?:now )?working now|works now|now works)(?!\w)"
    r"|^\W*found (?:it|the (?:cause|problem|issue|bug|culprit))\b",
    re.I,
)
_PROBLEM_RE = re.compile(
    r"\b(?:why|fail\w*|errors?|broke\w*|crash\w*|fix\w*|(?:does|did|do)n'?t work|not working|wrong)\b", re.I
)


_CUES = ("fix", "cause", "work", "issue", "problem", "bug", "culprit", "solution", "found")
"""Words every resolution holds: a substring test on them skips the regex for most turns (3x faster on chunks)."""


def reports_resolution(text: str) -> bool:
    """Whether ``text`` says how a problem ended: its fix, its root cause, or that it works now."""
    low = text.lower()
    return any(cue in low for cue in _CUES) and bool(_RESOLUTION_RE.search(text))


def asks_about_a_problem(question: str) -> bool:
    """Whether ``question`` asks why something fails, errs, breaks or does not work, or how to fix it."""
    return bool(_PROBLEM_RE.search(question))

"""What a re-learning does to the memory it repeats: the spec's decision matrix, as one pure function.

A learning extracted again says either that it matters (reinforce it) or that it was never surfaced when it
was needed (an injection failure). The spec's table, made total (every case gets one answer):

* **low recurrence** (this is the 2nd session or fewer) — ``merge_silent``: +``reinforce_delta`` (0.1);
* **high recurrence** (3+ sessions) and injections that helped (at least half of the rated ones):
  ``merge_boost`` (+``relearn_boost_delta``, 0.3) when the score is high (> 0.7), else ``merge_silent``;
* **high recurrence, never injected** — ``injection_failure``: flagged for ``nous review``;
* **high recurrence, injected but it did not help** — ``injection_failure`` when the score is low (< 0.3),
  else ``rewrite`` (the text needs clearer phrasing; queued for refinement through review).

Every decision is a ``LearningReinforced`` (the learning was learned again); the flagged ones carry the
plain re-learning increment, the flag being the payload's ``relearn.decision``.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.settings import Thresholds

HIGH_RECURRENCE_SESSIONS = 3
HIGH_SCORE = 0.7
LOW_SCORE = 0.3
EFFECTIVE_SHARE = 0.5
DECISIONS = ("merge_boost", "injection_failure", "rewrite", "merge_silent", "near_miss")


@dataclass(frozen=True)
class History:
    """What is known of the memory a learning repeats, this session included in ``sessions``."""

    sessions: int
    score: float
    injections: int = 0
    helpful: int = 0
    unhelpful: int = 0

    @property
    def helped(self) -> bool:
        """At least half of the rated injections helped (and at least one was rated)."""
        rated = self.helpful + self.unhelpful
        return rated > 0 and self.helpful / rated >= EFFECTIVE_SHARE


def decide_relearning(history: History, thresholds: Thresholds) -> tuple[str, float]:
    """(decision, reinforcement delta) for a re-learning of a memory with ``history`` (see the module doc)."""
    t = thresholds
    if history.sessions < HIGH_RECURRENCE_SESSIONS:
        return "merge_silent", t.reinforce_delta
    if history.helped and history.score > HIGH_SCORE:
        return "merge_boost", t.relearn_boost_delta
    if history.helped:
        return "merge_silent", t.reinforce_delta
    if history.injections == 0 or history.score < LOW_SCORE:
        return "injection_failure", t.reinforce_delta
    return "rewrite", t.reinforce_delta

"""Whether a memory earns a line in a packet: a confidence from its status and evidence, against a bar.

A packet selects; it does not fill. Its budget is a ceiling, and a line enters only when the memory's
evidence is strong enough (:func:`confidence` ≥ ``thresholds.packet_min_confidence``):

* only ``verified``, ``stated`` and ``observed`` memories can enter (:data:`nous_assets.status.INJECTABLE`);
  a hypothesis, a refuted or a superseded claim never does, whatever its score;
* a rule or preference the user stated clears the bar on one session's evidence; anything else needs a second
  session that learned it again: what was only read from a file, anyone can read in the file, and one verified
  fix is one incident (a fresh reader judged one-session restatements and error→fix lines mostly trivial or
  noise), while what recurs is what the next session needs;
* every further session that learned it again adds (up to three), a contradiction takes away, and the
  reinforcement the feedback loop gave or took moves it a little;
* the project brief's items (slot ``brief:``) are mined from the whole history with their own evidence rules
  (uses counted across sessions, manifests read): they always clear the bar while their status allows it.

The numbers are few and coarse on purpose: they rank evidence, they are not probabilities.
"""

from __future__ import annotations

from typing import Any

from nous_assets.brief.item import SLOT as BRIEF_SLOT
from nous_assets.status import INJECTABLE, OBSERVED, STATED, VERIFIED

BASE = {VERIFIED: 0.6, STATED: 0.7, OBSERVED: 0.55}
BRIEF = 1.0
PER_SESSION = 0.1  # each further session that learned it
MAX_SESSIONS_COUNTED = 3
PER_CONTRADICTION = 0.15
REINFORCEMENT_WEIGHT = 0.5  # of the score's distance from its initial 0.5, capped at ±0.1


def _get(memory: Any, name: str, default: Any = None) -> Any:
    return memory.get(name, default) if isinstance(memory, dict) else getattr(memory, name, default)


def sessions_of(memory: Any) -> int:
    """Sessions that learned the memory (its recurrence, when retrieval gathered it), at least 1."""
    recurrence = _get(memory, "recurrence")
    return max(1, int(getattr(recurrence, "sessions", 1) if recurrence is not None else _get(memory, "sessions", 1)))


def confidence(memory: Any) -> float:
    """0 for what may never be injected; else the status's base moved by sessions, contradictions and feedback."""
    status = _get(memory, "status") or OBSERVED
    if status not in INJECTABLE:
        return 0.0
    if str(_get(memory, "slot") or "").startswith(BRIEF_SLOT):  # the brief's items
        return BRIEF
    value = BASE[status] + PER_SESSION * min(MAX_SESSIONS_COUNTED, sessions_of(memory) - 1)
    value -= PER_CONTRADICTION * int(_get(memory, "contradiction_count") or 0)
    drift = (float(_get(memory, "reinforcement_score") or 0.5) - 0.5) * REINFORCEMENT_WEIGHT
    return round(value + max(-0.1, min(0.1, drift)), 4)


def earns_line(memory: Any, bar: float) -> bool:
    return confidence(memory) >= bar

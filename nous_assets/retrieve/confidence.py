"""Whether a memory earns a line in a packet: a confidence from its status and evidence, against a bar.

A packet selects; it does not fill. Its budget is a ceiling, and a line enters only when the memory's
evidence is strong enough (:func:`confidence` ≥ ``thresholds.packet_min_confidence``):

* only ``verified``, ``stated`` and ``observed`` memories can enter (:data:`nous_assets.status.INJECTABLE`);
  a hypothesis, a refuted or a superseded claim never does, whatever its score;
* a rule or preference the user stated clears the bar on one session's evidence; anything else needs a second
  session that learned it again: what was only read from a file, anyone can read in the file, and one verified
  fix is one incident (a fresh reader judged one-session restatements and error→fix lines mostly trivial or
  noise), while what recurs is what the next session needs;
* so does a session's own account of a failure it fixed ("BadMapError in the OTEL config: … Fixed by using …",
  "The root cause: …", :func:`~nous_assets.retrieve.resolution.reports_resolution`): admitted on one session, 12
  of 14 such lines stated a gold learning, but fresh readers judged 9 of 33 useful (dev, dev2) and 2 harmful — a
  fix the session later replaced, a cause it doubted; mostly bugs of the code at hand, already fixed;
* but a verified fix that was only a command run instead (a *workaround*, :func:`~nous_assets.retrieve.lessons.
  is_workaround`: no file edited, no loop typed for the moment) clears the bar on one session: it is a lesson the
  next session can apply as it stands, rendered as one (if X fails with E: run Y), and it is the one-session
  shape that matched what a reader of the transcripts would keep most often (63 %, against 30-57 % for what was
  read from files or lifted from prose);
* and so does an observed rule the project wrote down for its agents (:func:`written_down`): a convention read
  from or added to its instruction and memory files (``AGENTS.md``, ``CONTRIBUTING.md``, ``.learnings/``), which
  holds in every session until the file changes (and the code check, :mod:`~nous_assets.retrieve.stale_check`,
  takes it out when the file is gone), unlike a sentence lifted from one session's prose. Not a rule quoted from a
  dated note (the write-up of one day's incident), not a sentence that points back at the one before it ("Renovate
  validates *that branch* …": :data:`POINTS_BACK_RE`; fresh readers judged it noise, the branch it means is named
  elsewhere), and not the facts tools print (a hook's checks, the default
  branch, a worktree): ``nous bench replay`` found later sessions using none of those lines, so they lowered uptake
  (dev 0.500 -> 0.467, dev2 0.245 -> 0.158 with them);
* every further session that learned it again adds (up to three), a contradiction takes away, and the
  reinforcement the feedback loop gave or took moves it a little;
* the project brief's items (slot ``brief:``) are mined from the whole history with their own evidence rules
  (uses counted across sessions, manifests read): they always clear the bar while their status allows it.

The numbers are few and coarse on purpose: they rank evidence, they are not probabilities.
"""

from __future__ import annotations

import re
from typing import Any

from nous_assets.brief.item import SLOT as BRIEF_SLOT
from nous_assets.retrieve.lessons import is_workaround
from nous_assets.status import INJECTABLE, OBSERVED, STATED, VERIFIED

BASE = {VERIFIED: 0.6, STATED: 0.7, OBSERVED: 0.55}
BRIEF = 1.0
PER_SESSION = 0.1  # each further session that learned it
WORKAROUND = 0.05  # a verified fix by a command alone: one session's evidence reaches the default bar (0.65)
WRITTEN_DOWN = 0.1  # an observed rule the project wrote down for its agents: as good as two sessions
STANDING_KINDS = frozenset({"convention"})
"""Kinds whose observed memories are written-down rules: conventions (the rules extractor reads them only from the
project's instruction and memory files, or takes Claude's quote of one)."""
DATED_NOTE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}[\w.-]*\.\w+(?: rule)?: ")
"""A rule quoted from a dated note (``.learnings/2026-02-13-….md``): the write-up of one day's incident, not a standing
instruction (replay, dev2: later sessions used 2 of its 36 lines)."""
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
    if status == VERIFIED and is_workaround(str(_get(memory, "content") or "")):
        value += WORKAROUND
    if status == OBSERVED and written_down(memory):
        value += WRITTEN_DOWN
    value -= PER_CONTRADICTION * int(_get(memory, "contradiction_count") or 0)
    drift = (float(_get(memory, "reinforcement_score") or 0.5) - 0.5) * REINFORCEMENT_WEIGHT
    return round(value + max(-0.1, min(0.1, drift)), 4)


POINTS_BACK_RE = re.compile(
    r"\b(?:that|those|these) (?:branch|file|folder|directory|step|job|workflow|value|setting|section|script|rule|"
    r"command|key|flag|option|change|one|ones)\b",
    re.IGNORECASE,
)
"""A determiner pointing back at what the sentence before named ("that branch"): a sentence quoted alone from a file
with one does not say what it is about. ("This repository" points at the project itself, and stands.)"""


def written_down(memory: Any) -> bool:
    """Whether an observed memory is a rule the project wrote down for its agents (not in a dated note, and a
    sentence that stands on its own)."""
    content = str(_get(memory, "content") or "")
    return (_get(memory, "kind") in STANDING_KINDS and not DATED_NOTE_RE.match(content)
            and not POINTS_BACK_RE.search(content))  # fmt: skip


def earns_line(memory: Any, bar: float) -> bool:
    return confidence(memory) >= bar

"""What a memory's evidence says about it: its status, the one word every reader of a memory needs.

A memory is a claim. Its status says how far the transcripts back it, and decides whether it may be injected:

* ``verified`` — a fix followed by the same check passing, a command that ran and succeeded, a fact a tool
  result or the user confirmed;
* ``stated`` — a rule or preference the user stated for the future (not a request for the task at hand);
* ``observed`` — read from a tool result or a file (configuration, layout);
* ``hypothesis`` — the assistant's reasoning that nothing confirmed later;
* ``refuted`` — rejected by the user or contradicted by a later result;
* ``superseded`` — replaced: a plan reversed, an edit undone, a file deleted or renamed, a newer value.

Only the first three are injected (:data:`INJECTABLE`); hypotheses stay searchable, marked as such. Statuses
travel in event payloads (``status`` on ``LearningExtracted``, ``LearningReinforced``, ``LearningValidated`` and
``LearningWeakened``), so a replay of the log gives the same statuses.
"""

from __future__ import annotations

VERIFIED = "verified"
STATED = "stated"
OBSERVED = "observed"
HYPOTHESIS = "hypothesis"
REFUTED = "refuted"
SUPERSEDED = "superseded"

STATUSES = (VERIFIED, STATED, OBSERVED, HYPOTHESIS, REFUTED, SUPERSEDED)
INJECTABLE = frozenset({VERIFIED, STATED, OBSERVED})
CLOSED = frozenset({REFUTED, SUPERSEDED})
"""Statuses that end a memory's validity: what the transcripts disproved or replaced."""

_STRENGTH = {HYPOTHESIS: 0, OBSERVED: 1, STATED: 2, VERIFIED: 2}
USER_KINDS = frozenset({"preference", "correction"})


def default_status(kind: str | None, superseded: bool = False) -> str:
    """The status of a memory whose events carry none (written before statuses existed, or by a provider that
    gives none): what the user said is ``stated``, a replaced one ``superseded``, anything else ``observed``.

    Migration 018 fills the column of existing rows with the same rule, so a replay agrees with it.
    """
    if superseded:
        return SUPERSEDED
    return STATED if kind in USER_KINDS else OBSERVED


def strengthened(current: str, incoming: str) -> str:
    """The status after the same learning is seen again with ``incoming``: the stronger of the two, but never a
    revival: once refuted or superseded, only an explicit event (a later confirmation) changes it."""
    if current in CLOSED or incoming not in _STRENGTH:
        return current
    return incoming if _STRENGTH[incoming] > _STRENGTH.get(current, 0) else current

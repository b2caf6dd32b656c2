"""Consolidation tunes its cohesion gate from its own quality (seed 003, CX15's feedback loop), within bounds.

Each run reads the CX15 figures (:func:`nous_assets.store.reads.consolidation.quality`) and moves the cohesion a
cluster needs (:mod:`~nous_assets.consolidate.clusters`) by :data:`STEP`:

* **tighter** when observations are not used (precision under :data:`MIN_PRECISION`: the clusters may be
  too loose, grouping what does not belong together) or are contradicted (a rate over
  :data:`MAX_CONTRADICTION`: the merge may join conflicting memories);
* **looser again**, back towards the configured value, when both are well within target
  (precision at least :data:`RELAX_PRECISION`);
* never outside ``[thresholds.consolidation_cohesion, thresholds.consolidation_cohesion_max]``, and only on
  enough evidence (:data:`MIN_EVIDENCE` observations judged or formed): a young store keeps the configured value.

Every move is recorded with its reason and figures (:mod:`nous_assets.store.tuning`); the next runs cluster with
the new value. Without access history (a new store, a benchmark) nothing moves.
"""

from __future__ import annotations

from dataclasses import dataclass

from nous_assets.store.reads.consolidation import Quality

PARAMETER = "cohesion"
STEP = 0.05
MIN_PRECISION = 0.7
RELAX_PRECISION = 0.85
MAX_CONTRADICTION = 0.05
MIN_EVIDENCE = 10


@dataclass(frozen=True)
class Move:
    old: float
    new: float
    reason: str


def next_cohesion(current: float, quality: Quality, low: float, high: float) -> Move | None:
    """The move the figures call for from ``current``, or None when it stays."""
    precision, contradiction = quality.precision, quality.contradiction_rate
    judged = quality.judged >= MIN_EVIDENCE and precision is not None
    contradicted = quality.formed >= MIN_EVIDENCE and contradiction is not None and contradiction > MAX_CONTRADICTION
    if judged and precision < MIN_PRECISION or contradicted:
        why = (f"precision {precision:.2f} < {MIN_PRECISION}" if judged and precision < MIN_PRECISION
               else f"contradiction rate {contradiction:.2f} > {MAX_CONTRADICTION}")  # fmt: skip
        target, reason = current + STEP, f"tightened: {why}"
    elif judged and precision >= RELAX_PRECISION and not contradicted:
        target, reason = current - STEP, f"relaxed: precision {precision:.2f} >= {RELAX_PRECISION}"
    else:
        return None
    new = round(min(high, max(low, target)), 4)
    return Move(current, new, reason) if new != round(current, 4) else None

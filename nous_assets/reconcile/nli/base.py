"""The classifier protocol every NLI tier implements, and the verdict it returns."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from nous_assets.errors import NousError

LABELS = ("entailment", "neutral", "contradiction")


class ClassifierUnavailable(NousError):
    """A configured classifier cannot run (no endpoint, no model directory, CLI missing): one line saying why."""


@dataclass(frozen=True)
class Verdict:
    """What a classifier says about one ordered pair of learning texts.

    ``single_valued`` is True when the two state different values of one single-valued thing (a port, a
    version, the command or tool for one job): the newer-valid one wins (``LearningSuperseded``) instead of
    both being kept and penalised (``LearningContradicted``). ``reason`` names the rule or model that decided.
    """

    label: str
    confidence: float
    single_valued: bool = False
    reason: str = ""

    def __post_init__(self) -> None:
        if self.label not in LABELS:
            raise ValueError(f"NLI label must be one of {LABELS}, got {self.label!r}")
        if not 0.0 <= self.confidence <= 1.0:
            raise ValueError(f"NLI confidence must be in [0, 1], got {self.confidence!r}")


NEUTRAL = Verdict("neutral", 0.5, reason="no rule applies")


class Classifier(Protocol):
    """Labels pairs of short learning texts. ``model_version`` keys the cached results: a new version
    re-classifies every candidate pair, an unchanged one never classifies a pair twice."""

    name: str
    model_version: str

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        """One verdict per ``(premise, hypothesis)`` pair, in order. Raises :class:`ClassifierUnavailable`."""
        ...

"""One cluster becomes one observation: rank an anchor, merge the others' novel details, cite every member
(seed 003, CX14 steps 2-5).

* **Anchor** — the member the evidence backs most: status first (verified, then stated, then observed), then
  the number of sessions its events came from, then its reinforcement; ties by learning id, so the choice
  never depends on order. Its text is the observation's base: the statement a reader should take away.
* **Novel details** — sentences of the other members that say something the anchor does not (word overlap
  with every anchor sentence and every detail already taken under :data:`NOVEL_OVERLAP`), in member order, without
  the label they share with the anchor (``User preference:`` is said once),
  while the observation stays under :data:`MAX_CHARS`: the details that would be lost if the members were
  dropped for the observation. A member whose every sentence is said is *carried*; only carried members may
  leave a packet for the observation.
* **What it carries** — the members' learning ids (provenance), the union of their concepts, the anchor's
  status, the earliest member's valid-from; its slot names the anchor, so when the cluster changes around the
  same anchor the new observation supersedes the old one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from nous_assets.status import OBSERVED, STATED, VERIFIED

NOVEL_OVERLAP = 0.5
MAX_CHARS = 600
SLOT = "observation:"

_RANK = {VERIFIED: 0, STATED: 1, OBSERVED: 2}
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")
_WORD = re.compile(r"[a-z0-9_./:-]+")
_LABEL = re.compile(r"^[\w][\w .-]{0,38}: ")
"""A memory's label (``User preference: ``, ``AGENTS.md: ``, ``Decision: ``): a detail with the anchor's label
drops it, so the observation names its source once."""


@dataclass(frozen=True)
class Member:
    """A memory of a cluster, as the observation needs it."""

    learning_id: str
    content: str
    status: str
    sessions: int
    reinforcement: float
    valid_from: str | None
    concepts: frozenset[str]
    source_session: str
    folder: str = ""  # the project its extraction event names; the observation's event names the anchor's
    provenance: Mapping[str, Any] = field(default_factory=dict)  # where it was read: source_path, line_offsets, uuids


@dataclass(frozen=True)
class Observation:
    anchor: Member
    members: tuple[Member, ...]
    details: tuple[str, ...]
    content: str
    carried: tuple[str, ...] = ()  # members whose every sentence it says: the ones a packet may drop for it

    @property
    def slot(self) -> str:
        return SLOT + self.anchor.learning_id

    @property
    def member_ids(self) -> tuple[str, ...]:
        return tuple(sorted(m.learning_id for m in self.members))

    @property
    def compression(self) -> float:
        """Characters of the members over characters of the observation (CX15's compression ratio)."""
        return sum(len(m.content) for m in self.members) / max(len(self.content), 1)


def anchor_of(members: list[Member]) -> Member:
    return min(members, key=lambda m: (_RANK.get(m.status, 3), -m.sessions, -m.reinforcement, m.learning_id))


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE.split(text.strip()) if s.strip()]


def _words(text: str) -> frozenset[str]:
    return frozenset(_WORD.findall(text.lower()))


def _overlap(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


def novel_details(anchor: Member, others: list[Member], room: int = MAX_CHARS) -> tuple[list[str], list[str]]:
    """Sentences of ``others`` that neither the anchor nor an earlier detail already says, while they fit in
    ``room`` characters beyond the anchor; and the learning ids of the members whose every sentence the anchor
    and the details now carry (the others lose something if they are dropped for the observation)."""
    seen = [_words(s) for s in sentences(anchor.content)]
    label = _LABEL.match(anchor.content)
    details: list[str] = []
    carried = [anchor.learning_id]
    room -= len(anchor.content)
    for member in others:
        complete = True
        for sentence in sentences(member.content):
            words = _words(sentence)
            if len(words) < 4 or any(_overlap(words, s) >= NOVEL_OVERLAP for s in seen):
                continue
            if label and sentence.startswith(label.group(0)):  # "AGENTS.md: …" after "AGENTS.md: …": said once
                sentence = sentence[label.end() :]
            if len(sentence) + 1 > room:
                complete = False
                continue
            details.append(sentence)
            seen.append(words)
            room -= len(sentence) + 1
        if complete:
            carried.append(member.learning_id)
    return details, carried


def observe(members: list[Member]) -> Observation:
    """The observation of one cluster (two or more members)."""
    ordered = sorted(members, key=lambda m: m.learning_id)
    anchor = anchor_of(ordered)
    others = [m for m in ordered if m is not anchor]
    details, carried = novel_details(anchor, others)
    content = " ".join([anchor.content.strip(), *details])
    return Observation(anchor, tuple(ordered), tuple(details), content, tuple(sorted(carried)))

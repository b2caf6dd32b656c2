"""The extraction contract shared by every provider (heuristic, claude, openai).

A provider turns one session's turns (for one day) into candidate learnings — plain dicts in
the shape documented by :data:`LEARNING_FIELDS`. Providers never write anything: the caller
validates their output with :func:`nous_assets.extract.schema.validate_learnings` and only then
turns it into events, so a provider bug becomes a failed queue item, never a bad event.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from nous_assets.turns import Turn

#: Keys of one extracted learning (dict). Required unless marked optional.
LEARNING_FIELDS: dict[str, str] = {
    "content": "str: the durable learning, self-contained, 10..2000 chars",
    "type": "'learning' (what worked / how to act) or 'knowledge' (a fact)",
    "kind": "preference | correction | workflow | convention | command | gotcha | decision | architecture | "
    "configuration (legacy: error_fix, fact)",
    "domain": "str: short area tag, e.g. 'testing', 'git', 'python'",
    "scope": "'project' or 'global'",
    "concepts": "list[str]: 3..10 normalised lowercase concept phrases",
    "edges": "list[{target_index|target_id, rel_type, weight}] (may be empty)",
    "valid_from": "ISO-8601 or None (unknown)",
    "valid_until": "ISO-8601 or None (current)",
    "temporal_confidence": "low | medium | high",
    "anchor_uuid": "uuid of the transcript record the learning rests on",
    "provenance": "{session_id, source_path, uuids: [...], line_offsets: [...]}",
    "weakens": "optional str: for corrections, what the user corrected (finds the memory to weaken)",
    "applies_when": "optional str: when the memory applies ('before committing', 'in lib/web/'), may be empty",
    "source_ref": "optional str: the file, command or API the memory is about",
    "slot": "optional str: the single-valued thing it sets (config:<file>[#key], gate:<repo>, cmd:…, tool:…)",
    "status": "optional str: verified | stated | observed | hypothesis | refuted | superseded (nous_assets.status); "
    "none: the default of its kind",
    "evidence": "optional list[{status, uuid, what}]: the turns its status rests on (at most 16)",
}

#: Kinds a provider may emit. ``error_fix`` (now ``gotcha``) and ``fact`` (now ``architecture``) are the
#: kinds of earlier versions; stored events still carry them, so they stay valid.
CURRENT_KINDS = (
    "preference", "correction", "workflow", "convention", "command", "gotcha", "decision", "architecture",
    "configuration",
)  # fmt: skip
LEGACY_KINDS = {"error_fix": "gotcha", "fact": "architecture"}

KINDS = CURRENT_KINDS + tuple(LEGACY_KINDS)


@dataclass(frozen=True)
class SessionBatch:
    """The unit of extraction: one session's turns (in file order) for one partition date."""

    project_id: str
    session_id: str
    date: str
    turns: Sequence[Turn]

    @property
    def started_at(self) -> str | None:
        return next((t.timestamp for t in self.turns if t.timestamp), None)


class Extractor(Protocol):
    """A learning extractor. ``version`` goes into every idempotency key it produces."""

    name: str
    version: str

    def extract(self, batch: SessionBatch) -> list[dict[str, Any]]: ...

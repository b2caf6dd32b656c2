"""Pure projection semantics: how each event changes the current memory state.

The same :class:`Projection` serves the incremental database projector (which pre-loads the
slice of state a batch touches) and in-memory replays (as-of queries, verification), so there
is exactly one definition of what an event means.

Semantics (spec "Learning Lifecycle"): Extracted creates (or, for a known learning, refreshes
content and unions concepts; the optional ``slot``, ``applies_when`` and ``source_ref`` payload
fields are copied when present); Validated stamps ``validated_at``; Reinforced/Weakened add their
delta and mark the memory relevant at the event's valid time (a re-learning's session time; the
transaction time for feedback, which has none; not a ``decay`` weakening, which marks disuse), and a
re-learning adds the quotes it was said with that the memory does not hold yet (up to
:data:`MAX_EXTRA_QUOTES`); Contradicted multiplies by its multiplier; Superseded multiplies by 0.5 and
closes the validity window; Archived removes the memory from the active set. Events for an unknown or
archived learning are ignored (counted in ``orphans``).

Status (:mod:`nous_assets.status`): Extracted sets the payload's ``status`` (none: :func:`default_status` of its
kind); a re-learning with a ``status`` strengthens it (never reviving a refuted or superseded one); Validated
sets its payload's status, or ``verified`` when the user confirmed the memory in review; a Weakened with a
``status`` (``refuted``, ``superseded``, or ``hypothesis`` when a later session put a claim back in doubt) sets it
and, for refuted or superseded, closes the validity window at the event's valid time; Superseded makes it
``superseded``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from operator import attrgetter

from nous_assets import clocks
from nous_assets.settings import Thresholds
from nous_assets.status import CLOSED, OBSERVED, STATUSES, SUPERSEDED, VERIFIED, default_status, strengthened
from nous_assets.store.log.events import StoredEvent

MEMORY_COLUMNS = (
    "id",
    "learning_id",
    "content",
    "type",
    "kind",
    "domain",
    "scope",
    "project_id",
    "source_session",
    "reinforcement_score",
    "created_at",
    "accessed_at",
    "valid_from",
    "valid_until",
    "temporal_confidence",
    "validated_at",
    "superseded_by",
    "contradiction_count",
    "vector_clock_json",
    "extractor_version",
    "provenance_json",
    "last_event_id",
    "slot",
    "applies_when",
    "source_ref",
    "status",
)
#: Optional payload fields (extraction schema) copied onto the memory when an event carries them.
DETAIL_FIELDS = ("slot", "applies_when", "source_ref")


def normalize_concept(text: str) -> str:
    """Lowercase, trimmed, single-spaced: the OR-set element form."""
    return " ".join(text.lower().split())


@dataclass(slots=True)
class Memory:
    """One row of ``memories`` (every column in :data:`MEMORY_COLUMNS` order, plus its concepts).

    The one memory row type: projection builds and mutates it, and retrieval extends it
    (:class:`~nous_assets.retrieve.scoring.Candidate` adds the signals gathered for a query,
    :class:`~nous_assets.retrieve.search.Result` its score), so a column is declared once. Every field
    but ``id`` has a default so a row can be built from the columns a caller has.
    """

    id: int
    learning_id: str = ""
    content: str = ""
    type: str = "learning"
    kind: str | None = None
    domain: str | None = None
    scope: str = "project"
    project_id: str = ""
    source_session: str = ""
    reinforcement_score: float = 0.5
    created_at: str = "1970-01-01T00:00:00.000000Z"
    accessed_at: str | None = None
    valid_from: str | None = None
    valid_until: str | None = None
    temporal_confidence: str = "medium"
    validated_at: str | None = None
    superseded_by: str | None = None
    contradiction_count: int = 0
    vector_clock_json: str | None = None
    extractor_version: str = ""
    provenance_json: str | None = None
    last_event_id: int = 0
    slot: str | None = None
    applies_when: str | None = None
    source_ref: str | None = None
    status: str = OBSERVED
    concepts: AbstractSet[str] = field(default_factory=set)

    def row(self) -> tuple:
        return _ROW(self)


_ROW = attrgetter(*MEMORY_COLUMNS)
EdgeKey = tuple[int, int, str]


@dataclass(frozen=True)
class Policy:
    """The numbers projection needs (from settings' thresholds)."""

    initial_reinforcement: float = 0.5
    superseded_multiplier: float = 0.5
    default_contradiction_multiplier: float = 0.7

    @classmethod
    def of(cls, thresholds: Thresholds) -> Policy:
        """The policy with the configured thresholds: every projector call uses this, never the defaults."""
        t = thresholds
        return cls(t.initial_reinforcement, t.superseded_multiplier, t.contradiction_multiplier)


_QUOTE_RE = re.compile(r'"[^"\n]{3,160}"|“[^”\n]{3,160}”')
MAX_EXTRA_QUOTES = 3
MAX_QUOTED_CONTENT = 480


def with_new_quotes(held: str, relearned: str) -> str:
    """``held`` plus the quotes of ``relearned`` it lacks: one memory per learning keeps every way the
    learning was said ("tackle them", "continue until all are done"), which is what a later session and
    a search match on. Bounded: at most three added quotes, and never past 480 characters."""
    added = held.count(" (also ")
    for quote in _QUOTE_RE.findall(relearned):
        if added >= MAX_EXTRA_QUOTES or quote.lower() in held.lower():
            continue
        grown = f"{held} (also {quote})"
        if len(grown) > MAX_QUOTED_CONTENT:
            break
        held, added = grown, added + 1
    return held


def _status(payload: dict) -> str | None:
    """The payload's status when it names a known one (validated on append; older events carry none)."""
    value = payload.get("status")
    return value if value in STATUSES else None


def _provenance(payload: dict) -> str | None:
    prov = payload.get("provenance")
    return json.dumps(prov, sort_keys=True, separators=(",", ":")) if prov is not None else None


class Projection:
    """Mutable projection state for a set of learnings.

    ``memories`` maps learning_id to its Memory, or to None once archived in this state.
    ``known_ids`` maps memory ids that exist outside this state (e.g. in the database) to their
    learning id so edges can be resolved without loading whole rows.
    """

    def __init__(self, policy: Policy | None = None, *, track_changes: bool = True) -> None:
        self.policy = policy or Policy()
        self.track_changes = track_changes  # incremental writes need per-batch deltas; full replays do not
        self.memories: dict[str, Memory | None] = {}
        self.known_lids: dict[str, int] = {}
        self.known_ids: set[int] = set()
        self.by_id: dict[int, str] = {}
        self.edges: dict[EdgeKey, tuple[float, str]] = {}
        self.deleted_ids: set[int] = set()
        self.new_concepts: dict[str, set[str]] = {}
        self.touched: set[str] = set()
        self.orphans = 0

    # -- resolution -------------------------------------------------------------------------
    def _id_for_learning(self, learning_id: str) -> int | None:
        if learning_id in self.memories:
            mem = self.memories[learning_id]
            return mem.id if mem is not None else None
        return self.known_lids.get(learning_id)

    def _resolve_target(self, ref: int | str) -> int | None:
        if isinstance(ref, str):
            return self._id_for_learning(ref)
        if ref in self.deleted_ids:
            return None
        if ref in self.known_ids:
            return ref
        lid = self.by_id.get(ref)
        return ref if lid is not None and self.memories.get(lid) is not None else None

    def _add_edge(self, source: int | None, target: int | None, rel: str, weight: float, at: str) -> None:
        if source is None or target is None or source == target:
            return
        key = (source, target, rel)
        previous = self.edges.get(key)
        self.edges[key] = (float(weight), previous[1] if previous else at)

    # -- events -----------------------------------------------------------------------------
    def apply_all(self, events: Iterable[StoredEvent]) -> None:
        for event in events:
            self.apply(event)

    def apply(self, ev: StoredEvent) -> None:
        lid = ev.learning_id
        payload = ev.payload
        if ev.event_type == "LearningExtracted":
            self._extracted(ev)
            return
        mem = self.memories.get(lid)
        if mem is None:
            self.orphans += 1
            return
        kind = ev.event_type
        if kind == "LearningValidated":
            mem.validated_at = ev.transaction_time
            confirmed = (payload.get("review") or {}).get("decision") == "validated"
            mem.status = _status(payload) or (VERIFIED if confirmed else mem.status)
        elif kind in ("LearningReinforced", "LearningWeakened"):
            mem.reinforcement_score += float(payload["reinforcement_delta"])
            if payload.get("reason") == "relearned" and payload.get("content"):
                mem.content = with_new_quotes(mem.content, payload["content"])
            incoming = _status(payload)
            if incoming and kind == "LearningReinforced":
                mem.status = strengthened(mem.status, incoming)
            elif incoming:
                mem.status = incoming
                if incoming in CLOSED:
                    self._close(mem, ev.valid_from or ev.transaction_time)
            # relevant again when it happened: a re-learning's session time (its valid_from), else now;
            # decay is the absence of use, never a use
            stamp = ev.valid_from or ev.transaction_time
            if payload.get("reason") != "decay" and (mem.accessed_at is None or stamp > mem.accessed_at):
                mem.accessed_at = stamp
        elif kind == "LearningContradicted":
            multiplier = float(payload.get("contradiction_multiplier", self.policy.default_contradiction_multiplier))
            mem.reinforcement_score *= multiplier
            mem.contradiction_count += 1
            other = self._resolve_target(payload["contradicted_with"])
            self._add_edge(mem.id, other, "contradicts", 1.0, ev.transaction_time)
        elif kind == "LearningSuperseded":
            mem.reinforcement_score *= self.policy.superseded_multiplier
            self._close(mem, ev.valid_until or ev.transaction_time)
            mem.superseded_by = payload["superseded_by"]
            mem.status = SUPERSEDED
            newer = self._resolve_target(payload["superseded_by"])
            self._add_edge(newer, mem.id, "supersedes", 1.0, ev.transaction_time)
        elif kind == "LearningArchived":
            self.memories[lid] = None
            self.new_concepts.pop(lid, None)
            self.deleted_ids.add(mem.id)
            self.known_ids.discard(mem.id)
            self.touched.add(lid)
            return
        self._union_concepts(mem, payload.get("concepts", ()))
        mem.last_event_id = ev.event_id
        self.touched.add(lid)

    @staticmethod
    def _close(mem: Memory, at: str) -> None:
        """End the validity window at ``at`` (never before it began, never later than an earlier close)."""
        if mem.valid_from is not None and at < mem.valid_from:
            at = mem.valid_from
        if mem.valid_until is None or at < mem.valid_until:
            mem.valid_until = at

    def _union_concepts(self, mem: Memory, raw: Iterable[str]) -> None:
        if not raw:
            return
        new = {normalize_concept(c) for c in raw} - mem.concepts
        new.discard("")
        if new:
            mem.concepts |= new
            if self.track_changes:
                self.new_concepts.setdefault(mem.learning_id, set()).update(new)

    def _extracted(self, ev: StoredEvent) -> None:
        payload = ev.payload
        lid = ev.learning_id
        mem = self.memories.get(lid)
        if mem is None:
            get = payload.get
            mem = Memory(  # positional, in MEMORY_COLUMNS order (hot path of a full replay)
                ev.event_id,
                lid,
                payload["content"],
                get("type", "learning"),
                get("kind"),
                get("domain"),
                get("scope", "project"),
                ev.project_id,
                ev.session_id,
                self.policy.initial_reinforcement,
                ev.transaction_time,
                None,  # accessed_at
                ev.valid_from,
                ev.valid_until,
                get("temporal_confidence", "medium"),
                None,  # validated_at
                None,  # superseded_by
                0,  # contradiction_count
                ev.vector_clock_json,  # canonical: validated on append
                payload["extractor_version"],
                _provenance(payload),
                ev.event_id,
                get("slot") or None,
                get("applies_when") or None,
                get("source_ref") or None,
                _status(payload) or default_status(get("kind")),
            )
            self.memories[lid] = mem
            self.by_id[mem.id] = lid
        else:  # a refresh of a known learning: new wording, merged clock, concepts unioned
            mem.content = payload["content"]
            mem.type = payload.get("type", mem.type)
            mem.kind = payload.get("kind", mem.kind)
            mem.domain = payload.get("domain", mem.domain)
            mem.scope = payload.get("scope", mem.scope)
            mem.temporal_confidence = payload.get("temporal_confidence", mem.temporal_confidence)
            mem.extractor_version = payload["extractor_version"]
            mem.provenance_json = _provenance(payload) or mem.provenance_json
            for name in DETAIL_FIELDS:
                if payload.get(name):
                    setattr(mem, name, payload[name])
            mem.status = _status(payload) or mem.status
            if ev.valid_from is not None:
                mem.valid_from = ev.valid_from
            if ev.valid_until is not None:
                mem.valid_until = ev.valid_until
            if mem.valid_until is not None and mem.valid_from is not None and mem.valid_until < mem.valid_from:
                mem.valid_until = mem.valid_from
            merged = clocks.merge(json.loads(mem.vector_clock_json or "{}"), ev.vector_clock)
            mem.vector_clock_json = clocks.dumps(merged) if merged else None
            mem.last_event_id = ev.event_id
        self._union_concepts(mem, payload.get("concepts", ()))
        for edge in payload.get("edges", ()):
            target = self._resolve_target(edge.get("target_id", edge.get("target")))
            self._add_edge(mem.id, target, edge["rel_type"], edge.get("weight", 1.0), ev.transaction_time)
        self.touched.add(lid)

    # -- results ----------------------------------------------------------------------------
    def active(self) -> list[Memory]:
        return sorted((m for m in self.memories.values() if m is not None), key=lambda m: m.id)

    def live_edges(self) -> dict[EdgeKey, tuple[float, str]]:
        """Edges whose endpoints both still exist (archived endpoints drop their edges)."""
        return {k: v for k, v in self.edges.items() if k[0] not in self.deleted_ids and k[1] not in self.deleted_ids}


def project_in_memory(events: Iterable[StoredEvent], policy: Policy | None = None) -> Projection:
    """Full replay into memory (as-of queries and verification)."""
    state = Projection(policy)
    state.apply_all(events)
    return state

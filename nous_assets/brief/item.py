"""The brief's unit: one :class:`BriefItem` per thing a senior engineer wants to know before the next session.

Items are built from :class:`Proof` (one tool call or user message that supports them) by :func:`make_item`,
which derives everything that depends on the evidence — sessions, first/last seen, the evidence sample — the
same way for every section, so an item's metadata never disagrees with its proofs.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from nous_assets.extract.rules.text import cap

SLOT = "brief:"
"""The slot prefix of the brief's memories (``brief:cmd:test``, ``brief:layout`` …): how packets, the confidence
bar and the history step know a memory is the brief's."""
RECURRING_KEY = "cmd:more"
"""The key of the commands the sessions ran again and again (:mod:`~nous_assets.brief.recurring`): a list, which
says nothing of what each command is for, unlike the other ``cmd:`` keys."""
DESCRIBING_KEYS = frozenset({"gate:ci", "layout"})
"""Items that name commands or scripts without saying the sessions run them: what CI runs, and the layout (which
names a script by its path). A command they name is still one the recurring-commands line may list."""
SECTIONS = ("commands", "gate", "procedures", "rules", "layout")
STATUSES = ("verified", "observed", "stated")
MAX_EVIDENCE = 6
MAX_CONTENT = 300
MAX_LAYOUT = 500
MAX_WHAT = 160

#: the order key of a proof in the project's timeline: (timestamp, session id, stream index, call index)
Order = tuple[str, str, int, int]
#: where a proof lies in the transcripts: (file, byte offsets of its lines, the uuids of those lines)
Source = tuple[str, tuple[int, ...], tuple[str, ...]]


@dataclass(frozen=True)
class BriefItem:
    """One line of the project brief, with the evidence that supports it (see the package docstring)."""

    section: str
    key: str
    content: str
    status: str
    sessions: tuple[str, ...]
    runs: int
    first_seen: str
    last_seen: str
    last_session: str
    paths: tuple[str, ...]
    evidence: tuple[dict, ...]
    source: Source  # the lines of the evidence in the latest proof's file: the memory's provenance


@dataclass(frozen=True)
class Proof:
    """One record that supports an item: a tool call (its assistant turn) or a user message."""

    session: str
    uuid: str
    order: Order
    what: str
    source: Source = ("", (), ())

    @property
    def ts(self) -> str:
        return self.order[0]


def make_item(
    section: str,
    key: str,
    content: str,
    status: str,
    proofs: Iterable[Proof],
    *,
    runs: int,
    paths: Sequence[str] = (),
) -> BriefItem:
    """An item whose sessions, dates and evidence all come from ``proofs`` (at least one)."""
    if section not in SECTIONS or status not in STATUSES:
        raise ValueError(f"bad section/status: {section}/{status}")
    ordered = sorted(set(proofs), key=lambda p: (p.order, p.uuid, p.what))
    if not ordered:
        raise ValueError(f"{key}: an item needs evidence")
    limit = MAX_LAYOUT if section == "layout" else MAX_CONTENT
    stamps = [p.ts for p in ordered if p.ts]
    shown = sample(ordered)
    return BriefItem(
        section=section,
        key=key,
        content=cap(content, limit),
        status=status,
        sessions=tuple(sorted({p.session for p in ordered})),
        runs=runs,
        first_seen=min(stamps, default=""),
        last_seen=max(stamps, default=""),
        last_session=ordered[-1].session,
        paths=tuple(dict.fromkeys(p for p in paths if p)),
        evidence=tuple({"session": p.session, "uuid": p.uuid, "what": cap(p.what, MAX_WHAT)} for p in shown),
        source=_source(shown),
    )


def _source(proofs: Sequence[Proof]) -> Source:
    """The lines of ``proofs`` that lie in the latest one's transcript file (one file: a provenance names one)."""
    path = proofs[-1].source[0]
    same = [p.source for p in proofs if p.source[0] == path]
    offsets = tuple(dict.fromkeys(o for _, offs, _ in same for o in offs))
    uuids = tuple(dict.fromkeys(u for _, _, us in same for u in us))
    return path, offsets, uuids


def sample(ordered: Sequence[Proof], limit: int = MAX_EVIDENCE) -> list[Proof]:
    """At most ``limit`` proofs: the latest of each session first (most recent sessions first), then the
    latest others — so a reader sees the spread across sessions — returned in time order."""
    picked: list[Proof] = []
    seen: set[str] = set()
    for p in reversed(ordered):
        if p.session not in seen:
            seen.add(p.session)
            picked.append(p)
    for p in reversed(ordered):
        if p not in picked:
            picked.append(p)
    chosen = set(picked[:limit])
    return [p for p in ordered if p in chosen]

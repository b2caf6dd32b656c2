"""A packet shows an observation in place of its members when it says the same in fewer characters (issue 24);
search and MCP ``recall`` show it with the ids of its members (:func:`member_ids`).

An observation (:mod:`nous_assets.consolidate`) is the best-evidenced member's text plus the others' novel
details. It enters a packet only by replacing members that earned their own lines: when two or more of its
members are among the packet's candidates and its text is shorter than theirs together, it takes the place of
the best-ranked one, in that member's section (its kind), and the others leave. Only members it says in full
(every sentence: its provenance's ``carried``) count: a member with something the observation had no room for
keeps its own line. Otherwise it stays out, so a
packet never grows by an observation, and what the guard, the code check and the evidence bar decided about
each member still holds.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from nous_assets.store.db import Connection
from nous_assets.store.reads import consolidation
from nous_assets.store.reads.consolidation import OBSERVATION


def is_observation(result: Any) -> bool:
    return getattr(result, "kind", None) == OBSERVATION


def _provenance(result: Any) -> dict:
    try:
        return json.loads(getattr(result, "provenance_json", None) or "{}") or {}
    except (TypeError, ValueError):
        return {}


def members_of(result: Any) -> frozenset[str]:
    """The learning ids of the members an observation says in full (its provenance's ``carried``): the ones a
    packet may drop for it."""
    return frozenset(_provenance(result).get("carried") or ())


def member_ids(conn: Connection, result: Any) -> list[int]:
    """The ids of the memories an observation result was formed from (still current or not; archived ones are
    gone), for search and MCP ``recall`` to show under it: a reader expands them with ``explain``."""
    if not is_observation(result):
        return []
    return [row[0] for row in consolidation.members_of(conn, _provenance(result).get("members") or [])]


def fold(results: list[Any], observations: list[Any]) -> list[Any]:
    """``results`` (best first) with each of ``observations`` in place of its members where it is shorter."""
    out = [r for r in results if not is_observation(r)]
    for observation in observations:
        members = members_of(observation)
        present = [r for r in out if r.learning_id in members]
        if len(present) < 2 or len(observation.content) >= sum(len(r.content) for r in present):
            continue
        first = present[0]
        placed = replace(observation, kind=first.kind, score=first.score)
        out = [placed if r is first else r for r in out if r is first or r not in present]
    return out

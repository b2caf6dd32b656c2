"""The project map: a project's topics (:mod:`~nous_assets.consolidate.communities`) with their memories and
observations, as ``nous review map``, MCP ``timeline`` and ``explain`` and the consolidation asset show them.

Drawn from the store when asked, never stored: it is a view of the current memories and edges, a few hundred
milliseconds for a project of a thousand memories, and a stored copy would only go stale.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from nous_assets.consolidate.communities import Topic, communities
from nous_assets.consolidate.similarity import Item, item
from nous_assets.status import VERIFIED
from nous_assets.store.db import Connection
from nous_assets.store.reads import consolidation as reads
from nous_assets.store.reads.consolidation import Scoped

MAX_SHOWN = 5  # members quoted per topic; the rest are counted


@dataclass(frozen=True)
class MapTopic:
    """One topic as shown: its name, its memories (ids, best-evidenced first) and its observations (ids)."""

    key: str
    label: str
    memory_ids: tuple[int, ...]
    observation_ids: tuple[int, ...]
    texts: dict[int, str]  # id -> content, for the memories and observations shown

    def as_dict(self, shown: int = MAX_SHOWN) -> dict:
        def quoted(ids: tuple[int, ...]) -> list[dict]:
            return [{"memory": i, "text": self.texts.get(i, "")} for i in ids]

        return {"topic": self.key, "label": self.label, "memories": len(self.memory_ids),
                "observations": quoted(self.observation_ids), "examples": quoted(self.memory_ids[:shown])}


def sessions_of(scoped: list[Scoped]) -> dict[str, str]:
    """Learning id -> the session it was learned in (co-occurrence)."""
    return {s.memory.learning_id: s.memory.source_session or "" for s in scoped}


def scope_items(scoped: list[Scoped]) -> list[Item]:
    return [item(s.memory.learning_id, s.memory.content, s.vector, s.concepts) for s in scoped]


def scope_edges(conn: Connection, scoped: list[Scoped]) -> set[frozenset[str]]:
    """The stored edges among ``scoped``, as pairs of learning ids."""
    id_to_key = {s.memory.id: s.memory.learning_id for s in scoped}
    return {frozenset(id_to_key[i] for i in pair) for pair in reads.edges_among(conn, id_to_key)}


def project_map(conn: Connection, project_id: str) -> list[MapTopic]:
    """The project's topics, largest first (its project-scope memories; global ones belong to no project)."""
    scoped = reads.candidates(conn, project_id).get(("project", project_id), [])
    held = [h for h in reads.held_observations(conn, project_id) if h.scope == "project"]
    topics = communities(scope_items(scoped), scope_edges(conn, scoped), sessions_of(scoped),
                         {h.learning_id: h.members for h in held})  # fmt: skip
    by_lid = {s.memory.learning_id: s for s in scoped}
    observations = {h.learning_id: h for h in held}
    out = []
    for topic in topics:
        members = sorted((by_lid[k] for k in topic.members), key=_evidence)
        texts = {s.memory.id: s.memory.content for s in members[:MAX_SHOWN]}
        texts.update({observations[o].memory_id: observations[o].content for o in topic.observations})
        out.append(MapTopic(topic.key, topic.label, tuple(s.memory.id for s in members),
                            tuple(observations[o].memory_id for o in topic.observations), texts))  # fmt: skip
    return out


def topic_of(conn: Connection, project_id: str, memory_id: int) -> MapTopic | None:
    """The topic ``memory_id`` (a memory or an observation) belongs to in its project's map, if any."""
    for topic in project_map(conn, project_id):
        if memory_id in topic.memory_ids or memory_id in topic.observation_ids:
            return topic
    return None


def _evidence(s: Scoped) -> tuple:
    """Verified first, then the most sessions, then the oldest id."""
    return (s.memory.status != VERIFIED, -s.sessions, s.memory.id)


def map_markdown(by_project: Mapping[str, list[Topic]], limit: int = 8) -> str:
    """Each project's largest topics as a short markdown list (the consolidation asset's metadata)."""
    lines = []
    for project_id, found in sorted(by_project.items(), key=lambda kv: (-len(kv[1]), kv[0])):
        if not found:
            continue
        lines.append(f"**{project_id}** ({len(found)} topics)")
        lines += [f"- {t.label}: {len(t.members)} memories, {len(t.observations)} observations" for t in found[:limit]]
        if len(found) > limit:
            lines.append(f"- … {len(found) - limit} more")
    return "\n".join(lines) or "(no topics yet)"

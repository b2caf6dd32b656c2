"""Communities: the project's topics, found in the graph of its memories (seed 000's roadmap item 43).

An observation holds memories that say one thing; a community is wider: a topic of the project (its test setup,
its release procedure), memories that are about the same things without saying the same thing. The graph has
one node per current memory of a scope (the ones consolidation considers) and three kinds of edge:

* **relates** — the composite similarity of a pair (:func:`~nous_assets.consolidate.similarity.scored_pairs`:
  embedding cosine, cited files and commands, concepts, a stored relates or causal edge) when at least
  :data:`LINK`;
* **co-occurrence** — two memories learned in the same session that cite the same file or command
  (:data:`CO_OCCURRENCE`, added to the pair's weight);
* a stored edge between two memories always joins them (its weight is the pair's similarity, at least ``LINK``).

Louvain (``networkx``'s ``louvain_communities``, modularity resolution 1, seed 0) splits the graph; a community
of at least :data:`MIN_TOPIC` memories is a topic, named by what most of its members cite or share. Smaller
ones are memories without a topic yet. Deterministic: nodes and edges go in by key and the seed is fixed, so the
same memories give the same map whatever order their events came in.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass

from nous_assets.consolidate.similarity import Item, scored_pairs

LINK = 0.45
"""Similarity a pair needs to be an edge: clustering's cohesion gate is 0.6 (one statement); a topic is looser."""
CO_OCCURRENCE = 0.3
MIN_TOPIC = 3
MAX_LABEL_TERMS = 3


@dataclass(frozen=True)
class Topic:
    """One community: a name, its members (learning ids, sorted) and the observations formed inside it."""

    label: str
    members: tuple[str, ...]
    observations: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """A stable id for the topic: the same members give the same key."""
        return hashlib.sha256("|".join(self.members).encode()).hexdigest()[:12]


def communities(
    items: list[Item],
    edges: set[frozenset[str]],
    sessions: Mapping[str, str],
    observations: Mapping[str, tuple[str, ...]] = {},  # noqa: B006 - read only
) -> list[Topic]:
    """The topics of one scope's ``items`` (``sessions``: key -> the session it was learned in; ``observations``:
    observation id -> its member keys), largest first."""
    ordered = sorted(items, key=lambda i: i.key)
    if len(ordered) < MIN_TOPIC:
        return []
    import networkx as nx  # imported where the map is drawn, not by every process that loads the pipeline

    graph = nx.Graph()
    graph.add_nodes_from(i.key for i in ordered)
    for (a, b), weight in sorted(_weights(ordered, edges, sessions).items()):
        graph.add_edge(ordered[a].key, ordered[b].key, weight=weight)
    found = nx.community.louvain_communities(graph, weight="weight", resolution=1.0, seed=0)
    by_key = {i.key: i for i in ordered}
    topics = []
    for group in found:
        members = tuple(sorted(group))
        if len(members) < MIN_TOPIC:
            continue
        inside = set(members)
        held = tuple(sorted(o for o, keys in observations.items() if _mostly(keys, inside)))
        topics.append(Topic(label([by_key[k] for k in members], ordered), members, held))
    return sorted(topics, key=lambda t: (-len(t.members), t.members))


def _weights(
    items: list[Item], edges: set[frozenset[str]], sessions: Mapping[str, str]
) -> dict[tuple[int, int], float]:
    weights = {pair: value for pair, value in scored_pairs(items, edges).items()
               if value >= LINK or frozenset((items[pair[0]].key, items[pair[1]].key)) in edges}  # fmt: skip
    for pair in weights:
        if frozenset((items[pair[0]].key, items[pair[1]].key)) in edges:
            weights[pair] = max(weights[pair], LINK)
    by_session: dict[str, list[int]] = {}
    for n, it in enumerate(items):
        if sessions.get(it.key):
            by_session.setdefault(sessions[it.key], []).append(n)
    for members in by_session.values():
        for x, a in enumerate(members):
            for b in members[x + 1 :]:
                if (items[a].files | items[a].commands) & (items[b].files | items[b].commands):
                    weights[(a, b)] = weights.get((a, b), 0.0) + CO_OCCURRENCE
    return weights


def _mostly(keys: tuple[str, ...], inside: set[str]) -> bool:
    """Most of an observation's members are in the community (ties: half counts)."""
    return bool(keys) and 2 * sum(k in inside for k in keys) >= len(keys)


def label(members: list[Item], scope: list[Item]) -> str:
    """What the topic's members cite (files, commands) or share (concepts) and the rest of the scope mostly does
    not: up to three terms two or more members have, by their share of the topic times their rarity in the scope
    (TF-IDF, as seed 003 names a cluster), so a word every memory of the project shares (its language) names
    nothing. The topic's commonest term alone when no term is shared."""
    def terms(it: Item) -> set[str]:
        return {f"`{f}`" for f in it.files} | {f"`{c}`" for c in it.commands} | set(it.concepts)

    inside: Counter[str] = Counter(t for it in members for t in terms(it))
    everywhere: Counter[str] = Counter(t for it in scope for t in terms(it))
    weight = {t: n * math.log((1 + len(scope)) / everywhere[t]) for t, n in inside.items()}
    ranked = sorted(inside, key=lambda t: (-weight[t], t))
    shared: dict[str, str] = {}  # plain words -> the term: `mix test` and the concept mix test are one term
    for t in ranked:
        if inside[t] >= 2 and len(shared) < MAX_LABEL_TERMS:
            shared.setdefault(t.strip("`").lower(), t)
    return " · ".join(shared.values() or ranked[:1]) or "(no shared terms)"

"""Communities: the project's topics, found in the graph of its memories (seed 000's roadmap item 43).

An observation holds memories that say one thing; a community is wider: a topic of the project (its test setup,
its release procedure), memories that are about the same things without saying the same thing. The graph has
one node per current memory of a scope (the ones consolidation considers) and three kinds of edge:

* **relates** — the composite similarity of a pair (:func:`~nous_assets.consolidate.similarity.scored_pairs`:
  embedding cosine, cited files and commands, concepts, a stored relates or causal edge) when at least
  :data:`LINK`;
* **co-occurrence** — two memories learned in the same session that cite the same file or command
  (:data:`CO_OCCURRENCE`, added to the pair's similarity);
* a stored edge between two memories always joins them (its weight is the pair's similarity, at least ``LINK``).

Louvain (``networkx``'s ``louvain_communities``, modularity resolution 1, seed 0) splits the graph, and splits again
any community over :data:`MAX_TOPIC` (Leiden's refinement, in spirit); a community of at least :data:`MIN_TOPIC`
memories is a topic, named by what most of its members cite or share. Smaller
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
MAX_TOPIC = 60
"""A community larger than this is split again (:func:`_split`): a map whose topic holds a thousand memories says
nothing."""
MAX_DEPTH = 4
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
    found = _split(nx, graph, nx.community.louvain_communities(graph, weight="weight", resolution=1.0, seed=0))
    by_key = {i.key: i for i in ordered}
    everywhere: Counter[str] = Counter(t for it in ordered for t in _terms(it))
    topics = []
    for group in found:
        members = tuple(sorted(group))
        if len(members) < MIN_TOPIC:
            continue
        inside = set(members)
        held = tuple(sorted(o for o, keys in observations.items() if _mostly(keys, inside)))
        topics.append(Topic(label([by_key[k] for k in members], everywhere, len(ordered)), members, held))
    return sorted(topics, key=lambda t: (-len(t.members), t.members))


def _split(nx, graph, found: list[set[str]], depth: int = 0) -> list[set[str]]:
    """Communities larger than :data:`MAX_TOPIC` split again on their own subgraph (modularity's resolution limit
    merges topics in a large graph: 10,000 memories came out as six communities), until none is larger or a split
    finds nothing to cut."""
    out: list[set[str]] = []
    for group in sorted(found, key=lambda g: sorted(g)):
        if len(group) <= MAX_TOPIC or depth >= MAX_DEPTH:
            out.append(group)
            continue
        parts = nx.community.louvain_communities(graph.subgraph(sorted(group)), weight="weight", seed=0)
        out += [group] if len(parts) < 2 else _split(nx, graph, parts, depth + 1)
    return out


def _weights(
    items: list[Item], edges: set[frozenset[str]], sessions: Mapping[str, str]
) -> dict[tuple[int, int], float]:
    """The edges of the graph: every scored pair (nearest neighbours, shared citations, stored edges) whose
    similarity, plus :data:`CO_OCCURRENCE` when both were learned in one session citing the same file or command,
    reaches :data:`LINK`; a stored edge always. Only scored pairs: a session's hundred memories citing the README
    would otherwise join in ten thousand pairs and the graph would say nothing."""
    weights = {}
    for (a, b), value in scored_pairs(items, edges).items():
        x, y = items[a], items[b]
        together = sessions.get(x.key) and sessions.get(x.key) == sessions.get(y.key)
        if together and (x.files | x.commands) & (y.files | y.commands):
            value += CO_OCCURRENCE
        if frozenset((x.key, y.key)) in edges:
            value = max(value, LINK)
        if value >= LINK:
            weights[(a, b)] = value
    return weights


def _mostly(keys: tuple[str, ...], inside: set[str]) -> bool:
    """Most of an observation's members are in the community (ties: half counts)."""
    return bool(keys) and 2 * sum(k in inside for k in keys) >= len(keys)


def _terms(it: Item) -> set[str]:
    return {f"`{f}`" for f in it.files} | {f"`{c}`" for c in it.commands} | set(it.concepts)


def label(members: list[Item], everywhere: Counter[str], scope_size: int) -> str:
    """What the topic's members cite (files, commands) or share (concepts) and the rest of the scope mostly does
    not (``everywhere``: in how many of the scope's ``scope_size`` memories each term is): up to three terms two or
    more members have, by their share of the topic times their rarity in the scope (TF-IDF, as seed 003 names a
    cluster), so a word every memory of the project shares (its language) names nothing. The topic's commonest
    term alone when no term is shared."""
    inside: Counter[str] = Counter(t for it in members for t in _terms(it))
    weight = {t: n * math.log((1 + scope_size) / max(everywhere[t], 1)) for t, n in inside.items()}
    ranked = sorted(inside, key=lambda t: (-weight[t], t))
    shared: dict[str, str] = {}  # plain words -> the term: `mix test` and the concept mix test are one term
    for t in ranked:
        if inside[t] >= 2 and len(shared) < MAX_LABEL_TERMS:
            shared.setdefault(t.strip("`").lower(), t)
    return " · ".join(shared.values() or ranked[:1]) or "(no shared terms)"

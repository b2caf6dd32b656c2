"""How alike two memories of one scope are: the composite signal clustering runs on (seed 003, CX14 step 1).

Signals, with their weights: embedding cosine 0.5, shared cited files 0.2, shared cited commands 0.15, shared
concepts 0.1, a graph edge between them 0.05. A signal neither memory has (two memories that cite no file) is
absent, not a disagreement: the similarity is the weighted mean over the signals the pair has, so two
near-identical sentences that cite nothing are as alike as two that cite the same file.

Only pairs that can be alike are scored: each memory's nearest neighbours by cosine, and every pair that shares
a cited file or command. The result is a sparse distance matrix (1 - similarity), which is what HDBSCAN takes
for thousands of memories without an n x n matrix in memory.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from nous_assets.extract.rules.forms import command_forms
from nous_assets.retrieve.citations import citations

if TYPE_CHECKING:
    from scipy import sparse

WEIGHTS = {"vector": 0.5, "files": 0.2, "commands": 0.15, "concepts": 0.1, "edge": 0.05}
NEIGHBOURS = 10
"""Nearest neighbours by cosine scored per memory (besides those sharing a file or command)."""

MAX_SHARED = 50
"""A file or command cited by more memories than this says nothing about any two of them (a README, `git`)."""

_MIN_DISTANCE = 1e-6  # HDBSCAN reads an explicit 0 in a sparse matrix as "no edge": identical pairs get this


@dataclass(frozen=True)
class Item:
    """One memory as clustering sees it: its key, vector and what it cites."""

    key: str
    vector: np.ndarray | None
    files: frozenset[str]
    commands: frozenset[str]
    concepts: frozenset[str]


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def item(key: str, content: str, vector: np.ndarray | None, concepts: Iterable[str]) -> Item:
    """``content``'s cited paths, scripts and tasks (:func:`~nous_assets.retrieve.citations.citations`) and the
    normalised commands of its code spans (program plus subcommand, as replay compares them), with its vector."""
    cited = citations(content)
    files = frozenset(c.value for c in cited if c.kind == "path")
    commands = {c.value for c in cited if c.kind != "path"}
    commands.update(form for span in _CODE_SPAN.findall(content) for form in command_forms(span))
    return Item(key, vector, files, frozenset(commands), frozenset(concepts))


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float | None:
    return len(a & b) / len(a | b) if a or b else None


def similarity(a: Item, b: Item, cosine: float | None, linked: bool) -> float:
    """The weighted mean of the signals the pair has (see the module docstring)."""
    values = {
        "vector": cosine,
        "files": _jaccard(a.files, b.files),
        "commands": _jaccard(a.commands, b.commands),
        "concepts": _jaccard(a.concepts, b.concepts),
        "edge": 1.0 if linked else None,
    }
    weight = sum(WEIGHTS[s] for s, v in values.items() if v is not None)
    if weight == 0.0:
        return 0.0
    return sum(WEIGHTS[s] * v for s, v in values.items() if v is not None) / weight


def unit(matrix: np.ndarray) -> np.ndarray:
    """``matrix``'s rows scaled to unit length (float32): a dot product of two rows is their cosine."""
    matrix = np.asarray(matrix, dtype=np.float32)
    return matrix / np.maximum(np.linalg.norm(matrix, axis=1, keepdims=True), 1e-12)


def _unit_rows(items: list[Item]) -> np.ndarray | None:
    if not items or any(i.vector is None for i in items):
        return None
    return unit(np.stack([i.vector for i in items]))


def _nearest(unit: np.ndarray, k: int, block: int = 512) -> np.ndarray:
    """Each row's ``k`` nearest other rows by cosine, a block of rows at a time (no n x n matrix in memory)."""
    out = np.empty((len(unit), k), dtype=np.int64)
    for start in range(0, len(unit), block):
        scores = unit[start : start + block] @ unit.T
        scores[np.arange(len(scores)), np.arange(start, start + len(scores))] = -np.inf
        out[start : start + block] = np.argpartition(-scores, k - 1, axis=1)[:, :k]
    return out


def candidate_pairs(items: list[Item], unit: np.ndarray | None) -> set[tuple[int, int]]:
    """Index pairs worth scoring: nearest neighbours by cosine, and pairs citing the same file or command."""
    pairs: set[tuple[int, int]] = set()
    n = len(items)
    if unit is not None and n > 1:
        nearest = _nearest(unit, min(NEIGHBOURS, n - 1))
        pairs |= {(min(i, int(j)), max(i, int(j))) for i in range(n) for j in nearest[i]}
    by_citation: dict[str, list[int]] = defaultdict(list)
    for index, it in enumerate(items):
        for cited in it.files | it.commands:
            by_citation[cited].append(index)
    for members in by_citation.values():
        if 1 < len(members) <= MAX_SHARED:
            pairs |= {(a, b) for x, a in enumerate(members) for b in members[x + 1 :]}
    return pairs


def scored_pairs(items: list[Item], edges: set[frozenset[str]]) -> dict[tuple[int, int], float]:
    """The similarity of every candidate pair of ``items`` (and of every pair an edge joins), by index pair."""
    unit = _unit_rows(items)
    index = {it.key: n for n, it in enumerate(items)}
    pairs = candidate_pairs(items, unit)
    for edge in edges:
        ends = sorted(index[k] for k in edge if k in index)
        if len(ends) == 2:
            pairs.add((ends[0], ends[1]))
    scored: dict[tuple[int, int], float] = {}
    for a, b in sorted(pairs):
        cosine = float(unit[a] @ unit[b]) if unit is not None else None
        linked = frozenset((items[a].key, items[b].key)) in edges
        scored[(a, b)] = similarity(items[a], items[b], cosine, linked)
    return scored


def distances(items: list[Item], edges: set[frozenset[str]]) -> tuple[sparse.csr_matrix, dict[tuple[int, int], float]]:
    """The sparse symmetric distance matrix over ``items`` (1 - similarity on scored pairs) and the similarity of
    every scored pair, by index pair."""
    scored = scored_pairs(items, edges)
    from scipy import sparse  # imported where clustering runs, not by every process that loads the pipeline

    rows = [a for a, b in scored] + [b for a, b in scored]
    cols = [b for a, b in scored] + [a for a, b in scored]
    values = [max(1.0 - s, _MIN_DISTANCE) for s in scored.values()] * 2
    n = len(items)
    return sparse.csr_matrix((values, (rows, cols)), shape=(n, n)), scored

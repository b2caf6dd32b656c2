"""From candidates to records: de-duplication, per-kind caps, concepts, edges and the record shape.

Candidates of all rule families meet here. Exact and near duplicates (the same gotcha said in prose and
listed again in a compaction summary) are folded into the best-scored one; each kind keeps its best few
so one talkative rule cannot crowd out the others; the survivors are rendered in transcript order with
their provenance (the turns they rest on), concepts, domain and the contract's optional fields.
"""

from __future__ import annotations

import re
from typing import Any

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.extract.rules.session import TOOL_NAMES, Cand
from nous_assets.status import CLOSED
from nous_assets.turns import Turn

MAX_PER_BATCH = 60
MAX_PROVENANCE_TURNS = 16
NEAR_DUPLICATE = 0.6
KIND_CAPS = {
    "correction": 10, "preference": 12, "decision": 10, "gotcha": 16, "workflow": 4, "convention": 14,
    "command": 6, "configuration": 6, "architecture": 16,
}  # fmt: skip
TYPE_BY_KIND = {
    "correction": "learning", "preference": "learning", "decision": "learning", "gotcha": "learning",
    "workflow": "learning", "convention": "learning", "command": "knowledge", "configuration": "knowledge",
    "architecture": "knowledge",
}  # fmt: skip
KIND_RANK = {k: i for i, k in enumerate(
    ("correction", "preference", "workflow", "decision", "gotcha", "convention", "architecture", "configuration",
     "command"))}  # fmt: skip
_WORD_RE = re.compile(r"[a-z0-9_./:-]{3,}")


def select(
    cands: list[Cand], kind_caps: dict[str, int] | None = None, max_per_batch: int = MAX_PER_BATCH
) -> list[Cand]:
    """Unique, capped candidates in transcript order."""
    caps = KIND_CAPS if kind_caps is None else kind_caps
    ranked = sorted(cands, key=lambda c: (c.status in CLOSED, -c.score, c.pos, c.sub))  # what holds first
    kept: list[Cand] = []
    bags: list[set[str]] = []
    for c in ranked:
        if len(c.content) < 10:
            continue
        bag = set(_WORD_RE.findall(c.content.lower()))
        if any(_similar(bag, other) for other in bags):
            continue
        kept.append(c)
        bags.append(bag)
    by_kind: dict[str, list[Cand]] = {}
    for c in kept:
        by_kind.setdefault(c.kind, []).append(c)
    chosen: list[Cand] = []
    for kind, items in by_kind.items():
        cap = caps.get(kind)
        chosen.extend(items[:cap] if cap is not None else items)
    if len(chosen) > max_per_batch:
        chosen = sorted(chosen, key=lambda c: (KIND_RANK.get(c.kind, 9), -c.score, c.pos))[:max_per_batch]
    return sorted(chosen, key=lambda c: (c.pos, c.sub, KIND_RANK.get(c.kind, 9)))


def _similar(a: set[str], b: set[str]) -> bool:
    """Near duplicates: most words shared — unless two short texts differ in the words that matter.

    "always run ruff … billing module" and "always run bandit … alerts module" share a template, not a learning.
    """
    if not a or not b:
        return a == b
    shared = len(a & b)
    if shared / max(len(a), len(b)) >= 0.9:
        return True
    if len(a | b) < 24 and len(a ^ b) >= 2:
        return False
    return shared / min(len(a), len(b)) >= NEAR_DUPLICATE and shared / max(len(a), len(b)) >= 0.45


# what tools printed about the branch at hand; what people said (corrections, decisions) is quoted as said
_BRANCH_NEUTRAL_KINDS = frozenset({"gotcha", "command", "workflow", "configuration"})
_SHARED_BRANCHES = frozenset({"main", "master", "develop", "development", "trunk", "head", "dev"})


def session_branches(batch: SessionBatch) -> list[str]:
    """The session's own branch names that look like identifiers (``spotter-fum``, ``feat/login``): a
    learning that names them is true of every branch, so they are written ``<branch>``. A branch named
    like a word (``streaming``) is left alone: it cannot be told apart from the word in prose."""
    names = {t.git_branch for t in batch.turns if t.git_branch}
    return sorted(
        (b for b in names if b.lower() not in _SHARED_BRANCHES and re.search(r"[-/_.\d]", b) and len(b) >= 3),
        key=len,
        reverse=True,
    )


def generic_branch(text: str, branches: list[str]) -> str:
    for b in branches:
        text = re.sub(rf"(?<![\w/.-]){re.escape(b)}(?![\w/-])", "<branch>", text)
    return text


def render(batch: SessionBatch, chosen: list[Cand]) -> list[dict[str, Any]]:
    branches = session_branches(batch)
    for c in chosen:
        if c.kind in _BRANCH_NEUTRAL_KINDS:
            c.content = generic_branch(c.content, branches)
    concepts_of: list[list[str]] = []
    domains: list[str] = []
    for c in chosen:
        base = c.concept_text or c.content
        evidence = [h for h in c.hints if h and h not in TOOL_NAMES]
        first_domain = c.domain or infer_domain(base + " " + " ".join(evidence))
        pad = [
            d
            for d in (first_domain if first_domain != "general" else "", c.kind, *[h for h in evidence if len(h) < 40])
            if d
        ]
        concepts = extract_concepts(base, evidence, pad=pad)
        concepts_of.append(concepts)
        domains.append(c.domain or infer_domain(base + " " + " ".join(evidence), concepts))
    edges = _edges(chosen, concepts_of)
    return [_record(batch, c, concepts_of[i], domains[i], edges[i]) for i, c in enumerate(chosen)]


def _record(batch: SessionBatch, c: Cand, concepts: list[str], domain: str, edges: list[dict[str, Any]]) -> dict:
    uuids: list[str] = []
    offsets: list[int] = []
    turns: list[Turn] = []
    seen: set[str] = set()
    for t in [c.anchor, *c.turns]:
        if t.uuid not in seen and t.source_path == c.anchor.source_path:
            seen.add(t.uuid)
            turns.append(t)
    for t in turns[:MAX_PROVENANCE_TURNS]:
        uuids.extend(u for u in t.uuids if u not in uuids)
        offsets.extend(o for o in t.line_offsets if o not in offsets)
    record: dict[str, Any] = {
        "content": c.content,
        "type": TYPE_BY_KIND.get(c.kind, "knowledge"),
        "kind": c.kind,
        "domain": domain[:64],
        "scope": c.scope,
        "concepts": concepts,
        "edges": edges,
        "valid_from": c.anchor.timestamp or batch.started_at,
        "valid_until": None,
        "temporal_confidence": c.temporal,
        "anchor_uuid": c.anchor.uuid,
        "provenance": {
            "session_id": batch.session_id,
            "source_path": c.anchor.source_path,
            "uuids": uuids,
            "line_offsets": sorted(offsets),
        },
        "applies_when": c.applies_when[:120],
        "source_ref": c.source_ref[:120],
        "status": c.status,
        "evidence": c.evidence,
    }
    if c.slot:
        record["slot"] = c.slot[:160]
    if c.kind == "correction" and c.weakens:
        record["weakens"] = c.weakens
    return record


def _edges(chosen: list[Cand], concepts: list[list[str]]) -> list[list[dict[str, Any]]]:
    """Corrections relate to the gotchas/decisions that followed them; preferences to what they are about."""
    edges: list[list[dict[str, Any]]] = [[] for _ in chosen]

    def add(src: int, dst: int, rel: str, weight: float) -> None:
        if src == dst or any(e["target_index"] == dst for e in edges[src]):
            return
        edges[src].append({"target_index": dst, "rel_type": rel, "weight": round(min(0.9, max(0.3, weight)), 2)})

    for i, c in enumerate(chosen):
        shared = [len(set(concepts[i]) & set(concepts[j])) for j in range(len(chosen))]
        if c.kind == "correction":
            linked = 0
            for j in range(i + 1, len(chosen)):
                other = chosen[j]
                if other.kind == "correction":
                    break
                if other.anchor.source_path != c.anchor.source_path:
                    continue
                if other.kind in ("gotcha", "decision") and other.pos - c.pos <= 60:
                    add(i, j, "relates_to", (0.6 if other.kind == "decision" else 0.5) + 0.1 * min(3, shared[j]))
                    linked += 1
                    if linked >= 2:
                        break
        elif c.kind == "preference":
            for j, other in enumerate(chosen):
                if other.kind in ("command", "configuration", "workflow") and shared[j] >= 2:
                    add(i, j, "relates_to", 0.3 + 0.1 * shared[j])
    return edges

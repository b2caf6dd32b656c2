"""From verdicts to the log: cache every label in ``nli_results``, append what a contradiction means.

* A pair labelled ``contradiction`` at confidence >= ``nli_contradiction_confidence`` (0.7) about a
  **single-valued** fact (two values of one port, version, command, choice) is resolved last-writer-wins by
  ``valid_from`` (spec "Temporal Reconciliation"): the older-valid learning gets ``LearningSuperseded`` by
  the newer one, its window closed where the newer one starts, whatever order they were ingested in.
* Any other confident contradiction appends paired ``LearningContradicted`` events (each ×0.7 by default),
  both kept.

Each batch of labels and its events is one transaction, with idempotency keys derived from the pair, so a
run killed at any point and run again classifies only what is left and never appends an event twice. The
events take effect when ``memories`` next projects; retrieval reads the cached labels at once.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from nous_assets.reconcile.nli.base import Classifier, Verdict
from nous_assets.reconcile.nli.pairs import Item, candidate_pairs, items_from_rows
from nous_assets.settings import Thresholds
from nous_assets.store.db import Connection, atomic
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.reads import nli_results
from nous_assets.store.search import memory_search, vectors
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.timeutil import now_iso


@dataclass
class NliStats:
    memories: int = 0
    candidates: int = 0
    classified: int = 0
    contradictions: int = 0
    contradicted_events: int = 0
    superseded_events: int = 0
    by_reason: dict[str, int] = field(default_factory=dict)


def _key(*parts: str) -> str:
    return hashlib.sha256(":".join(parts).encode()).hexdigest()


def _order(item: Item) -> tuple[str, str]:
    """Validity order; equal times fall back to the learning id so every ingestion order agrees."""
    return (item.valid_from or "", item.learning_id)


def _nli_detail(verdict: Verdict, model_version: str) -> dict:
    return {"label": verdict.label, "confidence": verdict.confidence, "rule": verdict.reason, "model": model_version}


def events_for(
    a: Item, b: Item, verdict: Verdict, *, model_version: str, thresholds: Thresholds, source: str
) -> list[LearningEvent]:
    """The events a verdict on ``(a, b)`` calls for (none unless a confident contradiction)."""
    if verdict.label != "contradiction" or verdict.confidence < thresholds.nli_contradiction_confidence:
        return []
    detail = _nli_detail(verdict, model_version)
    if verdict.single_valued:
        old, new = sorted((a, b), key=_order)
        payload = {"superseded_by": new.learning_id, "reason": f"nli:{verdict.reason or 'value'}", "nli": detail}
        return [
            LearningEvent(
                "LearningSuperseded", old.learning_id, payload, old.session or "nli", old.project_id, source,
                _key("nli-supersede", old.learning_id, new.learning_id), valid_until=new.valid_from or old.valid_from,
            )
        ]  # fmt: skip
    out = []
    for me, other in ((a, b), (b, a)):
        payload = {
            "contradicted_with": other.learning_id,
            "contradiction_multiplier": thresholds.contradiction_multiplier,
            "reason": f"nli:{verdict.reason or 'contradiction'}",
            "nli": detail,
        }
        out.append(
            LearningEvent(
                "LearningContradicted", me.learning_id, payload, me.session or "nli", me.project_id, source,
                _key("nli-contradict", me.learning_id, other.learning_id),
            )
        )  # fmt: skip
    return out


def _classify_batch(
    conn: Connection,
    classifier: Classifier,
    batch: Sequence[tuple[Item, Item]],
    *,
    thresholds: Thresholds,
    source: str,
    stats: NliStats,
) -> None:
    verdicts = classifier.classify([(a.content, b.content) for a, b in batch])  # outside the write lock
    at = now_iso()
    rows, events = [], []
    for (a, b), verdict in zip(batch, verdicts, strict=True):
        rows.append((a.id, b.id, verdict.label, float(verdict.confidence), classifier.model_version, at))
        if verdict.label == "contradiction":
            stats.contradictions += 1
            stats.by_reason[verdict.reason] = stats.by_reason.get(verdict.reason, 0) + 1
        events += events_for(a, b, verdict, model_version=classifier.model_version, thresholds=thresholds,
                             source=source)  # fmt: skip
    with atomic(conn):
        nli_results.upsert(conn, rows)
        for result in SqliteEventStore(conn).append_many(events):
            if result.created:
                if result.event.event_type == "LearningSuperseded":
                    stats.superseded_events += 1
                else:
                    stats.contradicted_events += 1
    stats.classified += len(batch)


def reconcile_contradictions(
    conn: Connection,
    classifier: Classifier,
    thresholds: Thresholds,
    *,
    source: str,
    batch_size: int = 64,
    progress: Callable[[int, int], None] | None = None,
) -> NliStats:
    """Classify every candidate pair the classifier's version has not labelled yet, and record the outcome."""
    items = items_from_rows(nli_results.comparable_memories(conn))
    stats = NliStats(memories=len(items))
    ids = [it.id for it in items]
    pairs = candidate_pairs(
        items,
        memory_search.concepts_of(conn, ids),
        vectors.blobs_for(conn, ids),
        overlap=thresholds.concept_overlap_for_nli,
        cosine=thresholds.nli_vector_cosine,
    )
    stats.candidates = len(pairs)
    done = nli_results.classified_pairs(conn, classifier.model_version)
    by_id = {it.id: it for it in items}
    todo = [(by_id[a], by_id[b]) for a, b in pairs if (a, b) not in done]
    for start in range(0, len(todo), batch_size):
        _classify_batch(conn, classifier, todo[start : start + batch_size], thresholds=thresholds, source=source,
                        stats=stats)  # fmt: skip
        if progress is not None:
            progress(min(start + batch_size, len(todo)), len(todo))
    return stats

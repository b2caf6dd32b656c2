"""Precision and recall of an NLI classifier on a labelled set of learning pairs (``tests/data/nli_pairs.jsonl``).

Contradiction is the positive class: it is what costs a memory its score or its validity, so a false
contradiction is the expensive error (precision) and a missed one the cheap one (recall).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from nous_assets.reconcile.nli.base import Classifier


def load_pairs(path: Path) -> list[dict]:
    """Rows of a labelled JSONL file: ``a``, ``b``, ``label`` and where the pair came from."""
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def score(classifier: Classifier, rows: Sequence[dict], *, positive: str = "contradiction") -> dict:
    """Precision, recall and the confusion counts of ``classifier`` on ``rows``, overall and per origin."""
    verdicts = classifier.classify([(r["a"], r["b"]) for r in rows])
    confusion: Counter[tuple[str, str]] = Counter()
    per_origin: dict[str, Counter[str]] = {}
    misses = []
    for row, verdict in zip(rows, verdicts, strict=True):
        confusion[(row["label"], verdict.label)] += 1
        counts = per_origin.setdefault(row.get("origin", "?"), Counter())
        hit, said = row["label"] == positive, verdict.label == positive
        counts["tp" if hit and said else "fp" if said else "fn" if hit else "tn"] += 1
        if hit != said:
            misses.append({"id": row.get("id"), "gold": row["label"], "said": verdict.label, "rule": verdict.reason})
    tp = sum(c["tp"] for c in per_origin.values())
    fp = sum(c["fp"] for c in per_origin.values())
    fn = sum(c["fn"] for c in per_origin.values())
    return {
        "pairs": len(rows),
        "precision": round(tp / (tp + fp), 4) if tp + fp else 1.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 1.0,
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "label_accuracy": round(sum(n for (g, s), n in confusion.items() if g == s) / max(1, len(rows)), 4),
        "per_origin": {k: dict(v) for k, v in sorted(per_origin.items())},
        "confusion": {f"{g}->{s}": n for (g, s), n in sorted(confusion.items())},
        "errors": misses,
    }

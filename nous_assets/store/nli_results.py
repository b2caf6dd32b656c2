"""Reads of ``nli_results``: cached natural-language-inference labels between pairs of memories."""

from __future__ import annotations

import json
from collections.abc import Iterable

from nous_assets.store.db import Connection


def contradictions_among(conn: Connection, ids: Iterable[int]) -> dict[tuple[int, int], tuple[str, float]]:
    """Cached NLI contradictions among ``ids``: {(a, b): (label, confidence)} with a < b."""
    rows = conn.execute(
        "SELECT memory_id_a, memory_id_b, nli_label, confidence FROM nli_results "
        "WHERE nli_label = 'contradiction' AND memory_id_a IN (SELECT value FROM json_each(:ids)) "
        "AND memory_id_b IN (SELECT value FROM json_each(:ids))",
        {"ids": json.dumps(sorted(set(ids)))},
    ).fetchall()
    return {(int(a), int(b)): (label, float(conf)) for a, b, label, conf in rows}

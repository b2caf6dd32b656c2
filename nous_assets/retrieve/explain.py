"""``nous search --explain``: why a result is there and where its score comes from, in two lines.

The first line splits the seven dimensions into the query-dependent ones (the evidence a result needs
to pass the relevance floor) and the priors (which only order relevant results), each as raw value ->
weighted contribution, plus its rank among all scored candidates. The second says which timestamps
recency and freshness were computed from, so a backfilled memory shows when it was learned, not when
it was ingested.
"""

from __future__ import annotations

from nous_assets.retrieve.excerpt_shape import FACTOR as ANNOUNCES
from nous_assets.retrieve.scoring import QUERY_DIMENSIONS, recency_stamp
from nous_assets.retrieve.search import Result
from nous_assets.timeutil import parse_time

PRIOR_DIMENSIONS = ("reinforce", "temporal", "recency")


def _dims(breakdown: dict[str, float], names: tuple[str, ...]) -> str:
    return " ".join(f"{d}={breakdown.get('s_' + d, 0.0):.2f}→{breakdown.get('w_' + d, 0.0):.3f}" for d in names)


def _day(stamp: str | None) -> str:
    return stamp[:10] if stamp else "unknown"


def _age_days(stamp: str, now: str) -> float:
    return max((parse_time(now) - parse_time(stamp)).total_seconds() / 86400.0, 0.0)


def explain_lines(result: Result, *, now: str, half_life_days: float) -> list[str]:
    """Two indented lines: the score's make-up and the timestamps behind recency."""
    b = result.breakdown
    rank = f"rank {b['rank']:.0f} of {b['candidates']:.0f} scored" if "rank" in b and "candidates" in b else ""
    penalty = f" · contradicted ×{b['contradiction']:.2f}" if b.get("contradiction", 1.0) != 1.0 else ""
    penalty += f" · only announces ×{b[ANNOUNCES]:.2f}" if b.get(ANNOUNCES, 1.0) != 1.0 else ""
    parts = f"evidence {_dims(b, QUERY_DIMENSIONS)} · priors {_dims(b, PRIOR_DIMENSIONS)}{penalty}"
    first = f"    explain: {rank} · {parts}"
    basis = recency_stamp(result.accessed_at, result.valid_from, result.created_at)
    learned = f"learned {_day(result.valid_from)}" if result.valid_from else "learned: unknown (ingestion time used)"
    when = [learned, f"ingested {_day(result.created_at)}"]
    if result.accessed_at:
        when.append(f"last reinforced/weakened {_day(result.accessed_at)}")
    if basis:
        clock = b.get("clock")  # the corpus's clock the scorer measured recency from (epoch seconds)
        age = max(clock - parse_time(basis).timestamp(), 0.0) / 86400.0 if clock else _age_days(basis, now)
        when.append(f"recency from {_day(basis)} ({age:.0f} d ago, half-life {half_life_days:g} d)")
    return [first, "    when: " + " · ".join(when)]

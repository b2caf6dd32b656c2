"""Insight layer: process-mining metrics over the event log, the access log and the projection."""

from datetime import UTC, date, datetime, time, timedelta

import dagster as dg

from nous_assets.defs.assets.retrieval import injection_cache
from nous_assets.defs.partitions import daily_asset
from nous_assets.defs.resources import NousResource

GROUP = "insight"


def partition_end(day: str, now: datetime | None = None) -> str:
    """The end of a partition day (UTC), or now if that is earlier: the moment the metrics are taken at."""
    end = datetime.combine(date.fromisoformat(day) + timedelta(days=1), time(), tzinfo=UTC)
    return min(end, now or datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def hotspot_table(hotspots: list) -> str:
    """Complexity hotspots as a markdown table (what the asset's metadata shows)."""
    if not hotspots:
        return "No hotspots: nothing recurs and nothing was corrected."
    rows = ["| project | domain | learnings | recurrence | corrections/active | burst | score |",
            "|---|---|---:|---:|---:|---:|---:|"]  # fmt: skip
    rows += [
        f"| {h.project_id} | {h.domain} | {h.learnings} | {h.recurrence_rate:.3f} | {h.correction_density:.3f} "
        f"| {h.burst_index:.2f} | {h.score:.3f} |"
        for h in hotspots
    ]
    return "\n".join(rows)


@daily_asset(
    group_name=GROUP,
    deps=[injection_cache],
    kinds={"duckdb"},
    description="Process mining with DuckDB over cortex.db read-only (the live event log, access log and "
    "projection) as of the end of the partition's day: recurrence rate, injection effectiveness, burst index, "
    "learning velocity, correction density, knowledge decay (numbers Dagster plots over time) and a table of "
    "complexity hotspots. Writes nothing.",
)
def metrics(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    from nous_assets.metrics.mining import compute

    settings = nous.settings()
    as_of = partition_end(max(context.partition_keys))
    report = compute(settings.db_path, as_of=as_of, busy_timeout_ms=settings.db_busy_timeout_ms)
    numbers = {
        key: (dg.MetadataValue.int(value) if isinstance(value, int) else dg.MetadataValue.float(float(value)))
        for key, value in report.headline.items()
        if value is not None
    }
    return dg.MaterializeResult(
        metadata={
            **numbers,
            "as_of": dg.MetadataValue.text(report.as_of),
            "hotspots": dg.MetadataValue.md(hotspot_table(report.hotspots)),
        }
    )

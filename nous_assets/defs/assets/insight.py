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


HOTSPOT_COLUMNS = (
    ("project", "string", "project id"),
    ("domain", "string", "the learnings' domain"),
    ("learnings", "int", "learnings in the domain"),
    ("recurrence_rate", "float", "re-extractions per session"),
    ("correction_density", "float", "corrections per active memory"),
    ("burst_index", "float", "re-extractions/day, last 7 days vs last 30 (1 = steady)"),
    ("score", "float", "recurrence rate + correction density"),
)


def hotspot_table(hotspots: list) -> dg.TableMetadataValue:
    """Complexity hotspots as a table metadata value: the UI shows it as a table with one column per figure (a
    markdown value was squeezed into one cell of the metadata list)."""
    schema = dg.TableSchema(columns=[dg.TableColumn(name, kind, description=text)
                                     for name, kind, text in HOTSPOT_COLUMNS])  # fmt: skip
    records = [
        dg.TableRecord({
            "project": h.project_id, "domain": h.domain, "learnings": int(h.learnings),
            "recurrence_rate": float(h.recurrence_rate), "correction_density": float(h.correction_density),
            "burst_index": float(h.burst_index), "score": float(h.score),
        })
        for h in hotspots
    ]  # fmt: skip
    return dg.MetadataValue.table(records, schema=schema)


def figures(report) -> dict[str, dg.MetadataValue]:
    """The numbers Dagster plots, with units: shares as percentages (``…_pct``), the unit of every figure that
    is not a plain count in its description (``units``), counts as ints."""
    from nous_assets.metrics.mining import UNITS, as_percent

    out: dict[str, dg.MetadataValue] = {}
    for key, value in report.headline.items():
        if UNITS.get(key) == "%":
            key, value = f"{key}_pct", as_percent(value)
        if value is None:
            continue
        out[key] = dg.MetadataValue.int(value) if isinstance(value, int) else dg.MetadataValue.float(float(value))
    return out


@daily_asset(
    group_name=GROUP,
    deps=[injection_cache],
    kinds={"duckdb"},
    description="Process mining with DuckDB over cortex.db read-only (the live event log, access log and "
    "projection) as of the end of each partition's day: recurrence rate (re-extractions per session), injection "
    "effectiveness (% of judged injections whose session succeeded), burst index (1 = steady), learning velocity "
    "(learnings per session), correction density (per active memory), knowledge decay (days): numbers on every "
    "partition's materialisation, so Dagster plots them by partition, and a table of complexity hotspots. "
    "Writes nothing.",
)
def metrics(context: dg.AssetExecutionContext, nous: NousResource) -> dg.MaterializeResult:
    from nous_assets.metrics.mining import UNITS, compute_series

    settings = nous.settings()
    days = sorted(context.partition_keys)
    reports = compute_series(settings.db_path, [partition_end(day) for day in days],
                             busy_timeout_ms=settings.db_busy_timeout_ms)  # fmt: skip
    units = ", ".join(f"{key}_pct: %" if unit == "%" else f"{key}: {unit}" for key, unit in UNITS.items())
    for day, report in zip(days, reports, strict=True):
        context.add_asset_metadata(
            {
                **figures(report),
                "as_of": dg.MetadataValue.text(report.as_of),
                "units": dg.MetadataValue.text(units),
                "hotspots": hotspot_table(report.hotspots),
            },
            partition_key=day,
        )
    return dg.MaterializeResult()

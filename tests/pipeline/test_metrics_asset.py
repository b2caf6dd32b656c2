"""The ``metrics`` asset over the shared corpus: one materialisation per day a run covers, with the numbers Dagster
plots."""

from __future__ import annotations

from datetime import date, timedelta

import dagster as dg

from nous_assets.metrics.mining import compute

PLOTTED = ("recurrence_rate", "burst_index", "learning_velocity_30d", "learning_velocity_all", "correction_density",
           "knowledge_decay_median_days", "sessions", "learnings", "active_memories")  # fmt: skip


def _materialisations(pipe) -> list[dg.AssetMaterialization]:
    """Every materialisation of ``metrics`` on the pipeline's instance, oldest first."""
    records = pipe.instance.fetch_materializations(dg.AssetKey("metrics"), limit=10_000).records
    return [r.asset_materialization for r in sorted(records, key=lambda r: r.storage_id)]


def _covered(results) -> set[str]:
    """Every day the backfill's ranged runs covered (a stretch of activity bridges short gaps: those days too)."""
    spans = [(date.fromisoformat(r.first), date.fromisoformat(r.last)) for r in results]
    return {(first + timedelta(n)).isoformat() for first, last in spans for n in range((last - first).days + 1)}


def test_metrics_asset_reports_numbers_per_day_and_a_hotspot_table(corpus_pipeline):
    every = _materialisations(corpus_pipeline)
    days = _covered(corpus_pipeline.results)
    assert set(corpus_pipeline.days()) <= days
    assert {m.partition for m in every} == days  # every day a run covered materialised it: a series over time
    mats = [next(m for m in every if m.partition == day) for day in sorted(days)]  # the backfill's own, by day
    latest = mats[-1].metadata
    for key in PLOTTED:
        assert isinstance(latest[key], (dg.FloatMetadataValue, dg.IntMetadataValue)), key
    as_of = latest["as_of"].value
    expected = corpus_pipeline.count(
        "SELECT count(*) FROM learning_events WHERE event_type = 'LearningExtracted' "
        "AND coalesce(valid_from, transaction_time) <= ?", as_of,
    )  # fmt: skip
    assert latest["learnings"].value == expected > 0
    assert latest["sessions"].value >= 2
    learnings = [m.metadata["learnings"].value for m in mats]
    assert learnings == sorted(learnings)  # taken as of each day's end: never fewer later
    assert [m.metadata["as_of"].value for m in mats] == sorted(m.metadata["as_of"].value for m in mats)
    table = latest["hotspots"]
    assert isinstance(table, dg.TableMetadataValue)  # a table in the UI, not markdown squeezed into one cell
    assert [c.name for c in table.schema.columns][:3] == ["project", "domain", "learnings"]
    report = compute(corpus_pipeline.settings.db_path, as_of=as_of)
    headline = report.headline
    assert {k: latest[k].value for k in PLOTTED} == {k: headline[k] for k in PLOTTED}
    assert [r.data["domain"] for r in table.records] == [h.domain for h in report.hotspots]
    if headline["injection_effectiveness"] is None:  # nothing judged: no percentage to plot
        assert "injection_effectiveness_pct" not in latest
    else:
        assert latest["injection_effectiveness_pct"].value == round(100 * headline["injection_effectiveness"], 1)
    assert "injection_effectiveness" not in latest  # the share is published as a percentage only

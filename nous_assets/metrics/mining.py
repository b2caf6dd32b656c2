"""Process mining over the event log and the access history, computed with DuckDB.

The spec's metrics ("Re-Learning Detection", "Process Mining Unlocked"), each from ``learning_events``
(live tier), ``memories`` and ``access_log`` as of a moment:

* **recurrence rate**: re-extractions of a learning (sessions beyond the first that learned it again) per
  session of its project since it was first learned; flagged above 15 %. Overall: re-extractions / sessions.
* **injection effectiveness**: injections whose session succeeded / injections judged.
* **burst index**: re-extractions per day in the last 7 days over the per-day rate of the last 30 (1.0 =
  steady; higher = a topic being struggled with now).
* **learning velocity**: new learnings per session (last 30 days; and per week for the last 12 weeks).
* **correction density**: ``LearningContradicted`` + ``LearningSuperseded`` events per active memory.
* **knowledge decay**: days since an active memory was last injected (or learned, if never).
* **complexity hotspots**: domains (per project) ranked by recurrence rate + correction density.

The tables reach DuckDB as Arrow streams built from Polars frames (see :mod:`nous_assets.store.reads.metrics_source`
for why DuckDB does not attach cortex.db itself). The SQL below runs on those frames, never on cortex.db.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from nous_assets.store.reads import consolidation
from nous_assets.store.reads import metrics_source as source
from nous_assets.store.reads.consolidation import Quality
from nous_assets.timeutil import parse_time

RECURRENCE_FLAG = 0.15  # the spec's "flag if > 15 %"
HOTSPOTS = 10

_SCHEMAS: dict[str, dict[str, Any]] = {
    "ev": {"event_id": pl.Int64, "learning_id": pl.Utf8, "event_type": pl.Utf8, "happened": pl.Utf8,
           "session_id": pl.Utf8, "project_id": pl.Utf8, "domain": pl.Utf8, "reason": pl.Utf8, "relearn": pl.Int64},
    "mem": {"id": pl.Int64, "learning_id": pl.Utf8, "project_id": pl.Utf8, "domain": pl.Utf8,
            "reinforcement_score": pl.Float64, "learned_at": pl.Utf8, "accessed_at": pl.Utf8, "valid_until": pl.Utf8,
            "contradiction_count": pl.Int64},
    "acc": {"memory_id": pl.Int64, "session_id": pl.Utf8, "was_useful": pl.Int64, "accessed_at": pl.Utf8,
            "source": pl.Utf8},
}  # fmt: skip


class _ArrowStream:
    """A Polars frame seen through the Arrow C stream interface only: DuckDB reads it without pyarrow."""

    def __init__(self, frame: pl.DataFrame) -> None:
        self.frame = frame

    def __arrow_c_stream__(self, requested_schema: Any = None) -> Any:
        return self.frame.__arrow_c_stream__(requested_schema)


@dataclass
class Hotspot:
    project_id: str
    domain: str
    learnings: int
    recurrence_rate: float
    correction_density: float
    burst_index: float
    score: float


@dataclass
class MetricsReport:
    """The figures (``headline``: one number each, what Dagster plots) and the tables behind them."""

    as_of: str
    headline: dict[str, float | int | None]
    hotspots: list[Hotspot] = field(default_factory=list)
    velocity_by_week: list[dict[str, Any]] = field(default_factory=list)
    flagged_learnings: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "as_of": self.as_of,
            "metrics": self.headline,
            "hotspots": [h.__dict__ for h in self.hotspots],
            "velocity_by_week": self.velocity_by_week,
            "flagged_learnings": self.flagged_learnings,
        }


def _frame(name: str, columns: source.Columns) -> pl.DataFrame:
    return pl.DataFrame(columns, schema=_SCHEMAS[name])


@contextlib.contextmanager
def _duck(frames: dict[str, pl.DataFrame], as_of: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """An in-memory DuckDB with the frames as tables (times as TIMESTAMP) and the views the metrics share."""
    con = duckdb.connect(":memory:")
    try:
        con.execute("SET threads = 1")  # small tables; leave the cores to the pipeline
        for name, frame in frames.items():
            con.register(f"{name}_in", _ArrowStream(frame))
            con.execute(f"CREATE TABLE {name}_raw AS SELECT * FROM {name}_in")
            con.unregister(f"{name}_in")
        con.execute("CREATE TABLE params AS SELECT CAST(? AS TIMESTAMP) AS as_of", [as_of.replace("Z", "")])
        for statement in _VIEWS:
            con.execute(statement)
        yield con
    finally:
        con.close()


_VIEWS = (
    # events that happened by as_of, with their time as a TIMESTAMP
    "CREATE VIEW ev AS SELECT * REPLACE (CAST(happened AS TIMESTAMP) AS happened) FROM ev_raw "
    "WHERE CAST(happened AS TIMESTAMP) <= (SELECT as_of FROM params)",
    # the projection as it stands, less what was learned after as_of; accessed_at (last reinforced or weakened)
    # only when that was by as_of
    "CREATE VIEW mem AS SELECT * REPLACE (CAST(learned_at AS TIMESTAMP) AS learned_at, "
    "CASE WHEN CAST(accessed_at AS TIMESTAMP) <= (SELECT as_of FROM params) THEN CAST(accessed_at AS TIMESTAMP) END "
    "AS accessed_at) FROM mem_raw WHERE CAST(learned_at AS TIMESTAMP) <= (SELECT as_of FROM params)",
    "CREATE VIEW acc AS SELECT * REPLACE (CAST(accessed_at AS TIMESTAMP) AS accessed_at) FROM acc_raw "
    "WHERE CAST(accessed_at AS TIMESTAMP) <= (SELECT as_of FROM params)",
    # a learning: its project, domain (from its extraction, else the memory), when first learned, in how many sessions
    """CREATE VIEW learning AS
       SELECT e.learning_id,
              arg_min(e.project_id, e.event_id) AS project_id,
              coalesce(max(e.domain) FILTER (WHERE e.event_type = 'LearningExtracted'), max(m.domain), 'unknown')
                  AS domain,
              coalesce(min(e.happened) FILTER (WHERE e.event_type = 'LearningExtracted'), min(e.happened)) AS first_at,
              count(DISTINCT e.session_id) FILTER (WHERE e.event_type = 'LearningExtracted' OR e.relearn = 1)
                  AS learned_in
       FROM ev e LEFT JOIN mem m USING (learning_id)
       GROUP BY e.learning_id""",
    # the sessions that learned something, per project, with when each first did
    """CREATE VIEW sess AS
       SELECT project_id, session_id, min(happened) AS first_at FROM ev
       WHERE event_type = 'LearningExtracted' OR relearn = 1 GROUP BY ALL""",
    """CREATE VIEW recurrence AS
       SELECT l.*, greatest(l.learned_in - 1, 0) AS re_extractions,
              (SELECT count(*) FROM sess s WHERE s.project_id = l.project_id AND s.first_at >= l.first_at)
                  AS sessions_since
       FROM learning l""",
    """CREATE VIEW recurrence_rate AS
       SELECT *, CASE WHEN sessions_since > 0 THEN re_extractions / sessions_since ELSE 0 END AS rate
       FROM recurrence""",
    # re-extractions (a learning learned again in another session), as events with a time
    """CREATE VIEW relearn AS
       SELECT e.*, l.domain AS learning_domain, l.project_id AS learning_project FROM ev e
       JOIN learning l USING (learning_id) WHERE e.relearn = 1""",
    "CREATE VIEW active AS SELECT * FROM mem WHERE valid_until IS NULL",
    """CREATE VIEW corrections AS
       SELECT e.*, l.domain AS learning_domain, l.project_id AS learning_project FROM ev e
       JOIN learning l USING (learning_id) WHERE e.event_type IN ('LearningContradicted', 'LearningSuperseded')""",
)


def _one(con: duckdb.DuckDBPyConnection, sql: str) -> Any:
    row = con.execute(sql).fetchone()
    return None if row is None else row[0]


def _rounded(value: Any, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def _headline(con: duckdb.DuckDBPyConnection) -> dict[str, float | int | None]:
    sessions = _one(con, "SELECT count(DISTINCT session_id) FROM sess") or 0
    re_total = _one(con, "SELECT coalesce(sum(re_extractions), 0) FROM recurrence") or 0
    injected, judged, helped = con.execute(
        "SELECT count(*), count(was_useful), coalesce(sum(was_useful), 0) FROM acc "
        "WHERE coalesce(source, '') <> 'feedback'"
    ).fetchone()
    n7, n30 = con.execute(
        "SELECT count(*) FILTER (WHERE happened > (SELECT as_of FROM params) - INTERVAL 7 DAY), "
        "count(*) FILTER (WHERE happened > (SELECT as_of FROM params) - INTERVAL 30 DAY) FROM relearn"
    ).fetchone()
    new30, sess30 = con.execute(
        "SELECT count(*) FILTER (WHERE event_type = 'LearningExtracted'), "
        "count(DISTINCT session_id) FILTER (WHERE event_type = 'LearningExtracted' OR relearn = 1) FROM ev "
        "WHERE happened > (SELECT as_of FROM params) - INTERVAL 30 DAY"
    ).fetchone()
    new_all = _one(con, "SELECT count(*) FROM ev WHERE event_type = 'LearningExtracted'") or 0
    active = _one(con, "SELECT count(*) FROM active") or 0
    corrections = _one(con, "SELECT count(*) FROM corrections") or 0
    decay = con.execute(
        "WITH last AS (SELECT a.id, greatest(max(x.accessed_at), a.accessed_at, a.learned_at) AS seen, "
        "count(x.memory_id) AS injections "
        "FROM active a LEFT JOIN acc x ON x.memory_id = a.id GROUP BY a.id, a.accessed_at, a.learned_at) "
        "SELECT quantile_cont(date_diff('second', seen, (SELECT as_of FROM params)) / 86400.0, 0.5), "
        "quantile_cont(date_diff('second', seen, (SELECT as_of FROM params)) / 86400.0, 0.9), "
        "count(*) FILTER (WHERE injections = 0) FROM last"
    ).fetchone()
    flagged = _one(con, f"SELECT count(*) FROM recurrence_rate WHERE rate > {RECURRENCE_FLAG}") or 0
    return {
        "sessions": int(sessions),
        "learnings": int(new_all),
        "active_memories": int(active),
        "re_extractions": int(re_total),
        "recurrence_rate": _rounded(re_total / sessions) if sessions else 0.0,
        "learnings_flagged_recurrent": int(flagged),
        "injections": int(injected),
        "injections_judged": int(judged),
        "injection_effectiveness": _rounded(helped / judged) if judged else None,
        "burst_index": _rounded((n7 / 7) / (n30 / 30)) if n30 else 0.0,
        "learning_velocity_30d": _rounded(new30 / sess30) if sess30 else 0.0,
        "learning_velocity_all": _rounded(new_all / sessions) if sessions else 0.0,
        "correction_density": _rounded(corrections / active) if active else 0.0,
        "corrections": int(corrections),
        "knowledge_decay_median_days": _rounded(decay[0], 1),
        "knowledge_decay_p90_days": _rounded(decay[1], 1),
        "memories_never_injected": int(decay[2] or 0),
    }


def _consolidation(quality: Quality) -> dict[str, float | int | None]:
    """Seed 003's CX15 figures (:func:`nous_assets.store.reads.consolidation.quality`): observations held;
    precision (observations at least 30 days old that a packet or recall used within 30 days of forming, over
    those); contradiction rate (observations ever contradicted, over all formed); retrieval lift (accesses per
    observation over accesses per member); stability (one minus how far their reinforcement moved)."""
    return {
        "observations": quality.active,
        "observation_precision_30d": quality.precision,
        "observation_contradiction_rate": quality.contradiction_rate,
        "observation_retrieval_lift": quality.lift,
        "observation_stability": quality.stability,
    }


_HOTSPOT_SQL = f"""
WITH d AS (
    SELECT project_id, domain, count(*) AS learnings, avg(rate) AS recurrence_rate
    FROM recurrence_rate GROUP BY ALL
), c AS (
    SELECT learning_project AS project_id, learning_domain AS domain, count(*) AS corrections
    FROM corrections GROUP BY ALL
), a AS (
    SELECT project_id, domain, count(*) AS active FROM active GROUP BY ALL
), b AS (
    SELECT learning_project AS project_id, learning_domain AS domain,
           count(*) FILTER (WHERE happened > (SELECT as_of FROM params) - INTERVAL 7 DAY) AS n7,
           count(*) FILTER (WHERE happened > (SELECT as_of FROM params) - INTERVAL 30 DAY) AS n30
    FROM relearn GROUP BY ALL
)
SELECT d.project_id, d.domain, d.learnings, d.recurrence_rate,
       coalesce(c.corrections, 0) / greatest(coalesce(a.active, 0), 1) AS correction_density,
       CASE WHEN coalesce(b.n30, 0) > 0 THEN (b.n7 / 7.0) / (b.n30 / 30.0) ELSE 0 END AS burst_index
FROM d LEFT JOIN c USING (project_id, domain) LEFT JOIN a USING (project_id, domain)
       LEFT JOIN b USING (project_id, domain)
ORDER BY d.recurrence_rate + correction_density DESC, d.learnings DESC, d.project_id, d.domain
LIMIT {HOTSPOTS}
"""


def _hotspots(con: duckdb.DuckDBPyConnection) -> list[Hotspot]:
    out = []
    for project_id, domain, learnings, rec, dens, burst in con.execute(_HOTSPOT_SQL).fetchall():
        rec, dens = round(float(rec or 0), 4), round(float(dens or 0), 4)
        out.append(Hotspot(project_id, domain, int(learnings), rec, dens, round(float(burst), 4), round(rec + dens, 4)))
    return [h for h in out if h.score > 0]


def _velocity(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    rows = con.execute(
        "SELECT date_trunc('week', happened) AS week, "
        "count(*) FILTER (WHERE event_type = 'LearningExtracted') AS learnings, "
        "count(DISTINCT session_id) AS sessions FROM ev WHERE (event_type = 'LearningExtracted' OR relearn = 1) "
        "AND happened > (SELECT as_of FROM params) - INTERVAL 84 DAY GROUP BY 1 ORDER BY 1"
    ).fetchall()
    return [
        {"week": week.date().isoformat(), "learnings": int(n), "sessions": int(s),
         "per_session": round(n / s, 4) if s else 0.0}  # fmt: skip
        for week, n, s in rows
    ]


def _flagged(con: duckdb.DuckDBPyConnection, limit: int = 20) -> list[dict[str, Any]]:
    rows = con.execute(
        f"SELECT learning_id, project_id, domain, re_extractions, sessions_since, rate FROM recurrence_rate "
        f"WHERE rate > {RECURRENCE_FLAG} ORDER BY rate DESC, re_extractions DESC, learning_id LIMIT {limit}"
    ).fetchall()
    keys = ("learning_id", "project_id", "domain", "re_extractions", "sessions_since", "rate")
    return [dict(zip(keys, (*r[:5], round(float(r[5]), 4)), strict=True)) for r in rows]


def compute(db_path: Path, *, as_of: str | None = None, busy_timeout_ms: int = 30_000) -> MetricsReport:
    """Every metric over cortex.db (read-only) as of ``as_of`` (ISO time; default now)."""
    return compute_series(db_path, [as_of], busy_timeout_ms=busy_timeout_ms)[0]


def compute_series(
    db_path: Path, moments: Sequence[str | None], *, busy_timeout_ms: int = 30_000
) -> list[MetricsReport]:
    """One report per moment (ISO time, None: now), the database read once: a ranged run reports every day of
    its range as of that day's end (a series Dagster plots by partition) for the price of one read."""
    stamps = [(parse_time(m) if m else datetime.now(UTC)).strftime("%Y-%m-%dT%H:%M:%S.%fZ") for m in moments]
    with source.read_only(db_path, busy_timeout_ms) as conn:
        frames = {
            "ev": _frame("ev", source.events(conn)),
            "mem": _frame("mem", source.memories(conn)),
            "acc": _frame("acc", source.accesses(conn)),
        }
        qualities = [consolidation.quality(conn, stamp) for stamp in stamps]
    reports = []
    with _duck(frames, stamps[0]) as con:
        for stamp, quality in zip(stamps, qualities, strict=True):
            con.execute("UPDATE params SET as_of = CAST(? AS TIMESTAMP)", [stamp.replace("Z", "")])
            reports.append(MetricsReport(
                as_of=stamp,
                headline=_consolidation(quality) | _headline(con),
                hotspots=_hotspots(con),
                velocity_by_week=_velocity(con),
                flagged_learnings=_flagged(con),
            ))
    return reports


UNITS = {
    "recurrence_rate": "re-extractions per session",
    "injection_effectiveness": "%",
    "observation_precision_30d": "%",
    "observation_contradiction_rate": "%",
    "observation_retrieval_lift": "x (1 = as found as its members)",
    "burst_index": "x (1 = steady)",
    "learning_velocity_30d": "learnings per session",
    "learning_velocity_all": "learnings per session",
    "correction_density": "per active memory",
    "knowledge_decay_median_days": "days",
    "knowledge_decay_p90_days": "days",
}
"""The unit of each figure that is not a plain count; a share (``%``) is shown as a percentage."""


def as_percent(value: float | None) -> float | None:
    """A share in [0, 1] as a percentage, one decimal (what people read: 66.7 %, not 0.667)."""
    return None if value is None else round(100.0 * value, 1)

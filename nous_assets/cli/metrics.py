"""``nous metrics``: process-mining figures over the event log and access history."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING

from nous_assets.cli.common import AddCommand
from nous_assets.settings import Settings

if TYPE_CHECKING:
    from nous_assets.metrics.mining import MetricsReport

_LABELS = (
    ("recurrence_rate", "recurrence rate", "re-extractions per session (a learning recurring in >15% is flagged)"),
    ("learnings_flagged_recurrent", "flagged recurrent", "learnings re-extracted in more than 15% of sessions"),
    ("injection_effectiveness", "injection effectiveness", "% of judged injections whose session succeeded"),
    ("burst_index", "burst index", "re-extractions/day, last 7 days vs last 30 (1 = steady)"),
    ("learning_velocity_30d", "learning velocity (30d)", "new learnings per session, last 30 days"),
    ("learning_velocity_all", "learning velocity (all)", "new learnings per session, whole live log"),
    ("correction_density", "correction density", "contradictions + supersessions per active memory"),
    ("knowledge_decay_median_days", "knowledge decay (median)", "days since an active memory was last injected"),
    ("knowledge_decay_p90_days", "knowledge decay (p90)", "days, 90th percentile"),
    ("memories_never_injected", "never injected", "active memories no session was given yet"),
    ("sessions", "sessions", "sessions that learned something"),
    ("learnings", "learnings", "LearningExtracted events"),
    ("active_memories", "active memories", "memories whose validity is open"),
    ("injections", "injections", "memories injected into sessions (judged: see below)"),
    ("injections_judged", "injections judged", "injections whose session outcome is known"),
)

_HOTSPOT_HEAD = (("project", 34, "<"), ("domain", 16, "<"), ("learnings", 10, ">"), ("recur.", 9, ">"),
                 ("corr.", 9, ">"), ("burst", 8, ">"), ("score", 8, ">"))  # fmt: skip


def _value(v: object) -> str:
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:,.3f}"
    return f"{v:,}" if isinstance(v, int) else str(v)


def _with_unit(key: str, v: object) -> str:
    """A figure with its unit: a share as a percentage ("66.7 %"), days as "d", other figures as they are."""
    from nous_assets.metrics.mining import UNITS, as_percent

    unit = UNITS.get(key)
    if v is None or unit is None or not isinstance(v, float | int):
        return _value(v) + "  "
    if unit == "%":
        return f"{as_percent(float(v)):.1f} %"
    if unit == "days":
        return f"{v:,.1f} d"
    return _value(v) + "  "


def render(report: MetricsReport) -> str:
    """The readable table ``nous metrics`` prints."""
    lines = [f"process metrics as of {report.as_of[:19]}Z (live event log, access log, projection)", ""]
    for key, label, meaning in _LABELS:
        lines.append(f"  {label:<27}{_with_unit(key, report.headline.get(key)):>14}   {meaning}")
    lines += ["", "complexity hotspots (recurrence rate + correction density, by project and domain):"]
    if not report.hotspots:
        lines.append("  none: nothing recurs and nothing was corrected")
    else:
        lines.append("  " + "".join(f"{name:{align}{width}}" for name, width, align in _HOTSPOT_HEAD))
        for h in report.hotspots:
            lines.append(f"  {h.project_id[-34:]:<34}{h.domain[:15]:<16}{h.learnings:>10}{h.recurrence_rate:>9.3f}"
                         f"{h.correction_density:>9.3f}{h.burst_index:>8.2f}{h.score:>8.3f}")  # fmt: skip
    if report.velocity_by_week:
        lines += ["", "learning velocity by week (new learnings / sessions):"]
        for w in report.velocity_by_week:
            lines.append(f"  {w['week']}  {w['learnings']:>5} / {w['sessions']:<4} = {w['per_session']:.2f}")
    return "\n".join(lines)


def cmd_metrics(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.errors import NousError
    from nous_assets.metrics.mining import compute

    if not settings.db_path.is_file():
        raise NousError(f"no database at {settings.db_path}; run `nous init` first")
    try:
        report = compute(settings.db_path, as_of=args.as_of, busy_timeout_ms=settings.db_busy_timeout_ms)
    except ValueError as exc:
        raise NousError(f"--as-of: {exc}") from None
    print(json.dumps(report.as_dict(), indent=2) if args.json else render(report))
    return 0


def register(add: AddCommand) -> None:
    p = add(
        "metrics",
        cmd_metrics,
        "Process mining over the event log and access history (read-only, DuckDB): recurrence rate, injection "
        "effectiveness, burst index, learning velocity, correction density, knowledge decay and complexity hotspots.",
    )
    p.add_argument("--as-of", metavar="T", help="compute as of this ISO time (default now): later events are ignored")
    p.add_argument(
        "--json", action="store_true", help="print JSON (metrics, hotspots, weekly velocity, flagged learnings)"
    )

"""The ``nous`` command: set up, inspect and operate the memory store.

Every command reads the same :class:`~nous_assets.settings.Settings`; user-facing failures
(:class:`~nous_assets.errors.NousError`) print one ``nous: error: …`` line and exit non-zero
instead of a traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from nous_assets.errors import ConfigError, NousError
from nous_assets.filemodes import restrict_umask
from nous_assets.settings import Settings, load_settings

EXIT_ERROR = 1
EXIT_CONFIG = 2


class Progress:
    """A one-line progress report on stderr (only redrawn on a terminal)."""

    def __init__(self, label: str, total: int | None = None, stream=None) -> None:
        self.label, self.total = label, total
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.tty = self.stream.isatty()
        self._last = 0.0

    def update(self, done: int, extra: str = "") -> None:
        now = time.monotonic()
        if not self.tty or now - self._last < 0.2:
            return
        self._last = now
        rate = done / max(now - self.start, 1e-9)
        pct = f" {100 * done / self.total:5.1f}%" if self.total else ""
        self.stream.write(
            f"\r{self.label}: {done:,}{'/' + format(self.total, ',') if self.total else ''}{pct} "
            f"({rate:,.0f}/s) {extra}\x1b[K"
        )
        self.stream.flush()

    def done(self, summary: str) -> None:
        if self.tty:
            self.stream.write("\r\x1b[K")
        self.stream.write(f"{self.label}: {summary} in {time.monotonic() - self.start:.1f}s\n")


def _policy(settings: Settings):
    from nous_assets.store.projection import Policy

    t = settings.thresholds
    return Policy(
        initial_reinforcement=t.initial_reinforcement,
        superseded_multiplier=t.superseded_multiplier,
        default_contradiction_multiplier=t.contradiction_multiplier,
    )


def _open(settings: Settings, *, create: bool = False):
    from nous_assets.store.db import open_db

    return open_db(
        settings.db_path, create=create, migrate_schema=create, busy_timeout_ms=settings.db_busy_timeout_ms
    )


def cmd_init(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.filemodes import make_private_dir
    from nous_assets.store.db import LATEST_VERSION, connect, migrate

    make_private_dir(settings.data_dir)
    make_private_dir(settings.archive_dir)
    conn = connect(settings.db_path, create=True, busy_timeout_ms=settings.db_busy_timeout_ms)
    try:
        applied = migrate(conn)
    finally:
        conn.close()
    what = f"applied migrations {applied}" if applied else "schema already up to date"
    print(f"initialised {settings.db_path} (schema version {LATEST_VERSION}; {what})")
    tightened = _tighten_private(settings)
    if tightened:
        print(f"made {tightened} file(s)/dir(s) left readable by others by an older version private (0600/0700)")
    return 0


def _tighten_private(settings: Settings) -> int:
    """Remove group/other access from everything Nous keeps (data dir, database, archive)."""
    from nous_assets.filemodes import database_files, tighten

    return tighten([settings.data_dir, settings.archive_dir, *database_files(settings.db_path)])


def status_report(settings: Settings) -> dict[str, Any]:
    from nous_assets.store.db import LATEST_VERSION, connect, schema_version, table_counts
    from nous_assets.store.projector import get_checkpoint

    report: dict[str, Any] = {
        "db_path": str(settings.db_path),
        "data_dir": str(settings.data_dir),
        "config_file": str(settings.config_path),
        "project_glob": settings.project_glob,
        "supported_schema_version": LATEST_VERSION,
    }
    if not settings.db_path.exists():
        report["initialised"] = False
        return report
    conn = connect(settings.db_path, busy_timeout_ms=settings.db_busy_timeout_ms)
    try:
        version = schema_version(conn)
        report.update(initialised=version > 0, schema_version=version)
        if version == LATEST_VERSION:
            last = conn.execute("SELECT coalesce(max(event_id), 0) FROM learning_events").fetchone()[0]
            checkpoint = get_checkpoint(conn)
            report.update(
                counts=table_counts(conn),
                last_event_id=last,
                projection_checkpoint=checkpoint,
                projection_lag=last - checkpoint,
            )
    finally:
        conn.close()
    return report


def cmd_status(settings: Settings, args: argparse.Namespace) -> int:
    report = status_report(settings)
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"database:        {report['db_path']}")
    if not report.get("initialised"):
        print("                 (not initialised — run `nous init`)")
        return 0
    print(f"schema version:  {report['schema_version']} (this build: {report['supported_schema_version']})")
    if report["schema_version"] < report["supported_schema_version"]:
        print("                 (older schema — run `nous init` to upgrade)")
        return 0
    print(f"data dir:        {report['data_dir']}")
    print(f"config file:     {report['config_file']}")
    print(f"transcripts:     {report['project_glob']}")
    print(
        f"events:          {report['last_event_id']:,} (projected through {report['projection_checkpoint']:,}, "
        f"lag {report['projection_lag']:,})"
    )
    print("tables:")
    for name, count in report["counts"].items():
        print(f"  {name:<26}{count:>12,}")
    return 0


def cmd_project(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store.projector import project

    conn = _open(settings)
    try:
        bar = Progress("project")
        stats = project(conn, policy=_policy(settings), progress=lambda s: bar.update(s.events))
        bar.done(f"{stats.events:,} events, {stats.upserted:,} memories written, {stats.deleted:,} archived")
    finally:
        conn.close()
    return 0


def cmd_replay(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store.projector import rebuild, verify

    conn = _open(settings)
    try:
        if args.verify:
            report = verify(conn, policy=_policy(settings), scratch_dir=settings.data_dir)
            print(
                f"replayed {report.events_replayed:,} events (through event {report.checkpoint:,}) into a scratch "
                f"database: {report.memories:,} memories"
            )
            if report.ok:
                print("OK: the live projection equals a full replay")
                return 0
            print(f"MISMATCH: {len(report.differences)} difference(s) between live projection and replay:")
            for line in report.differences:
                print(f"  {line}")
            return EXIT_ERROR
        bar = Progress("replay")
        stats = rebuild(conn, policy=_policy(settings), progress=lambda s: bar.update(s.events))
        bar.done(f"rebuilt projection from {stats.events:,} events ({stats.orphans:,} ignored)")
    finally:
        conn.close()
    return 0


def cmd_memories(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store.temporal import query_memories

    conn = _open(settings)
    try:
        try:
            memories = query_memories(
                conn, as_of=args.as_of, as_at=args.as_at, project_id=_canonical(conn, args.project),
                policy=_policy(settings),
            )  # fmt: skip
        except ValueError as exc:
            raise NousError(str(exc)) from None
    finally:
        conn.close()
    memories.sort(key=lambda m: (-m.reinforcement_score, -m.id))
    shown = memories[: args.limit] if args.limit else memories
    if args.json:
        print(
            json.dumps(
                [
                    {**{k: getattr(m, k) for k in m.__slots__ if k != "concepts"}, "concepts": sorted(m.concepts)}
                    for m in shown
                ],
                indent=2,
            )
        )
        return 0
    for m in shown:
        window = f"{(m.valid_from or '?')[:10]} → {(m.valid_until or 'now')[:10]}"
        print(
            f"#{m.id} [{m.type}/{m.kind or '-'}] score={m.reinforcement_score:.2f} valid {window} "
            f"project={m.project_id}"
        )
        print(f"    {m.content}")
        if m.concepts:
            print(f"    concepts: {', '.join(sorted(m.concepts))}")
    print(f"{len(shown)} of {len(memories)} memories", file=sys.stderr)
    return 0


def _window(settings: Settings, args: argparse.Namespace):
    """The requested [start, end] days, clipped to ``partition_start`` (with a note)."""
    from datetime import UTC, date, datetime

    from nous_assets.defs.backfill import parse_since

    today = datetime.now(UTC).date()
    try:
        start = date.fromisoformat(args.from_date) if args.from_date else parse_since(args.since, today)
        end = date.fromisoformat(args.to_date) if args.to_date else today
    except ValueError as exc:
        raise NousError(f"bad date: {exc}") from None
    if end < start:
        raise NousError(f"--to {end} is before the start {start}")
    first = date.fromisoformat(settings.partition_start)
    if start < first:
        print(f"note: days before partition_start {first} are not ingested (set NOUS_PARTITION_START or "
              "config 'partition_start' to go further back)", file=sys.stderr)
        start = first
    return start, end


def _backfill_days(settings: Settings, args: argparse.Namespace) -> list[str]:
    from nous_assets.defs.backfill import activity_days

    start, end = _window(settings, args)
    return activity_days(settings, start, end) if start <= end else []


class RunProgress:
    """Turns a ranged run's events into the progress line (on a terminal) or one line per step (in a log).

    Progress counts day-steps: every step of the run covers every day of the range; the transcripts step
    reports each day as it finishes it. Warnings and errors of the run are always printed on their own line.
    """

    def __init__(self, label: str, days: int, steps: int, stream=None) -> None:
        self.label, self.days, self.steps = label, days, steps
        self.bar = Progress(label, total=days * steps, stream=stream)
        self.finished = self.day_logs = 0
        self.step = ""

    def _line(self, text: str) -> None:
        stream = self.bar.stream
        if self.bar.tty:
            stream.write("\r\x1b[K")
        stream.write(f"{self.label}: {text}\n")
        stream.flush()

    def __call__(self, event) -> None:
        import logging

        if event.kind == "start":
            self.step, self.day_logs = event.step, 0
        elif event.kind == "done":
            self.finished += 1
            self.day_logs = 0
            if not self.bar.tty:
                self._line(f"step {self.finished}/{self.steps} {event.step} done")
        elif event.kind == "failed":
            self._line(f"step {event.step} failed: {event.message.splitlines()[-1] if event.message else ''}")
        elif event.level >= logging.WARNING:
            self._line(f"{event.step}: {event.message}")
        else:
            self.day_logs = min(self.day_logs + 1, self.days)
        self.bar.update(
            self.finished * self.days + self.day_logs,
            f"step {min(self.finished + 1, self.steps)}/{self.steps} {self.step}",
        )

    def done(self, summary: str) -> None:
        self.bar.done(summary)


def _older_history_note(settings: Settings, before) -> str | None:
    """'older history: …' when transcripts have activity before ``before`` that was never ingested."""
    from nous_assets.defs.backfill import older_history

    older = older_history(settings, before)
    if not older:
        return None
    return (
        f"older history: {len(older)} day(s) with transcript activity from {older[0]} to {older[-1]} not "
        f"ingested; take it with `nous backfill --since {older[0]}`"
    )


def _ingest_range(settings: Settings, days: list[str], *, label: str, source: str = "historical_backfill") -> int:
    """Ingest ``days`` in the persistent instance: one run per stretch of activity (one run for a week of
    daily sessions), each with a progress display and a summary; non-zero when anything failed."""
    import dagster as dg

    from nous_assets.defs.backfill import job_steps, stretches
    from nous_assets.defs.instance import ensure_dagster_home
    from nous_assets.defs.runs import reap_dead_runs

    home, backup = ensure_dagster_home(settings)
    if backup is not None:
        print(f"{label}: {home / 'dagster.yaml'} now follows the repo's dagster.yaml (previous one: {backup})")
    ranges = stretches(days)
    started = time.monotonic()
    totals = {"turns": 0, "learnings": 0, "failed_days": 0, "failed_runs": 0}
    with dg.DagsterInstance.get() as instance:
        for run_id in reap_dead_runs(instance):
            print(f"{label}: run {run_id[:8]} had lost its process; marked failed (its days are ingested again)")
        steps = job_steps()
        for i, (first, last) in enumerate(ranges, 1):
            name = label if len(ranges) == 1 else f"{label} {i}/{len(ranges)}"
            result = _ingest_stretch(instance, [d for d in days if first <= d <= last], name, source, steps)
            totals["turns"] += result.turns
            totals["learnings"] += result.learnings
            totals["failed_days"] += len(result.failed_days)
            totals["failed_runs"] += not result.success
    if len(ranges) > 1:
        print(
            f"{label}: {len(days)} day(s) with activity from {days[0]} to {days[-1]} in {len(ranges)} runs: "
            f"{totals['turns']:,} turns, {totals['learnings']:,} learnings, {totals['failed_runs']} failed run(s), "
            f"{totals['failed_days']} failed day(s) in {time.monotonic() - started:.1f}s",
            file=sys.stderr,
        )
    return EXIT_ERROR if totals["failed_runs"] or totals["failed_days"] else 0


def _ingest_stretch(instance, days: list[str], label: str, source: str, steps: int):
    """One ranged run over ``days[0]..days[-1]``, shown as it goes and summarised."""
    from datetime import date

    from nous_assets.defs.backfill import run_range
    from nous_assets.defs.runs import cancel_superseded

    first, last = days[0], days[-1]
    superseded = cancel_superseded(instance, first, last)
    if superseded:
        print(f"{label}: canceled {len(superseded)} queued run(s) of days this run covers")
    span = (date.fromisoformat(last) - date.fromisoformat(first)).days + 1
    progress = RunProgress(label, span, steps)
    result = run_range(first, last, instance=instance, source=source, on_event=progress)
    what = f"{len(days)} day(s) with activity, {first}..{last} in one run ({result.run_id[:8]})"
    if not result.success:
        progress.done(f"{what} FAILED in step {result.failed_step or '?'}: {result.error}")
        print(
            f"{label}: nothing is lost: what the run finished is kept and file cursors only advance after "
            f"extraction; run `nous backfill --from {first} --to {last}` again to finish (idempotent)",
            file=sys.stderr,
        )
        return result
    progress.done(
        f"{what}: {result.turns:,} turns, {result.learnings:,} learnings, {len(result.failed_days)} failed day(s)"
    )
    for day, error in sorted(result.failed_days.items()):
        print(f"{label}: {day} not ingested: {error} (its files keep their cursors: the next run retries it)",
              file=sys.stderr)
    return result


def _record_floor(settings: Settings, first, last) -> None:
    """The watch sensor's window now reaches down to ``first`` (see :mod:`nous_assets.store.floor`)."""
    from nous_assets.defs.resources import open_pipeline_db
    from nous_assets.store.floor import lower_floor

    conn = open_pipeline_db(settings)  # like a run: refuses to recreate a cortex.db that vanished
    try:
        lower_floor(conn, first.isoformat(), last.isoformat())
    finally:
        conn.close()


def _backfill(settings: Settings, start, end, *, label: str) -> int:
    """Backfill [start, end]: extend the watched window, ingest the activity days, mention older history."""
    from nous_assets.defs.backfill import activity_days

    _record_floor(settings, start, end)
    days = activity_days(settings, start, end)
    older = _older_history_note(settings, start)
    if not days:
        where = f"between {start} and {end}" if older else f"in that range ({settings.project_glob})"
        print(f"{label}: no transcript activity {where}")
        status = 0
    else:
        status = _ingest_range(settings, days, label=label)
    if older:
        print(older)
    return status


def cmd_backfill(settings: Settings, args: argparse.Namespace) -> int:
    start, end = _window(settings, args)
    return _backfill(settings, start, end, label="backfill")


def cmd_reextract(settings: Settings, args: argparse.Namespace) -> int:
    from dataclasses import replace

    from nous_assets.extract.registry import get_extractor

    current = get_extractor(settings).version
    if args.to_version and args.to_version != current:
        raise NousError(
            f"--to-version {args.to_version} is not the configured extractor ({current}); "
            "set NOUS_EXTRACTOR / config 'extractor' first"
        )
    if not settings.reextract_on_version_change:
        raise NousError(
            "re-extraction emits compensating events and must be enabled explicitly: "
            "set NOUS_REEXTRACT_ON_VERSION_CHANGE=true"
        )
    days = _backfill_days(settings, args)
    settings = replace(settings, reextract_on_version_change=True)
    if not days:
        print(f"reextract: no transcript activity in that range ({settings.project_glob})")
        return 0
    return _ingest_range(settings, days, label="reextract")


def cmd_migrate_legacy(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.capture.legacy import migrate_legacy

    paths = [Path(p).expanduser() for p in args.paths]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        raise NousError(f"no such file: {', '.join(missing)}")
    conn = _open(settings, create=True)
    try:
        report = migrate_legacy(conn, paths)
        from nous_assets.store.projector import project

        project(conn, policy=_policy(settings))
    finally:
        conn.close()
    print(
        f"imported {report.imported:,} legacy entries ({report.already_present:,} already present), "
        f"{len(report.quarantined):,} quarantined"
    )
    if report.quarantined:
        qdir = settings.data_dir / "quarantine"
        qdir.mkdir(parents=True, exist_ok=True)
        qfile = qdir / "legacy.jsonl"
        with qfile.open("a", encoding="utf-8") as fh:
            for q in report.quarantined:
                fh.write(json.dumps(q) + "\n")
        for q in report.quarantined[:10]:
            print(f"  {q['file']}:{q['line']}: {q['reason']}", file=sys.stderr)
        print(f"quarantined lines recorded in {qfile}", file=sys.stderr)
    return 0


def cmd_queue(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.store import queue

    conn = _open(settings)
    try:
        if args.retry_dead:
            n = queue.requeue_dead_letter(conn)
            print(f"re-queued {n} dead-lettered item(s)")
        counts = queue.counts(conn)
        print(
            "ingest queue: " + ", ".join(f"{k}={v}" for k, v in sorted(counts.items()))
            if counts
            else "ingest queue: empty"
        )
        for item in queue.items(conn, status="dead_letter", limit=20) + queue.items(conn, status="failed", limit=20):
            print(
                f"  #{item.ingest_id} {item.status} tries={item.retry_count} {item.transcript_path} "
                f"({item.payload.get('date')}): {item.last_error}"
            )
    finally:
        conn.close()
    return 0


def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve
    from nous_assets.store import transcript_chunks

    embedder = None
    if not args.fts_only:
        from nous_assets.embed.registry import get_embedder

        try:
            embedder = get_embedder(settings)
        except NousError as exc:
            print(f"nous: vectors unavailable ({exc}); searching text, concepts and graph only", file=sys.stderr)
    conn = _open(settings)
    try:
        try:
            query = Query.from_text(
                args.query, project_id=_canonical(conn, args.project), as_at=args.as_at,
                include_expired=args.include_expired,
            )  # fmt: skip
        except ValueError as exc:
            raise NousError(str(exc)) from None
        results = retrieve(
            conn,
            query,
            settings,
            embedder=embedder,
            k=args.k,
            explain=args.explain,
            include_episodes=not args.no_episodes,
        )
        sources = {r.key: transcript_chunks.source_line(conn, r.id) or "?" for r in results if r.is_episode}
    finally:
        conn.close()
    if args.json:
        print(
            json.dumps(
                [
                    {
                        **{
                            k: getattr(r, k)
                            for k in (
                                "memory_id",
                                "content",
                                "score",
                                "type",
                                "kind",
                                "project_id",
                                "valid_from",
                                "valid_until",
                            )
                        },
                        "episodic": r.is_episode,
                        "breakdown": r.breakdown,
                        "source": sources.get(r.key),
                    }
                    for r in results
                ],
                indent=2,
            )
        )
        return 0
    if not results:
        print("no matching memories")
    for r in results:
        when = (r.valid_from or r.created_at or "")[:10]
        if r.is_episode:
            print(f"[episode · {r.kind} · {when}] score={r.score:.3f} project={r.project_id}  {sources[r.key]}")
        else:
            print(f"#{r.memory_id} [{r.type}/{r.kind or '-'} · {when}] score={r.score:.3f} project={r.project_id}")
        print(f"    {' '.join(r.content.split())[:400]}")
        if args.explain:
            from nous_assets.retrieve.explain import explain_lines

            half_life = settings.thresholds.recency_half_life_days
            print("\n".join(explain_lines(r, now=query.now, half_life_days=half_life)))
    return 0


def cmd_bench(settings: Settings, args: argparse.Namespace) -> int:
    import tempfile
    import time as _time

    stamp = _time.strftime("%Y%m%d-%H%M%S")
    results_dir = Path(args.out_dir)
    if args.bench == "retrieval":
        from nous_assets.bench.retrieval import run

        if not Path(args.locomo).is_file():
            raise NousError(f"no such LoCoMo file: {args.locomo}")
        work = Path(args.workdir or tempfile.mkdtemp(prefix="nous-locomo-"))
        run(
            Path(args.locomo),
            args.k,
            work,
            results_dir / f"retrieval-{stamp}.json",
            log=lambda m: print(m, file=sys.stderr),
        )
        return 0
    if args.bench == "memories":
        from nous_assets.bench.memories import run as run_memories

        if not args.gold or not args.transcripts:
            raise NousError("bench memories needs --gold FILE and --transcripts DIR")
        run_memories(
            Path(args.gold), Path(args.transcripts), results_dir, workdir=Path(args.workdir) if args.workdir else None
        )
        return 0
    if args.bench == "hooks":
        from nous_assets.bench.hooks import run as run_hooks

        run_hooks(
            results_dir / "benchmark.json",
            starts=args.starts,
            sizes=args.sizes,
            workdir=Path(args.workdir) if args.workdir else None,
        )
        return 0
    from nous_assets.bench.search import run as run_search

    run_search(
        results_dir / f"search-{stamp}.json",
        sizes=args.sizes,
        queries=args.queries,
        workdir=Path(args.workdir) if args.workdir else None,
    )
    return 0


def cmd_feedback(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.reconcile.outcomes import feedback_event
    from nous_assets.store.projector import project

    conn = _open(settings)
    try:
        try:
            event = feedback_event(
                conn, args.memory_id, args.signal, session_id=args.session, thresholds=settings.thresholds
            )
        except LookupError as exc:
            raise NousError(str(exc)) from None
        project(conn, policy=_policy(settings))
        score = conn.execute("SELECT reinforcement_score FROM memories WHERE id = ?", (args.memory_id,)).fetchone()
    finally:
        conn.close()
    what = f"{event.event_type} (event #{event.event_id})" if event else "logged (no score change)"
    print(f"memory #{args.memory_id}: {args.signal} -> {what}; reinforcement now {score[0]:.2f}")
    return 0


def _review_line(text: str, limit: int = 0) -> str:
    """Terminal-safe one line: control characters (escape sequences) and credentials out, whitespace collapsed."""
    from nous_assets.capture.redact import redact
    from nous_assets.safety.guard import normalize

    line = " ".join(redact(normalize(text)).split())
    return line if not limit or len(line) <= limit else line[: limit - 1] + "…"


def _review_list(conn, args: argparse.Namespace) -> int:
    from nous_assets.safety.review import refresh_holds
    from nous_assets.store import holds

    refresh_holds(conn)
    statuses = (holds.HELD, holds.APPROVED) if args.all else (holds.HELD,)
    items = holds.listing(conn, statuses=statuses, project_id=_canonical(conn, args.project))
    if args.json:
        print(json.dumps([
            {"memory_id": i.hold.memory_id, "status": i.hold.status, "reason": i.hold.reason,
             "findings": i.hold.findings, "project_id": i.hold.project_id, "scope": i.hold.scope,
             "kind": i.kind, "source_session": i.source_session, "learned_at": i.learned_at,
             "content": _review_line(i.content)}
            for i in items
        ], indent=2))  # fmt: skip
        return 0
    if not items:
        print("nothing is held for review" + (f" in project {args.project}" if args.project else ""))
        return 0
    for i in items:
        h = i.hold
        print(f"#{h.memory_id} {h.status} · {i.kind or '-'} · project {h.project_id} · session "
              f"{_review_line(i.source_session, 40)} · learned {(i.learned_at or '?')[:10]}")  # fmt: skip
        print(f"    reason:  {_review_line(h.reason)}")
        print(f"    content: {_review_line(i.content)}")
    held = sum(1 for i in items if i.hold.status == holds.HELD)
    print(f"{held} held memor{'y' if held == 1 else 'ies'}: `nous review approve ID` lets one be injected "
          "(as a recalled note), `nous review reject ID` archives it", file=sys.stderr)  # fmt: skip
    return 0


def cmd_review(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.safety.review import ReviewError, approve, reject

    if args.action != "list" and args.memory_id is None:
        raise NousError(f"`nous review {args.action}` needs the memory ID (see `nous review`)")
    if args.action == "list" and args.memory_id is not None:
        raise NousError("`nous review` lists held memories; use `nous review approve ID` or `reject ID`")
    if args.reason and args.action != "reject":
        raise NousError("--reason only goes with `nous review reject ID`")
    conn = _open(settings)
    try:
        if args.action == "list":
            return _review_list(conn, args)
        try:
            if args.action == "approve":
                outcome = approve(conn, args.memory_id, policy=_policy(settings))
            else:
                outcome = reject(conn, args.memory_id, args.reason, policy=_policy(settings))
        except ReviewError as exc:
            raise NousError(str(exc)) from None
    finally:
        conn.close()
    if args.json:
        print(json.dumps({"memory_id": outcome.memory_id, "action": outcome.action, "created": outcome.created,
                          "event_id": outcome.event_id, "reason": outcome.reason}))  # fmt: skip
        return 0
    again = "" if outcome.created else " (already recorded; nothing changed)"
    if outcome.action == "approved":
        print(f"memory #{outcome.memory_id} approved{again}: from the next packet build it may be injected, "
              "still framed as a recalled note; a change to its text puts it back on hold")  # fmt: skip
    else:
        print(f"memory #{outcome.memory_id} rejected{again}: archived ({_review_line(outcome.reason, 200)})")
    return 0


def cmd_hooks(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.hooks import default_settings_path, install_hooks, uninstall_hooks

    path = default_settings_path(settings, Path(args.project) if args.project else None)
    if args.action == "install":
        report = install_hooks(path, sys.executable, with_prompt_hook=args.with_prompt_hook,
                               data_dir=settings.data_dir, db_path=settings.db_path)
        changes = [f"{what} {', '.join(events)}" for what, events in
                   (("added", report.added), ("updated", report.updated), ("removed", report.removed)) if events]
        print(f"Nous hooks in {path}: {'; '.join(changes) or 'already installed'}"
              + (f" (backup: {report.backup_path})" if report.backup_path else ""))
        print(f"the hooks read {settings.db_path} (recorded in the command: no environment variable needed); "
              "check the whole chain with `nous doctor`")
    else:
        removed = uninstall_hooks(path)
        print(f"removed {removed} Nous hook entr{'y' if removed == 1 else 'ies'} from {path}")
    return 0


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    import os

    from nous_assets import doctor

    checks = doctor.run_checks(doctor.make_context(settings, os.environ, fix=args.fix))
    report = doctor.as_json(checks)
    print(json.dumps(report, indent=2) if args.json else doctor.render(checks))
    return 0 if report["ok"] else EXIT_ERROR


DEMO_DIR = Path(__file__).resolve().parent / "demo" / "projects"


def _demo_glob(settings: Settings) -> str:
    """Copy the shipped demo transcripts into the data dir (never into the user's Claude config)."""
    import shutil

    from nous_assets.filemodes import tighten

    target = settings.data_dir / "demo" / "projects"
    if not target.exists():
        shutil.copytree(DEMO_DIR, target)
        tighten([target])  # copytree copies the repo's 0644/0755 modes; the data dir stays private
    return str(target / "**" / "*.jsonl")


def _floor(settings: Settings) -> str | None:
    from nous_assets.store.floor import get_floor

    conn = _open(settings, create=True)
    try:
        return get_floor(conn)
    finally:
        conn.close()


def _new_days(settings: Settings, floor: str) -> list[str]:
    """Days from ``floor`` to today whose transcripts gained complete lines since their cursors."""
    from datetime import UTC, datetime

    from nous_assets.capture.scan import plan_new_data

    today = datetime.now(UTC).date().isoformat()
    conn = _open(settings, create=True)
    try:
        return sorted(d for d in plan_new_data(settings, conn).dates if floor <= d <= today)
    finally:
        conn.close()


def _serve(home: Path, host: str, port: int) -> int:
    """The Dagster UI and daemon (sensor, schedule, run queue) until Ctrl-C; returns an exit status.

    ``dagster-webserver`` + ``dagster-daemon`` are what ``dagster dev`` starts, without its superseded
    command (a warning on every start) and its complaint about the repo's dagster.yaml (it runs in the
    instance directory). The daemon logs at WARNING: at INFO it prints two lines per sensor tick (every
    5 s); the runs themselves log at INFO (ingest_job's config).
    """
    import signal
    import subprocess

    workspace = Path(__file__).resolve().parents[1] / "workspace.yaml"
    target = ["-w", str(workspace)] if workspace.exists() else ["-m", "nous_assets.definitions"]
    bin_dir = Path(sys.executable).parent
    commands = {
        "dagster-webserver": [str(bin_dir / "dagster-webserver"), *target, "-h", host, "-p", str(port),
                              "--dagster-log-level", "info"],
        "dagster-daemon": [str(bin_dir / "dagster-daemon"), "run", *target, "--log-level", "warning"],
    }
    print(f"serving Dagster (DAGSTER_HOME={home}); UI at http://{host}:{port}; the watch sensor ingests new "
          "transcript lines. Ctrl-C to stop", flush=True)

    def terminate(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, terminate)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # also when started from a shell that ignores it
    procs: dict[str, subprocess.Popen] = {}
    sys.stdout.flush()  # our lines before theirs in a shared log
    try:
        for name, command in commands.items():
            procs[name] = subprocess.Popen(command, cwd=home)
        while True:
            for name, proc in procs.items():
                if proc.poll() is not None:
                    print(f"nous: {name} exited with status {proc.returncode}; stopping", file=sys.stderr)
                    return proc.returncode or EXIT_ERROR
            time.sleep(0.5)
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(procs)


def _stop(procs: dict) -> None:
    """Stop child processes: SIGTERM, then SIGKILL for any still alive after 30 s."""
    import subprocess

    for proc in procs.values():
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 30
    for proc in procs.values():
        try:
            proc.wait(timeout=max(deadline - time.monotonic(), 0.1))
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cmd_run(settings: Settings, args: argparse.Namespace) -> int:
    """Initialise, ingest recent history in one ranged run, then serve the Dagster UI + daemon (sensor on)."""
    import os
    from dataclasses import replace
    from datetime import date

    from nous_assets.capture.discovery import discover
    from nous_assets.defs.instance import ensure_dagster_home

    cmd_init(settings, args)
    if not discover(settings.project_glob).files:
        glob = _demo_glob(settings)
        print(f"no Claude Code transcripts under {settings.project_glob}; using the demo corpus ({glob})")
        os.environ["NOUS_PROJECT_GLOB"] = glob
        settings = replace(settings, project_glob=glob)
        args.since = settings.partition_start
    args.from_date = args.to_date = None
    start, end = _window(settings, args)
    floor = _floor(settings)
    if floor is not None and floor <= start.isoformat():  # a restart: the window was taken before
        days = _new_days(settings, floor)
        if days:
            status = _ingest_range(settings, days, label="catch-up")
        else:
            print("catch-up: no new transcript lines since the last run")
            status = 0
        older = _older_history_note(settings, date.fromisoformat(floor))
        if older:
            print(older)
    else:
        status = _backfill(settings, start, end, label="backfill")
    if args.no_serve:
        return status
    home, _ = ensure_dagster_home(settings)
    return _serve(home, args.host, args.port)


def cmd_redact(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.capture.rescan import rescan

    if not args.rescan:
        raise NousError("nothing to do: `nous redact --rescan` re-applies the redactor to stored data (see --help)")
    conn = _open(settings)
    try:
        bars: dict[str, Progress] = {}

        def progress(stage: str, done: int, total: int) -> None:
            bars.setdefault(stage, Progress(f"rescan {stage}", total=total)).update(done)

        report = rescan(settings, conn, policy=_policy(settings), dry_run=args.dry_run, progress=progress)
    finally:
        conn.close()
    if args.json:
        print(json.dumps({"run_id": report.run_id, "dry_run": report.dry_run, "changed": dict(report.changed),
                          "secrets_by_kind": dict(report.kinds), "audit_rows": len(report.audit)}, indent=2))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    print(f"rescan {report.run_id}: {verb} {report.total:,} secret(s)"
          + (f" ({', '.join(f'{k} {n}' for k, n in report.kinds.most_common())})" if report.total else ""))
    for where, n in sorted(report.changed.items()):
        print(f"  {where:<24}{n:>8,} {'to rewrite' if args.dry_run else 'rewritten'}")
    if report.memories_rebuilt:
        print(f"  projection rebuilt: {report.memories_rebuilt:,} memories (vectors of changed ones re-embed next run)")
    if not args.dry_run and report.audit:
        print(f"  {len(report.audit):,} audit row(s) in redaction_audit (kind, location, time; never the secret)")
    return 0


def cmd_config(settings: Settings, args: argparse.Namespace) -> int:
    from dataclasses import asdict

    data = asdict(settings)
    print(json.dumps(data, indent=2, default=str))
    return 0


Handler = Callable[[Settings, argparse.Namespace], int]
PROJECT_HELP = "a project id (write ids that start with '-' as --project=-home-me-app) or its directory"


def project_arg(value: str) -> str:
    """A project id, from an id or from a directory (``.``, ``~/src/app``, ``/abs``): a directory in a git
    repository names the repository's project (its main checkout), read from its ``.git`` files."""
    from resolver.project import default_project, read_repository

    if value.startswith(("/", "~", ".")):
        path = str(Path(value).expanduser().resolve())
        return default_project(path, read_repository(path))
    return value


def _canonical(conn, project: str | None) -> str | None:
    """``--project`` as the store names it: a Claude Code folder id maps to its repository's project."""
    from nous_assets.store.identity import canonical_project

    return canonical_project(conn, project)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="nous",
        description=(
            "Nous: local-first associative memory for Claude Code. Reads session transcripts, keeps "
            "learnings in an immutable bi-temporal event log (cortex.db) and injects relevant ones at "
            "session start."
        ),
        epilog=(
            "Environment: CLAUDE_CONFIG_DIR (default $HOME/.claude), NOUS_DATA_DIR "
            "(default ${XDG_DATA_HOME:-$HOME/.local/share}/nous), NOUS_DB_PATH, NOUS_ARCHIVE_DIR, "
            "NOUS_PROJECT_GLOB, NOUS_ENABLE_USERPROMPTSUBMIT, NOUS_REEXTRACT_ON_VERSION_CHANGE, "
            "NOUS_CONFIG_FILE (default $CLAUDE_CONFIG_DIR/nous/config.json)."
        ),
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True

    def add(name: str, handler: Handler, help_text: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.set_defaults(handler=handler)
        return p

    add("init", cmd_init, "Create the data directory and cortex.db, or upgrade its schema (idempotent).")
    p = add("status", cmd_status, "Show the database path, schema version, event/projection progress and row counts.")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    add("project", cmd_project, "Apply new events to the memories projection (incremental, from its checkpoint).")
    p = add("replay", cmd_replay, "Rebuild the projection from the full event log, or verify it against a replay.")
    p.add_argument(
        "--verify",
        action="store_true",
        help="replay into a scratch database and report any difference from the live projection "
        "(exit 1 on mismatch); changes nothing",
    )
    p = add("memories", cmd_memories, "List memories, optionally as of a transaction time and/or as at a valid time.")
    p.add_argument("--as-of", metavar="T", help="what the system knew at T (ISO-8601 transaction time)")
    p.add_argument("--as-at", metavar="T", help="only memories valid at T (ISO-8601 valid time)")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="only this project's memories; " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--limit", type=int, default=50, help="show at most N (0 = all; default 50)")
    p.add_argument("--json", action="store_true", help="print JSON")
    add("config", cmd_config, "Print the effective settings (environment + config file).")

    def add_range(p: argparse.ArgumentParser) -> None:
        p.add_argument("--since", default="90d", help="how far back: 90d, 12w or YYYY-MM-DD (default 90d)")
        p.add_argument("--from", dest="from_date", metavar="DATE", help="first day (YYYY-MM-DD); overrides --since")
        p.add_argument("--to", dest="to_date", metavar="DATE", help="last day (YYYY-MM-DD; default today)")

    p = add(
        "backfill",
        cmd_backfill,
        "Ingest historical transcripts through the whole pipeline in one run per stretch of activity, recorded "
        "in the Dagster instance (the UI shows it), with progress and a summary; idempotent, safe to re-run. "
        "Days before the watched window are reported, not taken, until you backfill them: that extends the "
        "window the watch sensor keeps up to date.",
    )
    add_range(p)
    p = add(
        "reextract",
        cmd_reextract,
        "Re-run extraction with the configured extractor over a range of days, "
        "superseding learnings from an older extractor version (needs NOUS_REEXTRACT_ON_VERSION_CHANGE=true).",
    )
    add_range(p)
    p.add_argument("--from-version", help="the extractor version being replaced (informational)")
    p.add_argument("--to-version", help="must match the configured extractor's version")
    p = add(
        "migrate-legacy",
        cmd_migrate_legacy,
        "Import Nous v1 engram.jsonl / cortex.jsonl files as "
        "LearningExtracted events (idempotent; bad lines quarantined).",
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="legacy JSONL files")
    p = add(
        "run",
        cmd_run,
        "The main job: init, ingest recent transcripts like `nous backfill` (on a restart: only days with new "
        "lines), or the shipped demo corpus when there are none, then serve the Dagster UI and daemon on "
        "127.0.0.1: the watch sensor keeps up with new lines, one run at a time.",
    )
    p.add_argument("--since", default="90d", help="history to backfill first (default 90d)")
    p.add_argument("--host", default="127.0.0.1", help="UI bind address (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=3000, help="UI port (default 3000)")
    p.add_argument("--no-serve", action="store_true", help="stop after the initial ingest (do not serve)")
    p = add(
        "bench",
        cmd_bench,
        "Benchmarks (they print and save their figures under benchmarks/results/): "
        "hooks (SessionStart latency), retrieval (LoCoMo recall@k), search (latency at 10k/100k memories), "
        "memories (gold learnings: lays the transcripts out as Claude Code does, backfills them in a scratch "
        "data dir, runs the installed SessionStart hook for each gold project cwd; prints store and packet "
        "recall and anti-hit rates per source, memories per session, mean packet size; last line "
        "'packet recall: R anti-hit: A').",
    )
    p.add_argument("bench", choices=["hooks", "retrieval", "search", "memories"])
    p.add_argument("--gold", metavar="FILE",
                   help="memories: gold learnings JSONL (e.g. ../shared/data/gold/gold-dev.jsonl)")  # fmt: skip
    p.add_argument("--transcripts", metavar="DIR", help="memories: the transcripts the gold was written from")
    p.add_argument("--locomo", metavar="FILE", help="retrieval: a LoCoMo JSON file (e.g. ../shared/data/locomo-dev/…)")
    p.add_argument("--k", type=int, default=10, help="retrieval: recall@k (default 10)")
    p.add_argument("--starts", type=int, default=200, help="hooks: session starts per profile (default 200)")
    p.add_argument(
        "--sizes",
        type=int,
        nargs="+",
        help="hooks: memories per corpus (default 1000 10000); search: (default 10000 100000)",
    )
    p.add_argument("--queries", type=int, default=100, help="search: queries per size (default 100)")
    p.add_argument("--workdir", help="scratch directory (default: a new temp dir; memories: the temp dir is "
                   "removed afterwards, a given one must be new or empty and is kept for inspection)")
    p.add_argument("--out-dir", default="benchmarks/results", help="where figures are saved")
    p = add(
        "search",
        cmd_search,
        "Search memories (and transcript chunks as episodic evidence) with the same "
        "seven-dimension scorer the injection uses. Only results with evidence for the query (a text "
        "match, a shared concept, graph proximity or a close enough vector) are listed, best score first.",
    )
    p.add_argument("query", help="free text")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="only this project's memories (plus global ones); " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--as-at", metavar="T", help="what was valid at T (valid time)")
    p.add_argument("--include-expired", action="store_true", help="keep superseded/expired memories")
    p.add_argument(
        "--explain",
        action="store_true",
        help="show each dimension's value and weighted share (query evidence vs priors), the result's rank "
        "among all scored candidates, and the dates recency is computed from (when learned, not ingested)",
    )
    p.add_argument("-k", type=int, default=10, help="results to show (default 10)")
    p.add_argument("--no-episodes", action="store_true", help="memories only, no transcript chunks")
    p.add_argument("--fts-only", action="store_true", help="skip loading the embedding model (faster start)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(
        "feedback",
        cmd_feedback,
        "Tell Nous whether an injected memory helped: useful (+0.1), corrected (-0.2) or ignored (no change).",
    )
    p.add_argument("memory_id", type=int, help="the #id shown in injected context, `nous memories` or `nous search`")
    p.add_argument("signal", choices=["useful", "corrected", "ignored"])
    p.add_argument("--session", help="session the feedback is about (makes the vote idempotent per session)")
    p = add(
        "hooks",
        cmd_hooks,
        "Install or remove the Nous hooks (SessionStart, Stop, PreCompact) in Claude Code's "
        "settings.json (backup first, idempotent, other hooks untouched). The commands record this "
        "interpreter and the data dir, so the hooks work whatever Claude Code's environment is; "
        "re-run install after moving the venv or changing NOUS_DATA_DIR.",
    )
    p.add_argument("action", choices=["install", "uninstall"])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="$CLAUDE_CONFIG_DIR/settings.json (default)")
    where.add_argument("--project", metavar="DIR", help="DIR/.claude/settings.json")
    p.add_argument(
        "--with-prompt-hook",
        action="store_true",
        help="also install UserPromptSubmit (only active with NOUS_ENABLE_USERPROMPTSUBMIT=true)",
    )
    p = add(
        "review",
        cmd_review,
        "Memories held out of injection because they would have Claude run downloaded code, force-push main, "
        "skip permissions or the sandbox, disable checks, send data off the machine, or because they carry a "
        "secret. Lists them with reason, source session, date and content; approve one to let it be injected "
        "(as a recalled note, never as an instruction) or reject it to archive it (events with source user_review).",
    )
    p.add_argument("action", nargs="?", choices=["list", "approve", "reject"], default="list",
                   help="list (default), approve ID or reject ID")  # fmt: skip
    p.add_argument("memory_id", nargs="?", type=int, metavar="ID", help="the memory's #id (from the list)")
    p.add_argument("--reason", help="reject: why (kept in the LearningArchived event)")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="list: only this project's held memories; " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--all", action="store_true", help="list: approved memories too")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(
        "doctor",
        cmd_doctor,
        "Check the chain from Claude Code's hook to the pipeline: hooks installed and pointing at a working "
        "interpreter and this data dir, data dir and cortex.db readable and private, schema current, injection "
        "cache fresh, last ingest, Dagster sensor daemon running, recent hook failures. Each check prints OK, "
        "WARN or FAIL with what to do; exits 1 when something FAILs.",
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--fix", action="store_true", help="make data files and directories private (0600/0700)")
    p = add(
        "redact",
        cmd_redact,
        "Re-apply the current secret redactor to everything already stored: lake partitions (rewritten "
        "atomically), transcript chunks, event payloads (the one sanctioned in-place edit of the log), "
        "injection packets and queue errors; the projection is rebuilt and every change is recorded in the "
        "redaction_audit table (kind, location, time; never the secret). Idempotent; run it while the "
        "pipeline (`nous run`) is stopped.",
    )
    p.add_argument("--rescan", action="store_true", help="scan stored data again and redact what is found")
    p.add_argument("--dry-run", action="store_true", help="only count what would be redacted; write nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p = add("queue", cmd_queue, "Show the ingest queue (failed and dead-lettered items with their errors).")
    p.add_argument("--retry-dead", action="store_true", help="move dead-lettered items back to pending")
    return parser


def _show_warnings() -> None:
    """Warnings from the pipeline (e.g. symlink loops met by discovery) as ``nous: warning: …`` lines."""
    import logging

    log = logging.getLogger("nous_assets")
    if not any(getattr(h, "nous_cli", False) for h in log.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter("nous: warning: %(message)s"))
        handler.setLevel(logging.WARNING)
        handler.nous_cli = True  # type: ignore[attr-defined]
        log.addHandler(handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    restrict_umask()  # everything the command (and `dagster dev` under `nous run`) creates is private
    _show_warnings()
    settings = None
    try:
        settings = load_settings()
        return int(args.handler(settings, args) or 0)
    except ConfigError as exc:
        print(f"nous: config error: {exc}", file=sys.stderr)
        return EXIT_CONFIG
    except NousError as exc:
        print(f"nous: error: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("nous: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # storage failures from any layer (SQLite, Dagster's SQLAlchemy, files): one line
        from nous_assets.errors import storage_error

        mapped = storage_error(exc, settings.db_path if settings else None)
        if mapped is None:
            raise
        print(f"nous: error: {mapped}", file=sys.stderr)
        return EXIT_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

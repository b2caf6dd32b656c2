"""``nous doctor``: check the whole chain from Claude Code's hook to the pipeline, and say what to fix.

A misconfiguration here is silent by design elsewhere — the hook fails open and injects nothing — so
each link is checked on its own and reported as OK, WARN (works, but degraded or about to break) or
FAIL (the hook cannot inject, or the data is unusable), with the command that fixes it:

hooks
    our entries in the user's (and this directory's project) ``settings.json``; the interpreter they run
    exists and runs the resolver (``--version``); the data dir and database they record are this ones.
data dir / database
    exist, readable and writable, private (0700/0600), schema current.
injection cache
    packets exist and were built from the newest memories (per project, the cache builder's own stamp).
last ingest
    newest completed queue item and learning event; failed and dead-lettered items.
pipeline daemon
    the Dagster daemon's sensor heartbeat in ``$DAGSTER_HOME`` (fresh within :data:`HEARTBEAT_FRESH_S`),
    and the watch sensor's stored state and latest tick, read through Dagster's own instance API.
resolver log
    failures the hook logged in the last day (``<data dir>/logs/resolver.log``).
auto-memory
    Claude Code's own auto-memory for this directory: on or off (and what says so), its folder, ``MEMORY.md``'s
    size against the load cap (the first 200 lines or 25,000 bytes load; the rest does not).
transcripts kept
    ``cleanupPeriodDays`` (Claude Code deletes transcripts older than that, default 30) and transcripts that
    vanished before Nous read them: files the store recorded but never read, or listed in a ``sessions-index.json``
    and never seen, that are gone from disk.
"""

from __future__ import annotations

import os
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path

from nous_assets.errors import NousError
from nous_assets.settings import Settings
from nous_assets.timeutil import parse_time

OK, WARN, FAIL = "OK", "WARN", "FAIL"
REQUIRED_EVENT = "SessionStart"
OPTIONAL_EVENTS = ("Stop", "PreCompact")
SESSION_SOURCES = ("startup", "resume", "clear", "compact", "fork")
HEARTBEAT_FRESH_S = 300  # Dagster's daemon beats every 30 s; 10 missed beats and the sensor is not running
LOG_WINDOW_S = 86_400
SENSOR_NAME = "transcript_watch"


@dataclass(frozen=True)
class Check:
    name: str
    status: str
    message: str
    fix: str = ""


@dataclass(frozen=True)
class Context:
    """What the checks look at: the settings, where Claude Code's settings are, which interpreter is ours."""

    settings: Settings
    cwd: Path
    python: str
    dagster_home: Path
    hook_default_db: Path  # where a hook that records nothing looks, given Claude Code's usual HOME
    fix: bool = False
    now: float = 0.0
    env: Mapping[str, str] = field(default_factory=dict)  # Claude Code's switches (CLAUDE_CODE_DISABLE_AUTO_MEMORY)


def make_context(settings: Settings, env: Mapping[str, str], *, fix: bool = False, cwd: Path | None = None) -> Context:
    from resolver import paths

    return Context(
        settings=settings,
        cwd=(cwd or Path.cwd()).resolve(),
        python=sys.executable,
        dagster_home=Path(env.get("DAGSTER_HOME") or settings.data_dir / "dagster"),
        hook_default_db=paths.db_path({k: env[k] for k in ("HOME", "XDG_DATA_HOME") if env.get(k)}),
        fix=fix,
        now=time.time(),
        env=dict(env),
    )


def run_checks(ctx: Context) -> list[Check]:
    """Every check, in the order a hook's data flows backwards: hook, files, cache, ingest, daemon, log."""
    checks: list[Callable[[Context], Check]] = [
        check_hooks,
        check_data_dir,
        check_database,
        check_cache,
        check_ingest,
        check_daemon,
        check_resolver_log,
        check_claude_memory,
        check_transcripts_kept,
    ]
    results = []
    for check in checks:
        try:
            results.append(check(ctx))
        except NousError as exc:
            results.append(Check(check.__name__.removeprefix("check_").replace("_", " "), FAIL, str(exc)))
    return results


def as_json(checks: list[Check]) -> dict:
    return {"ok": not any(c.status == FAIL for c in checks), "checks": [asdict(c) for c in checks]}


# -- hooks ----------------------------------------------------------------------------------------


def settings_files(ctx: Context) -> list[Path]:
    """The user's settings.json, plus this directory's project settings when they exist."""
    from nous_assets.hooks import default_settings_path

    user = default_settings_path(ctx.settings)
    files = [user]
    for name in ("settings.json", "settings.local.json"):
        project = ctx.cwd / ".claude" / name
        if project.exists() and project.resolve() != user.resolve():
            files.append(project)
    return files


def check_hooks(ctx: Context) -> Check:
    from nous_assets.errors import ConfigError
    from nous_assets.hooks import installed_hooks

    found: dict[str, list[tuple[Path, str | None, dict]]] = {}
    for path in settings_files(ctx):
        try:
            for event, entries in installed_hooks(path).items():
                found.setdefault(event, []).extend((path, matcher, entry) for matcher, entry in entries)
        except ConfigError as exc:
            return Check("hooks", FAIL, str(exc), f"fix {path} by hand; nothing else can read it either")
    install = "run `nous hooks install` (with this venv's nous)"
    if REQUIRED_EVENT not in found:
        where = " or ".join(str(p) for p in settings_files(ctx))
        return Check("hooks", FAIL, f"no Nous SessionStart hook in {where}: nothing is injected", install)
    problems = _entry_problems(ctx, found)
    fails = [message for status, message in problems if status == FAIL]
    if fails:
        return Check("hooks", FAIL, "; ".join(fails), install)
    warns = [message for status, message in problems if status == WARN]
    missing = [event for event in OPTIONAL_EVENTS if event not in found]
    if missing:
        warns.append(f"no {', '.join(missing)} hook (new sessions are ingested on the next scan only)")
    doubled = [event for event, entries in found.items() if len(entries) > 1]
    if doubled:
        warns.append(f"{', '.join(doubled)} installed more than once (user and project settings?): runs twice")
    files = sorted({str(p) for entries in found.values() for p, _, _ in entries})
    if warns:
        return Check("hooks", WARN, "; ".join(warns), install)
    return Check("hooks", OK, f"{', '.join(sorted(found))} in {', '.join(files)}; run {ctx.python}, read "
                 f"{ctx.settings.db_path}")  # fmt: skip


def _entry_problems(ctx: Context, found: dict[str, list[tuple[Path, str | None, dict]]]) -> list[tuple[str, str]]:
    """(status, message) for every problem of our entries: interpreter, recorded paths, matcher."""
    from nous_assets.hooks import command_parts, resolver_version

    problems: list[tuple[str, str]] = []
    versions: dict[str, str | None] = {}
    for event, entries in sorted(found.items()):
        for path, matcher, entry in entries:
            python, _, recorded = command_parts(entry["command"])
            if python and os.sep not in python:  # a hand-written bare name: Claude Code finds it on PATH
                python = shutil.which(python) or python
            if not python or not Path(python).exists():
                problems.append((FAIL, f"{event} hook in {path} runs {python}, which does not exist"))
                continue
            if python not in versions:
                versions[python] = resolver_version(python)
            if versions[python] is None:
                problems.append((FAIL, f"{python} (the {event} hook's interpreter) cannot run the resolver"))
                continue
            if os.path.abspath(python) != os.path.abspath(ctx.python):
                problems.append((WARN, f"{event} hook runs {python}, not this interpreter {ctx.python}"))
            problems.extend(_recorded_path_problems(ctx, event, recorded))
            if event == REQUIRED_EVENT and matcher:
                uncovered = [s for s in SESSION_SOURCES if s not in matcher.split("|")]
                if uncovered:
                    problems.append((WARN, f"SessionStart matcher {matcher!r} skips {', '.join(uncovered)} sessions"))
    return list(dict.fromkeys(problems))


def _recorded_path_problems(ctx: Context, event: str, recorded: dict[str, str]) -> list[tuple[str, str]]:
    settings = ctx.settings
    if not recorded.get("data_dir") and not recorded.get("db_path"):
        default_db = ctx.hook_default_db
        if default_db == settings.db_path:
            return [(WARN, f"{event} hook records no data dir; it works only while Claude Code's environment "
                           "sets no other NOUS_DATA_DIR")]  # fmt: skip
        return [(FAIL, f"{event} hook records no data dir and reads the default {default_db} unless Claude "
                       f"Code's environment sets NOUS_DATA_DIR; this data is at {settings.db_path}")]  # fmt: skip
    hook_db = Path(recorded["db_path"]) if recorded.get("db_path") else Path(recorded["data_dir"]) / "cortex.db"
    if hook_db.resolve() != settings.db_path.resolve():
        return [(FAIL, f"{event} hook reads {hook_db}, but this data is at {settings.db_path}")]
    if recorded.get("data_dir") and Path(recorded["data_dir"]).resolve() != settings.data_dir.resolve():
        return [(WARN, f"{event} hook logs to {recorded['data_dir']}, not this data dir {settings.data_dir}")]
    return []


# -- files ----------------------------------------------------------------------------------------


def check_data_dir(ctx: Context) -> Check:
    from nous_assets.filemodes import database_files, loose_paths, tighten

    data = ctx.settings.data_dir
    if not data.is_dir():
        return Check("data dir", FAIL, f"{data} does not exist", "run `nous init` (or `make run`)")
    if not os.access(data, os.R_OK | os.W_OK | os.X_OK):
        return Check("data dir", FAIL, f"{data} is not readable and writable by this user", f"fix the owner of {data}")
    roots = [data, ctx.settings.archive_dir, *database_files(ctx.settings.db_path)]
    if ctx.fix and loose_paths(roots, limit=1):
        changed = tighten(roots)
        left = loose_paths(roots, limit=5)
        if not left:
            return Check("data dir", OK, f"{data}: made {changed} file(s)/dir(s) private (0600/0700)")
    loose = loose_paths(roots, limit=5)
    if loose:
        shown = ", ".join(f"{p} ({oct(p.lstat().st_mode & 0o777)})" for p in loose[:3])
        return Check("data dir", WARN, f"readable by other users: {shown}{' …' if len(loose) > 3 else ''}",
                     "run `nous doctor --fix` (or `nous init`) to make them 0600/0700")  # fmt: skip
    return Check("data dir", OK, f"{data} (private)")


def check_database(ctx: Context) -> Check:
    from nous_assets.store.db import LATEST_VERSION, connect, schema_version

    db = ctx.settings.db_path
    if not db.is_file():
        return Check("database", FAIL, f"no database at {db}", "run `nous init`, then `make run` or `nous backfill`")
    if not os.access(db, os.R_OK | os.W_OK):
        return Check("database", FAIL, f"{db} is not readable and writable by this user", f"fix the owner of {db}")
    conn = connect(db)
    try:
        version = schema_version(conn)
    finally:
        conn.close()
    if version < LATEST_VERSION:
        return Check("database", FAIL, f"{db} has schema version {version}, this build needs {LATEST_VERSION}",
                     "run `nous init` to upgrade it")  # fmt: skip
    return Check("database", OK, f"{db} (schema version {version})")


def _open(ctx: Context):
    from nous_assets.store.db import LATEST_VERSION, connect, schema_version

    db = ctx.settings.db_path
    if not db.is_file():
        return None
    conn = connect(db)
    if schema_version(conn) != LATEST_VERSION:
        conn.close()
        return None
    return conn


# -- pipeline output ------------------------------------------------------------------------------


def check_cache(ctx: Context) -> Check:
    from nous_assets.store.reads.health import cache_health

    conn = _open(ctx)
    if conn is None:
        return Check("injection cache", FAIL, "no usable database (see above)", "")
    try:
        health = cache_health(conn)
    finally:
        conn.close()
    run = "start the pipeline (`make run`) so the sensor rebuilds packets"
    if health.packets == 0:
        if health.projects == 0:
            return Check("injection cache", WARN, "no memories yet, so nothing to inject",
                         "run `make run` or `nous backfill` to ingest your transcripts")  # fmt: skip
        return Check("injection cache", FAIL, f"{health.projects} project(s) have memories but no packet is built: "
                     "the hook injects nothing", run)  # fmt: skip
    if health.stale:
        return Check("injection cache", WARN, f"packets of {len(health.stale)} project(s) are older than their newest "
                     f"memories ({_few(health.stale)}); newest packet {health.newest_packet_at}", run)  # fmt: skip
    message = f"{health.packets} packet(s), built from the newest memories (newest {health.newest_packet_at})"
    if health.missing:
        message += f"; no packet for {_few(health.missing)} (the hook falls back to the global packet there)"
    return Check("injection cache", OK, message)


def check_ingest(ctx: Context) -> Check:
    from nous_assets.store.reads.health import ingest_health

    conn = _open(ctx)
    if conn is None:
        return Check("last ingest", FAIL, "no usable database (see above)", "")
    try:
        health = ingest_health(conn)
    finally:
        conn.close()
    if health.last_completed_at is None and not health.events:
        return Check("last ingest", WARN, "nothing ingested yet", "run `make run` (it ingests all the history on disk)")
    when = health.last_completed_at or health.last_event_at
    message = f"last completed {when} ({_age(ctx.now, when)} ago); newest learning event {health.last_event_at}"
    if health.failed or health.dead_letter:
        return Check("last ingest", WARN, f"{message}; {health.failed} failed and {health.dead_letter} "
                     "dead-lettered item(s)", "see `nous queue` (and `nous queue --retry-dead`)")  # fmt: skip
    return Check("last ingest", OK, message)


# -- the daemon and the hook's own log ------------------------------------------------------------


def check_daemon(ctx: Context) -> Check:
    home = ctx.dagster_home
    start = f"start the pipeline with `make run` (DAGSTER_HOME={home}) so new sessions are ingested"
    if not (home / "dagster.yaml").is_file():
        return Check("pipeline daemon", WARN, f"no Dagster instance at {home}: the pipeline has not run here", start)
    try:
        beat, sensor = _dagster_status(home)
    except Exception as exc:  # noqa: BLE001 - a broken instance is a finding, not a crash
        return Check("pipeline daemon", WARN, f"cannot read the Dagster instance at {home}: {exc}", start)
    if sensor and sensor[0] == "STOPPED":
        return Check("pipeline daemon", WARN, f"sensor {SENSOR_NAME} is stopped in {home}",
                     f"turn {SENSOR_NAME} on in the Dagster UI (Automation)")  # fmt: skip
    tick = f"; last {SENSOR_NAME} tick {_age(ctx.now, sensor[1])} ago" if sensor and sensor[1] else ""
    if beat is None:
        return Check("pipeline daemon", WARN, f"no Dagster daemon has ever run with {home}", start)
    age = ctx.now - beat
    if age > HEARTBEAT_FRESH_S:
        return Check("pipeline daemon", WARN, f"the Dagster daemon is not running (last sensor heartbeat "
                     f"{_seconds(age)} ago){tick}", start)  # fmt: skip
    return Check("pipeline daemon", OK, f"sensor daemon alive (heartbeat {_seconds(age)} ago){tick}")


def _dagster_status(home: Path) -> tuple[float | None, tuple[str, float | None] | None]:
    """(newest SENSOR daemon heartbeat, (watch sensor status, newest tick time)) from Dagster's instance API."""
    import dagster as dg

    from nous_assets.defs.dagster_internals import InstigatorType

    with dg.DagsterInstance.from_config(str(home)) as instance:
        beats = instance.get_daemon_heartbeats()
        beat = beats["SENSOR"].timestamp if "SENSOR" in beats else None
        for state in instance.all_instigator_state(instigator_type=InstigatorType.SENSOR):
            if state.instigator_name == SENSOR_NAME:
                ticks = instance.get_ticks(state.instigator_origin_id, state.selector_id, limit=1)
                return beat, (state.status.value, ticks[0].timestamp if ticks else None)
    return beat, None


def check_resolver_log(ctx: Context) -> Check:
    log = ctx.settings.data_dir / "logs" / "resolver.log"
    try:
        lines = log.read_text(encoding="utf-8", errors="replace").splitlines()
    except FileNotFoundError:
        return Check("resolver log", OK, "no hook failures logged")
    recent = [line for line in lines if _logged_at(line) >= ctx.now - LOG_WINDOW_S]
    if not recent:
        return Check("resolver log", OK, f"no hook failures in the last 24 h ({len(lines)} older line(s) in {log})")
    return Check("resolver log", WARN, f"{len(recent)} hook failure(s) in the last 24 h; latest: {recent[-1][:300]}",
                 f"see {log}")  # fmt: skip


def _logged_at(line: str) -> float:
    try:
        return parse_time(line.split(" ", 1)[0]).timestamp()
    except ValueError:
        return 0.0


# -- formatting -----------------------------------------------------------------------------------


def _few(items: tuple[str, ...], n: int = 3) -> str:
    return ", ".join(items[:n]) + (f" and {len(items) - n} more" if len(items) > n else "")


def _age(now: float, stamp: str | float | None) -> str:
    if stamp is None:
        return "?"
    try:
        seconds = now - (stamp if isinstance(stamp, float) else parse_time(stamp).timestamp())
    except ValueError:
        return "?"
    return _seconds(seconds)


def _seconds(seconds: float) -> str:
    seconds = max(seconds, 0.0)
    for unit, size in (("d", 86_400), ("h", 3_600), ("min", 60)):
        if seconds >= size:
            return f"{seconds / size:.0f} {unit}"
    return f"{seconds:.0f} s"


# -- beside Claude Code: its auto-memory and its transcript cleanup ---------------------------------


def check_claude_memory(ctx: Context) -> Check:
    from nous_assets.capture.native_memory import MEMORY_MAX_BYTES, MEMORY_MAX_LINES, auto_memory

    status = auto_memory(ctx.cwd, config_dir=ctx.settings.claude_config_dir, env=ctx.env)
    moved = f" (autoMemoryDirectory in {status.configured_by})" if status.configured_by else ""
    where = f"{status.directory}{moved}"
    if not status.enabled:
        return Check("auto-memory", OK, f"auto-memory {status.why}; Nous reads CLAUDE.md only")
    if not status.index_bytes:
        return Check("auto-memory", OK, f"auto-memory {status.why}, folder {where}: no MEMORY.md yet")
    size = (f"MEMORY.md {status.index_lines} lines, {status.index_bytes:,} bytes (Claude Code loads the first "
            f"{MEMORY_MAX_LINES} lines or {MEMORY_MAX_BYTES:,} bytes), "
            f"{len(status.topic_files)} topic file(s)")  # fmt: skip
    if status.over_cap:
        return Check("auto-memory", WARN, f"auto-memory {status.why}, folder {where}: {size}; what lies past "
                     "the cap is not loaded", "move detail into topic files; `nous review claude-md --target memory` "
                     "shows what Nous would add")  # fmt: skip
    return Check("auto-memory", OK, f"auto-memory {status.why}, folder {where}: {size}; Nous leaves out of "
                 "its packets what MEMORY.md and CLAUDE.md already say")  # fmt: skip


def _index_entries(projects: Path) -> list[str]:
    """Transcript paths Claude Code listed in its ``sessions-index.json`` files (older versions write them)."""
    import json

    out: list[str] = []
    try:
        indexes = sorted(projects.glob("*/sessions-index.json"))
    except OSError:
        return out
    for index in indexes:
        try:
            data = json.loads(index.read_text(encoding="utf-8"))
        except (OSError, ValueError, UnicodeDecodeError):
            continue
        entries = data.get("entries") if isinstance(data, dict) else data
        for entry in entries if isinstance(entries, list) else []:
            path = entry.get("fullPath") if isinstance(entry, dict) else None
            if isinstance(path, str) and path.endswith(".jsonl"):
                out.append(path)
    return out


def check_transcripts_kept(ctx: Context) -> Check:
    from nous_assets.capture.native_memory import cleanup_period_days, settings_layers
    from nous_assets.store.ingest.transcript_files import known_files

    days, source = cleanup_period_days(settings_layers(ctx.settings.claude_config_dir, ctx.cwd))
    kept = f"cleanupPeriodDays {days}" + (f" ({source})" if source else " (Claude Code's default)")
    conn = _open(ctx)
    if conn is None:
        return Check("transcripts kept", WARN, f"{kept}; no usable database to compare with (see above)")
    try:
        known = known_files(conn)
    finally:
        conn.close()
    paths = {k.path for k in known}
    lost = [k.path for k in known if k.never_read and "[REDACTED" not in k.path and not os.path.exists(k.path)]
    unseen = [p for p in _index_entries(ctx.settings.claude_config_dir / "projects")
              if p not in paths and not os.path.exists(p)]  # fmt: skip
    if lost or unseen:
        gone = len(lost) + len(unseen)
        return Check("transcripts kept", WARN, f"{kept}; {gone} transcript(s) vanished before Nous read them "
                     f"({_few(tuple(lost + unseen), 2)})", f"raise cleanupPeriodDays in "
                     f"{ctx.settings.claude_config_dir / 'settings.json'} and keep `make run` going (or run "
                     "`nous backfill`) so Nous reads transcripts before Claude Code deletes them")  # fmt: skip
    return Check("transcripts kept", OK, f"{kept}: Claude Code deletes transcripts older than that; none Nous knew "
                 f"of vanished unread ({len(known)} recorded)")  # fmt: skip


def render(checks: list[Check]) -> str:
    lines = []
    for c in checks:
        lines.append(f"{c.status:<5} {c.name:<16} {c.message}")
        if c.fix and c.status != OK:
            lines.append(f"{'':<22}fix: {c.fix}")
    return "\n".join(lines)

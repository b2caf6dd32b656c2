"""Claude Code hook entry point: ``python -I -S …/resolver/launch.py <hook>`` (as installed; see
:mod:`resolver.launch`) or ``python -m resolver <hook>``. Standard library only.

Commands (each reads the hook's JSON from stdin and always exits 0):

``session-start``
    Fingerprint the payload's ``cwd``, pick the best prebuilt packet from ``injection_cache``, print
    SessionStart JSON with what of it fits the payload's ``source`` (:mod:`resolver.inject`: the full packet at
    startup and clear, only new lines on resume and fork, the rules again after compact) as
    ``additionalContext`` and record the access. Hard limit 500 ms counted
    from process creation, interpreter start-up included (a SIGALRM watchdog set to what is left); while more
    processes are runnable than there are CPUs (50 hooks at once on two cores) the watchdog waits on, up to
    4 s from creation (Claude Code waits 5 s).
``user-prompt-submit``
    Off unless ``NOUS_ENABLE_USERPROMPTSUBMIT`` is true-ish. Then the same lookup under a 150 ms budget,
    printed as UserPromptSubmit JSON, and only when the packet carries memories not yet injected into
    this session.
``stop``
    Touch the wake marker so the ingest sensor scans at once (< 20 ms).
``pre-compact``
    Append ``{ts, session_id, trigger, transcript_path}`` to ``<data dir>/precompact.jsonl`` and touch the
    wake marker (< 50 ms).
``--version``
    Print the resolver version.

Options after the command: ``--data-dir DIR`` and ``--db-path FILE``, written into the hook command by
``nous hooks install`` so the hook finds its data whatever Claude Code's environment holds; they win
over ``NOUS_DATA_DIR`` / ``NOUS_DB_PATH``, which (and then the defaults) apply when nothing is recorded.

Files are created private (umask 077): the log, the spool, the wake marker and any directory on the way.

Fail open: on any error or timeout nothing is printed (Claude Code proceeds without context) and the
reason goes to ``<data dir>/logs/resolver.log``, a small append-only log rotated at 256 KiB.

``NOUS_RESOLVER_TEST_DELAY`` (seconds) is for tests only: it sleeps inside the guarded section of
session-start / user-prompt-submit to exercise the watchdog.
"""

from __future__ import annotations

import os
import sys
import time

from resolver import paths

RESOLVER_VERSION = "1"
SESSION_START_LIMIT_S = 0.5  # hard limit from process creation on a machine not overloaded (spec "Hook Latency Policy")
HOOK_DEADLINE_S = 4.0  # session-start never later than this from creation: Claude Code waits 5 s (nous hooks install)
PROMPT_DEADLINE_S = 1.5  # user-prompt-submit: Claude Code waits 2 s
OVERLOAD_STEP_S = 0.25  # on an overloaded machine the watchdog looks again this much later (see _on_alarm)
USER_PROMPT_LIMIT_S = 0.15
EXIT_MARGIN_S = 0.01  # left for writing the output and exiting
TYPICAL_STARTUP_S = 0.04  # assumed interpreter start-up where the process age cannot be read
MARKER_BUDGET_S = 0.05  # stop and pre-compact: drop the signal rather than hold up the session
LOG_MAX_BYTES = 256 * 1024
TEST_DELAY_ENV = "NOUS_RESOLVER_TEST_DELAY"
PROMPT_HOOK_ENV = "NOUS_ENABLE_USERPROMPTSUBMIT"
PRIVATE_UMASK = 0o077  # data files 0600, directories 0700
SESSION_SOURCES = ("startup", "resume", "clear", "compact", "fork")  # fork: Claude Code 2.1.214+


_emitted = False  # whether this run already wrote its hook output (for the log line of a late failure)


class _Timeout(BaseException):
    """Raised by the watchdog; a BaseException so no ``except Exception`` on the way swallows it."""


class _Watchdog:
    """Raise :class:`_Timeout` in the main thread after ``seconds`` (SIGALRM; a no-op where unavailable) — or later,
    while the machine is overloaded, up to ``deadline`` seconds from now (see :func:`_on_alarm`)."""

    def __init__(self, seconds: float, deadline: float | None = None) -> None:
        self.seconds = seconds
        self.deadline = deadline if deadline is not None else seconds
        self.armed = False

    def __enter__(self) -> _Watchdog:
        import _signal as signal  # the C module: ``signal`` would import ``enum`` (~4 ms of start-up)

        global _deadline_at, _was_overloaded
        if hasattr(signal, "setitimer"):
            _deadline_at = time.monotonic() + max(self.seconds, self.deadline)
            _was_overloaded = self.deadline > self.seconds and _overloaded()
            signal.signal(signal.SIGALRM, _on_alarm)
            signal.setitimer(signal.ITIMER_REAL, self.seconds)
            self.armed = True
        return self

    def __exit__(self, *exc_info) -> None:
        if self.armed:
            import _signal as signal

            signal.setitimer(signal.ITIMER_REAL, 0)
            self.armed = False


_deadline_at = 0.0  # monotonic time past which the watchdog never waits (set when it is armed)
_was_overloaded = False  # whether the machine was overloaded at the watchdog's previous look


def _on_alarm(signum, frame) -> None:
    """The budget is spent: time out — unless more processes are runnable than there are CPUs, now or at the
    previous look (a burst of hooks queued behind each other: the time went to waiting for a CPU, not to a hung
    read; one step more once it ends, for a hook that was starved until then), then look again a step later,
    until the deadline."""
    import _signal as signal

    global _was_overloaded
    left = _deadline_at - time.monotonic()
    overloaded = _overloaded()
    if left > 0.02 and (overloaded or _was_overloaded):
        _was_overloaded = overloaded
        signal.setitimer(signal.ITIMER_REAL, min(OVERLOAD_STEP_S, left))
        return
    raise _Timeout


def _overloaded() -> bool:
    """More runnable processes than CPUs right now (Linux ``/proc/loadavg``; elsewhere the 1-minute load)."""
    try:
        with open("/proc/loadavg", "rb") as handle:
            runnable = int(handle.read().split()[3].split(b"/")[0])
    except Exception:  # noqa: BLE001 - not Linux
        try:
            runnable = int(os.getloadavg()[0])
        except OSError:
            return False
    return runnable > (os.cpu_count() or 1)


def _process_age() -> float:
    """Seconds since this process was created (Linux ``/proc``, 10 ms ticks rounded down, so an overestimate)."""
    try:
        with open("/proc/self/stat", "rb") as handle:
            stat = handle.read()
        start_ticks = int(stat[stat.rindex(b")") + 2 :].split()[19])  # field 22, starttime
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - start_ticks / os.sysconf("SC_CLK_TCK")
    except Exception:  # noqa: BLE001 - not Linux, or no /proc
        return TYPICAL_STARTUP_S
    return min(max(age, 0.0), HOOK_DEADLINE_S)


def _budget(limit: float, deadline: float) -> tuple[float, float]:
    """(what is left of ``limit`` for the guarded work, interpreter start-up already spent; how long the work may
    run on an overloaded machine: until ``deadline`` from process creation, before Claude Code stops waiting)."""
    age = _process_age()
    return max(0.02, limit - age - EXIT_MARGIN_S), max(0.02, deadline - age - EXIT_MARGIN_S)


def _log(command: str, message: str) -> None:
    """Append one line to the resolver log (best effort, never raises)."""
    try:
        log_dir = os.path.join(paths.data_dir_str(), "logs")
        os.makedirs(log_dir, exist_ok=True)
        log_file = os.path.join(log_dir, "resolver.log")
        try:
            if os.stat(log_file).st_size > LOG_MAX_BYTES:
                os.replace(log_file, os.path.join(log_dir, "resolver.log.1"))
        except OSError:
            pass
        stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        line = f"{stamp} {command} pid={os.getpid()} {' '.join(str(message).split())[:500]}\n"
        fd = os.open(log_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, line.encode("utf-8", errors="replace"))
        finally:
            os.close(fd)
    except Exception:  # noqa: BLE001 - logging must never hurt the hook
        pass


def _emit(text: str) -> None:
    """Write ``text`` to stdout whole: the watchdog is held off until the write is flushed."""
    import _signal as signal

    block = hasattr(signal, "pthread_sigmask")
    if block:
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGALRM})
    global _emitted
    try:
        out = sys.stdout.buffer
        out.write(text.encode("utf-8"))
        out.write(b"\n")
        out.flush()
        _emitted = True
    finally:
        if block:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGALRM})  # a pending alarm fires here


def _test_delay() -> None:
    delay = os.environ.get(TEST_DELAY_ENV)
    if delay:
        time.sleep(float(delay))


def _drain_stdin() -> None:
    try:
        if sys.stdin is not None and not sys.stdin.isatty():
            sys.stdin.buffer.read()  # drain the hook payload so Claude Code never blocks on a full pipe
    except Exception:  # noqa: BLE001
        pass


def _inject(command: str, event_output, source: str, *, only_new: bool = False) -> None:
    """The guarded body of session-start / user-prompt-submit (raises; the caller fails open).

    session-start injects what :func:`resolver.inject.select` chooses for the payload's ``source`` (the one
    function ``nous packet`` calls too); user-prompt-submit the best packet when it carries something new."""
    from resolver import cache_read as cache
    from resolver import hook_io

    payload = hook_io.read_payload(sys.stdin)
    if not payload:
        _log(command, "empty or unparsable hook payload; nothing injected")
        return
    _test_delay()
    db = paths.db_path_str()
    if command == "session-start":
        from resolver import inject

        found = inject.select(payload, db)
        if found is None or not found.text:
            return
        text, memory_ids, source = found.text, found.memory_ids, found.source
        session_id, project_id = found.session_id, found.project_id
    else:
        from resolver import fingerprint

        session_id = hook_io.payload_str(payload, "session_id")
        fp = fingerprint.build_fingerprint(hook_io.payload_str(payload, "cwd") or os.getcwd())
        packet = cache.best_packet(db, fp, source, session_id=session_id)
        if packet is None:
            return
        if only_new and session_id and cache.already_injected(db, session_id, packet.memory_ids):
            return
        text, memory_ids, project_id = packet.text, packet.memory_ids, fp["project_id"]
    _emit(event_output(text))
    if session_id:
        where = cache.log_access(db, memory_ids, session_id, project_id, f"{command}:{source}")
        if where == "spool":
            _log(command, f"database busy; {len(memory_ids)} access records spooled")


def _guarded(command: str, budget: tuple[float, float], body) -> int:
    started = time.monotonic()
    try:
        with _Watchdog(*budget):
            body()
    except _Timeout:
        _log(command, f"timed out after {(time.monotonic() - started) * 1000:.0f} ms; {_outcome()}")
    except Exception as exc:  # noqa: BLE001 - fail open, log why
        _log(command, f"{type(exc).__name__}: {exc}; {_outcome()}")
    return 0


def _outcome() -> str:
    return "context was already sent, access not recorded" if _emitted else "failed open, nothing injected"


def session_start() -> int:
    """SessionStart hook: inject the best cached packet for the session's project (fail open, <= 500 ms)."""
    from resolver import hook_io

    return _guarded(
        "session-start",
        _budget(SESSION_START_LIMIT_S, HOOK_DEADLINE_S),
        lambda: _inject("session-start", hook_io.session_start_output, "startup"),
    )


def user_prompt_submit() -> int:
    """UserPromptSubmit hook: feature-flagged (``NOUS_ENABLE_USERPROMPTSUBMIT``); silent when off."""
    if not paths.is_true(os.environ.get(PROMPT_HOOK_ENV)):
        _drain_stdin()
        return 0
    from resolver import hook_io

    return _guarded(
        "user-prompt-submit",
        _budget(USER_PROMPT_LIMIT_S, PROMPT_DEADLINE_S),
        lambda: _inject(
            "user-prompt-submit", hook_io.user_prompt_submit_output, "prompt", only_new=True
        ),
    )


def _touch_wake_marker() -> None:
    folder = paths.data_dir_str()
    os.makedirs(folder, exist_ok=True)
    marker = os.path.join(folder, paths.WAKE_NAME)
    os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o600))
    os.utime(marker)


def stop() -> int:
    """Stop hook: drop a wake marker so the ingest sensor scans at once (fire-and-forget, < 20 ms)."""

    def body() -> None:
        _drain_stdin()
        _touch_wake_marker()  # a missed wake is recovered by the periodic scan

    return _guarded("stop", (MARKER_BUDGET_S, MARKER_BUDGET_S), body)


def pre_compact() -> int:
    """PreCompact hook: snapshot the compaction's metadata and wake the pipeline (< 50 ms)."""
    import json  # before the budget: importing it is most of 50 ms on a loaded machine, and compaction is no hot path

    def body() -> None:
        from resolver import hook_io
        from resolver.project import redact_name  # a token in the path is never written to disk

        payload = hook_io.read_payload(sys.stdin)
        record = {
            "ts": hook_io.now_iso(),
            "session_id": hook_io.payload_str(payload, "session_id") or None,
            "trigger": hook_io.payload_str(payload, "trigger") or None,
            "transcript_path": redact_name(hook_io.payload_str(payload, "transcript_path")) or None,
        }
        os.makedirs(paths.data_dir_str(), exist_ok=True)
        snapshot = os.path.join(paths.data_dir_str(), "precompact.jsonl")
        fd = os.open(snapshot, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            os.write(fd, (json.dumps(record) + "\n").encode("utf-8"))
        finally:
            os.close(fd)
        _touch_wake_marker()

    return _guarded("pre-compact", (MARKER_BUDGET_S, MARKER_BUDGET_S), body)


COMMANDS = {
    "session-start": session_start,
    "user-prompt-submit": user_prompt_submit,
    "stop": stop,
    "pre-compact": pre_compact,
}


def main(argv: list[str] | None = None) -> int:
    try:
        args = sys.argv[1:] if argv is None else list(argv)
        name = args[0] if args else ""
        if name in {"--version", "-V", "version"}:
            sys.stdout.write(f"nous-resolver {RESOLVER_VERSION}\n")
            return 0
        command = COMMANDS.get(name)
        if command is None:
            _drain_stdin()
            return 0
        os.umask(PRIVATE_UMASK)
        paths.record(paths.parse_options(args[1:]))
        command()
    except BaseException:  # noqa: BLE001 - fail open, whatever happened (a late watchdog alarm included)
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())

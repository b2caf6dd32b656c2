"""Ctrl-C while ``nous`` is still importing its modules: a quiet exit, never a traceback.

An uncaught ``KeyboardInterrupt`` during an import prints the whole import stack. Until a command starts
(:func:`restore` in ``main``), SIGINT exits through ``SystemExit``, which the interpreter leaves unprinted:
status 0 for ``nous run`` (Ctrl-C is how it stops), 130 for any other command.
"""

from __future__ import annotations

import logging
import signal
import sys
import threading


def _while_starting(signum, frame):
    raise SystemExit(0 if sys.argv[1:2] == ["run"] else 130)


def quiet_while_starting() -> None:
    """Install the import-time handler (main thread only; left alone under pytest or a custom handler)."""
    if (
        threading.current_thread() is threading.main_thread()
        and "pytest" not in sys.modules
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _while_starting)


def restore() -> None:
    """Back to ``KeyboardInterrupt`` once a command runs (its own handlers turn it into one line)."""
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGINT) is _while_starting:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def _quietly(signum, frame):
    """Stop on Ctrl-C without library noise: the ``KeyboardInterrupt`` lands wherever the program stands (an
    SQLAlchemy pool closing a connection logs "Exception closing connection" with the traceback), so from here
    on logging and unraisable-exception reports are off; the command's own lines are prints."""
    logging.disable(logging.CRITICAL)
    sys.unraisablehook = lambda unraisable: None
    raise KeyboardInterrupt


def stop_quietly_on_interrupt() -> None:
    """For a long-running command that turns Ctrl-C into a quiet stop (``nous run``)."""
    signal.signal(signal.SIGINT, _quietly)


STOP_SIGNAL = signal.SIGUSR1
"""What ``nous run``'s parent sends its worker beside SIGINT (see :func:`stop_requested`)."""

_stop = threading.Event()


def watch_stop_signal() -> None:
    """Note :data:`STOP_SIGNAL` in a flag that nothing resets.

    While Dagster executes a run in this process it holds SIGINT (and SIGTERM) in a handler of its own and
    forgets it when the run ends; a Ctrl-C that lands after the run's last event is lost, and ``nous run``
    went on to serve as if nobody had asked. Dagster leaves this signal alone, so the flag survives the run:
    :func:`check_stop` after each run and in the serving loop turns it into the usual quiet stop."""
    signal.signal(STOP_SIGNAL, lambda signum, frame: _stop.set())


def check_stop() -> None:
    """Raise ``KeyboardInterrupt`` when a stop was asked for (see :func:`watch_stop_signal`)."""
    if _stop.is_set():
        raise KeyboardInterrupt


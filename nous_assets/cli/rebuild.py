"""Corrections take effect at once: after ``review``, ``feedback`` or ``forget`` the packets are rebuilt now.

One in-process Dagster run of the correction steps (:mod:`nous_assets.defs.corrections`), recorded in the
instance like any other, instead of waiting for the next transcript activity; a ticking counter on a terminal
while it runs (seconds).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager

from nous_assets.cli.common import EXIT_ERROR
from nous_assets.settings import Settings


def rebuild_now(settings: Settings) -> int:
    """Run the projection -> interventions -> cache steps now (one Dagster run, in-process) so a correction shows
    in the next session's packet; 0 when done, else the one-line reason (the events stay: the next run applies
    them)."""
    import dagster as dg

    from nous_assets.defs.corrections import CORRECTION_STEPS, rebuild_packets
    from nous_assets.defs.instance import ensure_dagster_home
    from nous_assets.defs.resources import NousResource

    home, _ = ensure_dagster_home(settings)
    print(f"packets: rebuilding now ({' -> '.join(CORRECTION_STEPS)}, one run in {home})…", file=sys.stderr,
          flush=True)  # fmt: skip
    started = time.monotonic()
    with _ticking("packets: rebuilding"), dg.DagsterInstance.from_config(str(home)) as instance:
        outcome = rebuild_packets(instance=instance, resource=NousResource.of(settings))
    took = time.monotonic() - started
    if not outcome.success:
        print(f"packets: not rebuilt ({outcome.error}); the next pipeline run applies the change", file=sys.stderr)
        return EXIT_ERROR
    print(f"packets: rebuilt in {took:.1f}s ({outcome.projects_rebuilt} project(s) changed; run "
          f"{outcome.run_id[:8]})", file=sys.stderr)  # fmt: skip
    return 0


@contextmanager
def _ticking(label: str, stream=None) -> Iterator[None]:
    """On a terminal, ``label… 3s`` redrawn every half second while the body runs (a rebuild takes seconds)."""
    stream = stream or sys.stderr
    if not stream.isatty():
        yield
        return
    import threading

    done = threading.Event()
    started = time.monotonic()

    def tick() -> None:
        while not done.wait(0.5):
            stream.write(f"\r{label}… {time.monotonic() - started:.0f}s\x1b[K")
            stream.flush()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(1)
        stream.write("\r\x1b[K")
        stream.flush()

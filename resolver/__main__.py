"""Claude Code hook entry point: ``python -m resolver <hook>``. Standard library only.

Hooks never hurt the session: every command swallows its own failures and exits 0.
"""

from __future__ import annotations

import sys

from resolver import paths


def stop() -> int:
    """Stop hook: drop a wake marker so the ingest sensor scans at once (fire-and-forget, < 20 ms)."""
    try:
        marker = paths.wake_marker()
        marker.parent.mkdir(parents=True, exist_ok=True)
        marker.touch()
    except Exception:  # noqa: BLE001 - a missed wake is recovered by the periodic scan
        pass
    return 0


COMMANDS = {"stop": stop}


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        if sys.stdin is not None and not sys.stdin.isatty():
            sys.stdin.read()  # drain the hook payload so Claude Code never blocks on a full pipe
    except Exception:  # noqa: BLE001
        pass
    command = COMMANDS.get(args[0] if args else "")
    if command is None:
        return 0
    try:
        return command()
    except Exception:  # noqa: BLE001 - fail open
        return 0


if __name__ == "__main__":
    sys.exit(main())

"""Hook launcher: ``<python> -I -S <abs path>/resolver/launch.py <hook> [options]`` (standard library only).

Why not ``python -I -m resolver``: most of that start-up is ``site`` reading the venv's ``.pth`` files and
importing the editable-install finder, before any Nous code runs. ``-S`` skips ``site`` altogether, so this
script puts the one folder the resolver needs, its parent, on ``sys.path`` (appended: the standard library
is never shadowed) and runs the same :func:`resolver.__main__.main`. ``-I`` keeps the project's directory,
the script's directory and ``PYTHON*`` variables off the path (Python 3.11+ prepends neither with ``-I``),
so a ``resolver/`` folder in the project Claude Code runs the hook in cannot shadow ours.
"""

import os
import sys


def _run() -> int:
    sys.path.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    try:
        from resolver.__main__ import main
    except BaseException:  # noqa: BLE001 - a broken install fails open like every other hook error
        return 0
    return main()


if __name__ == "__main__":
    sys.exit(_run())

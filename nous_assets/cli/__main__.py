"""``python -m nous_assets.cli``: the same as the ``nous`` console script.

The guard matters: worker processes started with ``spawn`` (Dagster's multiprocess executor) import the
parent's main module again as ``__mp_main__``, and must not run the command a second time.
"""

import sys

from nous_assets.cli.main import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())

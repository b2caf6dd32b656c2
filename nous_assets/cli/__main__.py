"""``python -m nous_assets.cli``: the same as the ``nous`` console script."""

import sys

from nous_assets.cli.main import main

sys.exit(main())

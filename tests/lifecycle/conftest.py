"""The lifecycle tests build events with the store tests' generators (``tests/store/eventgen.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

_STORE_TESTS = str(Path(__file__).resolve().parents[1] / "store")
if _STORE_TESTS not in sys.path:
    sys.path.insert(0, _STORE_TESTS)

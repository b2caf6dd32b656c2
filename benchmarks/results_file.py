"""Where a benchmark script leaves its figures: one JSON file per run under ``benchmarks/results/`` (not committed),
named for the benchmark and the time it ended, so runs never overwrite each other."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parent / "results"


def save(report: Any, name: str, out_dir: Path | str = RESULTS) -> Path:
    """Write ``report`` to ``out_dir/<name>-<YYYYmmdd-HHMMSS>.json`` (the folder made if missing), say where, and
    return the path."""
    path = Path(out_dir) / f"{name}-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=2))
    print(f"saved {path}")
    return path

"""``nous ARGV`` run in the test's own process with a backfilled pipeline's environment."""

from __future__ import annotations

import contextlib
import io

import pytest


def run_cli(pipe, argv: list[str]) -> tuple[int, str]:
    """``nous ARGV`` in this process with the pipeline's environment: (exit status, stdout)."""
    from nous_assets.cli import main

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        for key, value in pipe.env.items():
            mp.setenv(key, value)
        for key in ("NOUS_DB_PATH", "NOUS_CONFIG_FILE", "NOUS_EXTRACTOR", "XDG_DATA_HOME"):
            mp.delenv(key, raising=False)
        code = main(argv)
    return code, out.getvalue()

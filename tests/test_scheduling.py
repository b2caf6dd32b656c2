"""The estimates ``tests/conftest.py`` orders the work by (``tests/support/scheduling.py``) name tests that exist:
a renamed test kept its old name there once, so the slowest end-to-end test counted as unknown (0 s) and was queued
behind every known one."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.scheduling import GROUP_SETUP_SECONDS, KNOWN_SLOW_SECONDS, MODULE_GROUPS, SHARED_FIXTURE_GROUPS

ROOT = Path(__file__).resolve().parent.parent


def _exists(nodeid_prefix: str) -> bool:
    """Whether a test module (and, after ``::``, a test whose name starts so) exists for this prefix."""
    module, _, name = nodeid_prefix.partition("::")
    path = ROOT / module
    if not path.is_file():
        return False
    return not name or re.search(rf"^def {re.escape(name)}", path.read_text(encoding="utf-8"), re.M) is not None


def test_every_estimate_names_an_existing_test():
    missing = [key for key in KNOWN_SLOW_SECONDS if not _exists(key)]
    assert missing == []


def test_every_group_is_a_module_or_a_shared_fixture_group():
    modules = [key for key in [*GROUP_SETUP_SECONDS, *MODULE_GROUPS] if key not in SHARED_FIXTURE_GROUPS.values()]
    assert [key for key in modules if not _exists(key)] == []


def test_a_renamed_test_would_be_caught():
    assert _exists("tests/evaluate/test_replay_bench.py::test_replay_of_two_duet_sessions")
    assert not _exists("tests/evaluate/test_replay_bench.py::test_replay_of_three_duet_sessions")
    assert not _exists("tests/store/contract/test_contract_vectors_graph.py::test_a_small_tenant")

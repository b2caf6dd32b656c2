"""The reasons ``nous packet --why-not`` quotes come from the build's own decisions: the exclusion rule the cache
builder filters with, and the fill of ``format_packet`` (which records why each ranked memory was left out)."""

from __future__ import annotations

from nous_assets.retrieve.cache_build import GLOBAL, Guarded, _injectable, exclusion
from nous_assets.retrieve.packet import format_packet
from nous_assets.store.projection.memory_state import Memory


def _mem(content: str, kind: str = "preference", **extra) -> dict:
    return {"content": content, "kind": kind, "type": "learning", "valid_from": "2026-02-11T10:00:00Z", **extra}


def test_the_fill_records_duplicates_and_the_budget():
    memories = {
        1: _mem("Use uv instead of pip for every install in this repository."),
        2: _mem("Use uv instead of pip for every install in this repository!"),
        3: _mem("Run the whole test suite before pushing: " + "pytest -x tests/ and then ruff check. " * 6,
                kind="workflow"),
    }
    packet = format_packet([1, 2, 3], memories, budget_chars=420, title="t")
    left = dict(packet.left_out)
    assert 1 in packet.memory_ids
    assert left[2].startswith("duplicate")
    assert 3 not in packet.memory_ids and left[3].startswith("budget")
    assert packet == format_packet([1, 2, 3], memories, budget_chars=420, title="t")  # a diagnosis, not the packet


def _guarded(**changes) -> Guarded:
    base = {"held": frozenset(), "approved": frozenset(), "extra": 0, "bar": 0.65}
    return Guarded(**{**base, **changes})


def test_exclusion_names_the_rule_that_applies_and_agrees_with_the_filter():
    cases = [
        (Memory(1, "a", "x", kind="gotcha", project_id="p", status="hypothesis"), _guarded(),
         "its status is hypothesis"),
        (Memory(2, "b", "x", kind="gotcha", project_id="p", status="observed"), _guarded(), "below the evidence bar"),
        (Memory(3, "c", "x", kind="preference", project_id="p", status="stated"), _guarded(held=frozenset({3})),
         "held by the packet guard"),
        (Memory(4, "d", "x", kind="preference", project_id="p", status="stated"), _guarded(stale=frozenset({4})),
         "stale"),
        (Memory(5, "e", "x", kind="preference", project_id="p", status="stated"), _guarded(noted=frozenset({"e"})),
         "a note (intervention)"),
        (Memory(6, "f", "x", kind="command", scope="global", project_id="q", status="stated"), _guarded(),
         "a global memory of kind command"),
        (Memory(7, "g", "x", kind="preference", scope="global", project_id="q", status="stated"), _guarded(),
         "a global memory learned elsewhere"),
        (Memory(9, "i", "CLAUDE.md: Never run the e2e suite without `--workers 1`.", kind="convention",
                project_id="p", status="stated"), _guarded(), "already in CLAUDE.md/MEMORY.md"),
    ]
    for memory, guarded, reason in cases:
        found = exclusion(memory, "p", guarded)
        assert found is not None and reason in found, (memory.id, found)
        assert not _injectable(memory, "p", guarded)
    kept = Memory(8, "h", "x", kind="preference", project_id="p", status="stated")
    assert exclusion(kept, "p", _guarded()) is None and _injectable(kept, "p", _guarded())
    docs = Memory(10, "j", "CONTRIBUTING.md: Never run the e2e suite without `--workers 1`.", kind="convention",
                  project_id="p", status="stated")  # a file Claude Code does not load
    assert exclusion(docs, "p", _guarded()) is None
    assert "the global packet carries only global ones" in exclusion(kept, GLOBAL, _guarded())

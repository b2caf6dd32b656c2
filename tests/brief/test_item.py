"""The item type (brief/item.py): metadata derived from the evidence, capped content and evidence."""

from __future__ import annotations

import pytest

from nous_assets.brief.item import MAX_CONTENT, MAX_EVIDENCE, Proof, make_item


def _proof(session: str, ts: str, n: int) -> Proof:
    return Proof(session, f"uuid-{session}-{n}", (ts, session, 0, n), f"ran `x` #{n}")


def test_sessions_dates_and_last_session_come_from_the_proofs_whatever_their_order():
    proofs = [_proof("b", "2026-03-02T10:00:00Z", 1), _proof("a", "2026-03-01T10:00:00Z", 2),
              _proof("c", "2026-03-03T10:00:00Z", 3)]  # fmt: skip
    item = make_item("commands", "cmd:test", "Run the tests with `x`.", "verified", proofs, runs=3)
    assert item.sessions == ("a", "b", "c")
    assert (item.first_seen, item.last_seen, item.last_session) == ("2026-03-01T10:00:00Z", "2026-03-03T10:00:00Z", "c")
    assert item == make_item("commands", "cmd:test", "Run the tests with `x`.", "verified", proofs[::-1], runs=3)


def test_evidence_is_capped_and_keeps_one_proof_per_session_first():
    proofs = [_proof("a", f"2026-03-01T10:00:{i:02d}Z", i) for i in range(10)] + [
        _proof("b", "2026-02-01T00:00:00Z", 99)
    ]
    item = make_item("gate", "gate", "Before committing: `a`, then `b`.", "verified", proofs, runs=11)
    assert len(item.evidence) == MAX_EVIDENCE
    assert {e["session"] for e in item.evidence} == {"a", "b"}  # the old session is not crowded out
    assert item.evidence[0]["uuid"] == "uuid-b-99"  # in time order


def test_content_is_capped_and_items_need_evidence_and_a_known_status():
    item = make_item("rules", "rule:x", "word " * 200, "stated", [_proof("a", "t", 1)], runs=1)
    assert len(item.content) <= MAX_CONTENT and item.content.endswith("…")
    with pytest.raises(ValueError):
        make_item("rules", "rule:x", "x", "stated", [], runs=0)
    with pytest.raises(ValueError):
        make_item("rules", "rule:x", "x", "certain", [_proof("a", "t", 1)], runs=1)

"""Compaction summaries (rules/compaction.py): errors-and-fixes, technical notes, decisions, file notes."""

from __future__ import annotations

from excerpts import CIPHER_DEV, SPOTTER_GQC, contents, excerpt, extract, stream_of, user

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules import compaction


def test_real_errors_and_fixes_become_gotchas():
    # spotter 258c7280 L1257: the isCompactSummary record lists "4. Errors and fixes"
    found = compaction.summaries(stream_of(excerpt(SPOTTER_GQC, 1255, 1258)))
    texts = contents(found)
    assert any(t.startswith("Stale build artifacts") and "`mix compile --force`" in t for t in texts)
    assert any("{:shared, self()}" in t and "Fixed by" in t for t in texts)
    assert all(c.anchor.is_compact_summary for c in found)
    # file notes say what a file is for
    assert "lib/spotter/transcripts/annotation.ex: Core annotation resource." in texts


def test_real_progress_reports_slips_and_one_offs_are_skipped():
    # cipher-box 2095544c L762: "Successfully created PR #123 for Phase 12", "Wrong branch name: Created
    # `feat/phase-12-mfa` instead of …" (a slip the user's correction records), "Upload 500 errors … NOT YET FIXED"
    texts = contents(compaction.summaries(stream_of(excerpt(CIPHER_DEV, 760, 763))))
    assert texts  # it does hold learnings (e.g. the .env.local pointing at staging)
    assert any(".env.local" in t and "staging" in t for t in texts)
    assert not any("PR #123" in t or "Successfully" in t for t in texts)
    assert not any("feat/phase-12-mfa" in t for t in texts)


def test_summary_is_not_mined_as_user_speech():
    summary = user(
        "This session is being continued from a previous conversation.\n\nSummary:\n4. Errors and fixes:\n"
        "   - **Always use tabs**: never use spaces in `src/app.py`.\n",
        kind="compact_summary",
        is_compact_summary=True,
    )
    out = extract(SessionBatch("proj", "sess-1", "2026-02-12", [summary]))
    assert all(r["kind"] != "preference" for r in out)

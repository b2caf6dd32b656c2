"""The assistant taking back its own last step (rules/retraction.py)."""

from __future__ import annotations

from excerpts import EPISODIC_LARGE, excerpt, stream_of

from nous_assets.extract.rules import gotchas
from nous_assets.extract.rules.retraction import retracts


def test_retractions_and_what_is_not_one():
    assert retracts("Wait, that's wrong - I want to **EXCLUDE** Prisma files from biome, not include them.")
    assert retracts("Wait, I **already tried this approach and it broke npm ci**. Let me revert that and instead …")
    assert retracts("**Actually**, that won't work: the hook runs before the formatter.")
    assert not retracts("Wait for the CI run to finish before merging.")  # no taking back
    assert not retracts("The fix is to revert the lockfile change.")  # not at the start of the turn
    assert not retracts("That's wrong in the docs, the code is right.")  # no opener: a finding about something else


def test_real_retraction_is_no_diagnosis():
    # episodic-memory large-conversation L196: "Wait, I **already tried this approach and it broke npm ci**. Let me
    # revert that and instead update the knip config …" was kept as a gotcha ("… Fix: Revert that and instead …")
    found = [c.content for c in gotchas.diagnoses(stream_of(excerpt(EPISODIC_LARGE, 185, 200)))]
    assert not any("already tried this approach" in c for c in found)

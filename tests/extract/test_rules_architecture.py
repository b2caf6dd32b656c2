"""Architecture (rules/architecture.py): stack, scripts, explanations, where things live."""

from __future__ import annotations

from excerpts import CIPHER_META, SPOTTER_0RT_EXPLORE, SPOTTER_GQC, contents, excerpt, stream_of, whole

from nous_assets.extract.rules import architecture


def test_real_stack_from_the_manifest_read():
    # spotter 6c2214d7 explore subagent L11-L14 reads mix.exs
    found = architecture.architecture(stream_of(whole(SPOTTER_0RT_EXPLORE)))
    (stack,) = [c for c in found if c.content.startswith("Stack (mix.exs)")]
    assert "ash_sqlite" in stack.content and "oban" in stack.content and stack.slot == "config:mix.exs#deps"
    assert "dep_from_hexpm" not in stack.content  # commented-out template lines are not dependencies


def test_real_stale_early_state_facts_are_skipped():
    # the same report says `spotter.ex` is a "Basic module with hello/0 function" and that no Ash domains exist
    texts = contents(architecture.architecture(stream_of(whole(SPOTTER_0RT_EXPLORE))))
    assert not any("hello/0" in t or "ash_domains: []" in t for t in texts)


def test_real_answer_to_a_question_explains_the_design():
    # cipher-box 0ea9b4b6 L543 the user asks whether the root IPNS key is derived; L544 Claude explains
    texts = contents(architecture.architecture(stream_of(excerpt(CIPHER_META, 530, 548))))
    assert any("deterministically derived via HKDF" in t for t in texts)


def test_real_report_bullets_tie_components_to_their_role():
    # spotter 258c7280 L1841: the closing report lists "`ReviewTokenStore` — ETS-backed GenServer for one-time tokens"
    texts = contents(architecture.architecture(stream_of(excerpt(SPOTTER_GQC, 1835, 1845))))
    assert any(t.startswith("ReviewTokenStore: ETS-backed GenServer") for t in texts)


def test_a_file_line_reference_keeps_the_file_and_drops_the_line_number():
    # cipher-box 0ea9b4b6 L675: "`packages/crypto/src/registry/schema.ts:94` validates …" in a bug report; the line
    # number moves with the next edit, the file and what it holds do not
    line = "- `packages/crypto/src/registry/schema.ts:94` — changed `publicKey.length !== 130` to `!== 64` (Ed25519)"
    assert architecture._location_lines(line) == [
        "packages/crypto/src/registry/schema.ts: changed `publicKey.length !== 130` to `!== 64` (Ed25519"
    ]
    # a change note that quotes no code says what the session did, not what the file holds
    assert architecture._location_lines("- `frontend/src/App.tsx` — Added a tab between two others") == []

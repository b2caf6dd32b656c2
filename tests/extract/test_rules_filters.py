"""Filters (rules/filters.py and the task-prompt rule): what never becomes a memory."""

from __future__ import annotations

import pytest
from excerpts import EPISODIC_LARGE, EVAL_PHANTOM, SPOTTER_DOV, excerpt, extract, of_kind, whole

from nous_assets.extract.rules import filters


def test_real_opening_task_prompt_is_not_mined():
    # spotter 4d5611e5 L7: "Work on bead spotter-dov. Run bd show spotter-dov … Start with the first ready task."
    out = extract(excerpt(SPOTTER_DOV, 1, 40))
    assert not any("Work on bead" in r["content"] for r in out)


def test_real_plan_prompt_is_not_mined():
    # context-evaluator 31b1be44 L3: "Implement the following plan: # Plan: Propagate `isPhantomFile` …"
    out = extract(excerpt(EVAL_PHANTOM, 1, 20))
    assert not any("Implement the following plan" in r["content"] or "12/14/15" in r["content"] for r in out)


def test_real_rebase_conflicts_are_not_gotchas():
    # episodic-memory large-conversation: `git rebase origin/main` stops on conflicts in app/lib/ai.server.ts
    out = extract(whole(EPISODIC_LARGE))
    assert not any("could not apply" in r["content"] or "Conflict in" in r["content"] for r in out)


@pytest.mark.parametrize(
    "text",
    ["All 1274 tests pass.", "Committed as b220ccc.", "PR #178 fixes the validator.", "The OTP is 767985.",
     "14 doctests, 87 tests, 0 failures",
     # cipher-box f14fdf7d L56: an estimate for one task
     "it's pure infrastructure plumbing (add SendGrid SDK, add env vars). Probably 15-20 minutes of work."],
)  # fmt: skip
def test_one_off_details(text):
    assert filters.one_off(text)


@pytest.mark.parametrize(
    "text",
    ["Run `mix test` before committing.", "The API listens on port 3000.", "Use Node 20.11 in CI.",
     "Sessions expire after 30 minutes."],
)  # fmt: skip
def test_durable_details_are_not_one_off(text):
    assert not filters.one_off(text)


@pytest.mark.parametrize(
    "text", ["git commit --no-verify -m x", "HUSKY=0 git commit", "git push --force origin main", "make lint || true"]
)
def test_bypasses(text):
    assert filters.bypass(text)


@pytest.mark.parametrize("text", ["git push --force-with-lease", "mix compile --force", "git push -u origin x"])
def test_not_bypasses(text):
    assert not filters.bypass(text)


def test_pasted_review_text():
    pasted = "pr feedback:\n\n1. Critical Bug: Double JSON Serialization (app/x.ts:178)"
    assert filters.pasted_text(pasted, "pr feedback:")
    assert not filters.pasted_text("no, use the formatter instead", "no, use the formatter instead")


def test_the_users_words_end_where_a_pasted_log_begins():
    prose = ("Seems to work but I see warnings in the console: Encountered two children with the same key. Keys "
             "should be unique so that components keep their identity.")
    frames = "".join(f"\n    at div\n    at Tree (http://localhost:3000/chunk.js:{n}:13)" for n in range(4))
    assert filters.own_words(prose + frames, prose) == "Seems to work but I see warnings in the console:"
    assert filters.own_words(prose, prose) == prose  # the same words alone: a sentence of one's own
    rule = "Always run `mix format` before committing: see lib/a.ex:12, lib/b.ex:40 and lib/c.ex:9 for the style."
    assert filters.own_words(rule, rule) == rule


def test_gotcha_kinds_never_claim_a_bypass_fixed_anything():
    out = extract(whole(EPISODIC_LARGE))
    assert not any(filters.bypass(r["content"]) for r in of_kind(out, "gotcha"))

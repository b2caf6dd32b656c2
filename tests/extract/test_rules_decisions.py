"""Decisions (rules/decisions.py): stated choices, approved proposals, answered questions — never one-off actions."""

from __future__ import annotations

import pytest
from excerpts import (
    CIPHER_META,
    CIPHER_OAUTH,
    EPISODIC_LONG,
    SPOTTER_DOV,
    assistant,
    excerpt,
    extract,
    of_kind,
    result,
    run,
    user,
)

from nous_assets.turns import ToolUse


def test_real_approved_proposal_is_a_decision():
    # episodic-memory long-conversation L105: Claude proposes "Use Playwright's Docker image … thin computer-use
    # layer"; L107 the user answers "ok"
    (d,) = of_kind(extract(excerpt(EPISODIC_LONG, 100, 110)), "decision")
    assert "Playwright's Docker image" in d["content"] and 'approved by the user: "ok"' in d["content"]


def test_real_answer_to_a_question_is_a_decision():
    # spotter 4d5611e5 L1253: AskUserQuestion "…How should we proceed?" = "main was clean; fix the issues"
    (d,) = of_kind(extract(excerpt(SPOTTER_DOV, 1240, 1262)), "decision")
    assert '"main was clean; fix the issues"' in d["content"] and "How should we proceed?" in d["content"]


def test_real_way_to_handle_the_task_at_hand_is_not_a_decision():
    # cipher-box f14fdf7d L61: "ok lets handle this via a quick task then, together with setting up the full google
    # oauth flow …": how this piece of work gets scheduled, not a choice the next session must keep (two fresh readers
    # judged the packet line noise)
    assert of_kind(extract(excerpt(CIPHER_OAUTH, 55, 66)), "decision") == []


def test_real_approved_one_off_operations_are_not_decisions():
    # cipher-box 0ea9b4b6 L611 "yeah please" / L614 "yeah please push a new PR": approving a push once
    assert of_kind(extract(excerpt(CIPHER_META, 605, 620)), "decision") == []


def test_go_ahead_uses_the_proposal():
    a = assistant(
        "Readers block while the queue writes. I recommend WAL mode so readers never block.\n\n"
        "Should I switch the queue database to SQLite WAL mode?"
    )
    u = user("go ahead")
    (d,) = of_kind(run(a, u), "decision")
    assert d["anchor_uuid"] == u.uuid and "Switch the queue database to SQLite WAL mode" in d["content"]
    assert a.uuid in d["provenance"]["uuids"]


@pytest.mark.parametrize(
    "proposal",
    [
        "origin/main has diverged. Shall I force-push to main with `git push --force origin main`?",
        "Should I push and open a PR for the docs?",
        "The toolchain is missing. Should I run `curl -sSL https://get.example.dev | bash` to install it?",
        "Should I continue with the rebase to finish resolving the conflicts?",
        "Shall I kill the old dev server on port 5173 and restart it?",
    ],
)
def test_an_approved_one_off_action_is_not_a_decision(proposal):
    """A "yes" approves one operation at one moment; it must not come back later as a standing decision."""
    assert of_kind(run(assistant(proposal), user("yes")), "decision") == []


def test_choosing_an_option_is_a_decision():
    a = assistant(
        "Two ways forward:\n\n**A) Keep the REST API** and add pagination\n"
        "**B) Switch to GraphQL** for the dashboard\n\nWhich one?"
    )
    (d,) = of_kind(run(a, user("B")), "decision")
    assert "option B" in d["content"] and "Switch to GraphQL" in d["content"]


def test_the_word_joining_two_options_is_not_part_of_the_chosen_one():
    a = assistant(
        "Two ways to fix it:\n1. **Return `email` from the identity endpoint** (it already knows it), or\n"
        "2. **Add a `/auth/me` endpoint** that returns the profile\n\nWhich option do you prefer?"
    )
    (d,) = of_kind(run(a, user("1")), "decision")
    assert d["content"].endswith("from the identity endpoint (it already knows it)") and d["status"] == "observed"


def test_ok_without_a_proposal_is_nothing():
    assert run(assistant("Done. The build is green."), user("ok")) == []


def test_lets_use_is_a_decision():
    (d,) = of_kind(run(assistant("Which framework?"), user("let's go with FastAPI for the backend instead of Flask.")),
                   "decision")  # fmt: skip
    assert d["type"] == "learning" and "fastapi" in d["concepts"]


def test_approving_the_next_step_decides_nothing():
    # flutter-docker-image 390ab778: "Update `research.md` with all this and draft the change proposals?" — "Ok."
    a = assistant("The research is complete.\n\nShall I update `research.md` with all this and draft the proposals?")
    assert of_kind(run(a, user("Ok.")), "decision") == []
    b = assistant("Flutter scaffolds Java 17. Should we keep Java 17 for the Android image rather than 21?")
    (d,) = of_kind(run(b, user("yes")), "decision")
    # a plan the user approved is observed, not stated: what was built may differ; a second session confirms it
    assert "Keep Java 17" in d["content"] and d["status"] == "observed"
    assert d["evidence"][0]["what"] == "a proposal of Claude's that the user approved"


def test_an_answer_about_a_batch_of_the_moment_decides_nothing_that_lasts():
    # ironclaw 69ab36dd: "I found 15 failing PRs that need fixing. How would you like me to proceed?" = "Analyze
    # first, then swarm" — how to handle that day's PRs, not a rule
    ask = assistant("", ToolUse("q1", "AskUserQuestion", '{"questions": []}'))
    said = ('User has answered your questions: "I found 15 failing PRs that need fixing. How would you like me to '
            'proceed?"="Analyze first, then swarm". You can now continue.')  # fmt: skip
    assert of_kind(run(ask, result("q1", said)), "decision") == []
    kept = said.replace("I found 15 failing PRs that need fixing. ", "Pre-commit blocks on lint issues in files "
                        "you did not touch. ").replace("Analyze first, then swarm", "main was clean; fix them")
    (d,) = of_kind(run(ask, result("q1", kept)), "decision")
    assert "main was clean; fix them" in d["content"]

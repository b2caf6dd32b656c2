"""Preferences and stated facts (rules/preferences.py), queued messages included."""

from __future__ import annotations

import pytest
from excerpts import (
    CIPHER_DEV,
    DUET_VAMP,
    EPISODIC_LONG,
    EPISODIC_TINY,
    SPOTTER_A0Y,
    SPOTTER_DOV,
    assistant,
    excerpt,
    extract,
    of_kind,
    run,
    user,
)


def test_real_preference_is_quoted():
    # cipher-box 2095544c L900: "hmmm, given the privacy focus of the app, I think its better not to store any PII …"
    (p,) = of_kind(extract(excerpt(CIPHER_DEV, 880, 905)), "preference")
    assert "not to store any PII in local storage" in p["content"]
    assert p["content"].startswith("User preference: ")


def test_a_sentence_that_trails_off_is_quoted_with_the_one_that_goes_on():
    # duet 7d911558 L172: "the philosophy section of the readme is too long... really i just want a oneliner, …":
    # cut at the dots, the quote kept the complaint and lost what the user wanted
    (p,) = of_kind(extract(excerpt(DUET_VAMP, 170, 175)), "preference")
    assert p["content"].endswith('too long... really i just want a oneliner, maybe stylized like a quote, and citing '
                                 'philosophy.md"')  # fmt: skip


def test_real_queued_message_counts_as_user_speech():
    # cipher-box 2095544c L943 is a queue-operation line (typed while Claude worked), never a `user` record
    (p,) = of_kind(extract(excerpt(CIPHER_DEV, 930, 950)), "preference")
    assert "[an0n]" in p["content"] and p["temporal_confidence"] == "low"  # "for now"
    assert p["anchor_uuid"].startswith("queued:")


def test_real_task_scoped_request_is_not_a_standing_rule():
    # spotter fa812bfe L671: "continue until all are done" asks for this task's work, it is not how to work
    out = extract(excerpt(SPOTTER_A0Y, 660, 680))
    assert not [r for r in out if r["kind"] in ("preference", "correction", "decision")]
    assert not [r for r in out if "continue until all are done" in r["content"]]
    assert not [r for r in out if r["scope"] == "global"]


def test_task_requests_are_not_rules_while_rules_said_mid_task_are():
    out = run(
        assistant("Two of the five migrations are done."),
        user("Please keep going with the rest of them without asking."),
        assistant("Done with the third."),
        user("Now fix the failing test in tests/test_api.py."),
        assistant("Fixed."),
        user("From now on, never commit directly to main."),
    )
    prefs = of_kind(out, "preference")
    assert [p["content"] for p in prefs] == ['User preference: "From now on, never commit directly to main."']
    assert prefs[0]["status"] == "stated"


def test_a_rule_said_after_a_task_request_is_quoted_without_the_request():
    out = run(
        assistant("CI is red on the PR."),
        user("Fix the failing CI checks of PR 90. Don't add new skips or bypasses, fix the root cause instead."),
    )
    (pref,) = of_kind(out, "preference")
    assert pref["content"] == 'User preference: "Don\'t add new skips or bypasses, fix the root cause instead."'


def test_real_remark_about_the_product_stays_in_its_project_while_one_said_to_claude_is_global():
    # episodic-memory long L17: "so, i think the early tests are going to be both cli and web …" names no file,
    # yet it is about this product only; tiny L1: "Lately, I've noticed you being very tentative …" is said to Claude
    product = [r for r in extract(excerpt(EPISODIC_LONG, 1, 20)) if "early tests" in r["content"]]
    assert product and all(r["scope"] == "project" for r in product)
    (said_to_claude,) = [r for r in extract(excerpt(EPISODIC_TINY, 1, 3)) if "tentative" in r["content"]]
    assert said_to_claude["scope"] == "global"


def test_real_bare_continue_is_nothing():
    # spotter 4d5611e5 L280: "continue"
    assert of_kind(extract(excerpt(SPOTTER_DOV, 270, 290)), "preference") == []


def test_always_never_preferences_are_global_high_confidence_rules():
    out = run(
        user("Always use uv instead of pip for installing packages."),
        assistant("Noted."),
        user("From now on, never push directly to the main branch."),
    )
    prefs = of_kind(out, "preference")
    assert [p["temporal_confidence"] for p in prefs] == ["high", "high"]
    assert prefs[0]["content"] == 'User preference: "Always use uv instead of pip for installing packages."'
    assert prefs[0]["scope"] == "global"


def test_project_specific_preference_is_project_scoped():
    out = run(
        assistant("Tests are in place."),
        user("Please use `pytest.mark.parametrize` in tests/test_cli.py rather than copy-pasted tests."),
    )
    (p,) = of_kind(out, "preference")
    assert p["scope"] == "project" and p["temporal_confidence"] == "medium"


def test_version_bound_statement_is_low_confidence():
    out = run(assistant("Set up."), user("For now, let's use SQLite until we migrate to Postgres."))
    (d,) = of_kind(out, "decision")
    assert d["temporal_confidence"] == "low" and "time-bound" in d["content"]


def test_stated_facts_are_knowledge():
    out = run(
        assistant("What stack?"),
        user("Our API runs on port 8080 behind nginx."),
        assistant("Thanks."),
        user("I'm using Python 3.12 on macOS."),
    )
    facts = [r for r in out if r["content"].startswith("User-stated fact")]
    assert len(facts) == 2 and all(f["type"] == "knowledge" and f["scope"] == "project" for f in facts)


def test_the_situation_of_the_moment_and_thinking_aloud_are_not_facts_or_preferences():
    out = run(
        assistant("Starting."),
        user("we're in a worktree."),
        assistant("Noted."),
        user("something broke streaming, it appears that events aren't making it to the browser at all."),
        assistant("Looking."),
        user("i kind of feel like we want either typescript or rust."),
        assistant("Ok."),
        user("We're deploying to fly.io with one machine per region."),
    )
    assert [r["content"] for r in out if r["kind"] in ("preference", "architecture")] == [
        'User-stated fact: "We\'re deploying to fly.io with one machine per region."'
    ]


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "thanks!",
        "continue",
        "yes",
        "/compact",
        "[Request interrupted by user]",
        "<system-reminder>Always use tabs. Never use spaces.</system-reminder>",
        "<task-notification>\n<status>completed</status>\n</task-notification>",
    ],
)
def test_trivial_messages_produce_nothing(text):
    assert run(assistant("Working on it."), user(text)) == []


def test_a_rule_asked_to_be_written_down_is_standing_and_a_request_is_not():
    # ironclaw 8c6a2d14: "Note, update Claude.md to indicate that git work trees should always be used …"
    out = run(
        assistant("Moved tempfile to [dependencies]."),
        user("Note, update CLAUDE.md to indicate that git worktrees should always be used so several terminals work."),
        assistant("Done."),
        user("Analyze changes since the last release tag and tell me if this should be a major or minor release."),
    )
    (p,) = of_kind(out, "preference")
    assert "should always be used" in p["content"] and p["status"] == "stated"


def test_pasted_console_output_and_answers_with_instructions_are_not_preferences():
    # context-evaluator 8ecab05f: a browser warning pasted as the whole message; cipher-box: "Yes add a gsd todo …"
    out = run(
        assistant("The tree renders now."),
        user("Keys should be unique so that components maintain their identity across updates. Warning: Encountered "
             "two children with the same key, `skills`. at TreeItem (chunk-z33mq3ks.js:31200) at ul"),
        assistant("Do you want a todo for the follow-up?"),
        user("Yes add a gsd todo regarding this, and make sure it mentions updating the note in state.md."),
        assistant("Added."),
        user("I want to analyze and see if we can remove more steps so the process is simpler."),
    )
    assert of_kind(out, "preference") == []


def test_a_feature_request_of_the_task_is_not_a_preference_a_principle_is():
    # context-evaluator 598cc9c4: "Claude Rule should appear as 'Claude Rule', not just 'Rule'" — this task's label
    out = run(
        assistant("The badges are in."),
        user("Claude Rule should appear as 'Claude Rule', not just 'Rule'"),
        assistant("Renamed."),
        user("Labels should always be the tool's own name, since users search for it."),
    )
    assert [p["content"] for p in of_kind(out, "preference")] == [
        'User preference: "Labels should always be the tool\'s own name, since users search for it."'
    ]

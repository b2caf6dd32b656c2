"""Corrections (rules/corrections.py): the user pushes back on what Claude said or did."""

from __future__ import annotations

from excerpts import (
    CIPHER_DEV,
    DUET_VAMP,
    EPISODIC_LARGE,
    assistant,
    bash,
    edit,
    excerpt,
    extract,
    of_kind,
    result,
    run,
    user,
)

from nous_assets.turns import ToolUse


def test_real_correction_quotes_the_user_and_names_what_it_weakens():
    # cipher-box 2095544c, L34-L45: "switch to the phase 12 branch" -> Claude creates feat/phase-12-mfa ->
    # L41 "thats not the branch I was looking for - its called feat/phase-12-multi-factor"
    (c,) = of_kind(extract(excerpt(CIPHER_DEV, 30, 50)), "correction")
    assert c["content"].startswith('User correction: "thats not the branch I was looking for')
    assert "feat/phase-12-multi-factor" in c["content"]
    assert c["weakens"] and c["scope"] == "project" and c["type"] == "learning"


def test_real_pasted_review_is_not_a_correction():
    # episodic-memory large-conversation L319 "pr feedback: 1. Critical Bug: Double JSON Serialization …" and
    # L348 "more reviewer feedback: …": a reviewer's text pasted by the user, not the user pushing back
    out = extract(excerpt(EPISODIC_LARGE, 315, 360))
    assert of_kind(out, "correction") == []
    assert not any("Critical Bug" in r["content"] or "reviewer feedback" in r["content"] for r in out)


def test_short_correction_carries_context_and_weakens():
    a1 = assistant(
        "I'll mock the database in these tests with unittest.mock so they run fast.",
        edit("/home/dev/proj/tests/test_store.py", "e1"),
    )
    r1 = result("e1", "The file /home/dev/proj/tests/test_store.py has been updated successfully.")
    u = user("no, don't mock the database here")
    a2 = assistant("You're right — the tests should use a real SQLite file via tmp_path.")
    (c,) = of_kind(run(a1, r1, u, a2), "correction")
    assert c["anchor_uuid"] == u.uuid
    assert c["content"].startswith("User correction: \"no, don't mock the database here\" — after Claude")
    assert "mock the database" in c["weakens"].lower()
    assert u.uuid in c["provenance"]["uuids"] and a1.uuid in c["provenance"]["uuids"]


def test_not_x_but_y_after_a_rejected_tool_call():
    a1 = assistant(
        "The failure comes from the migration runner, so I'll rewrite it.", edit("/home/dev/proj/db/migrate.py", "e1")
    )
    rejected = result(
        "e1", "The user doesn't want to proceed with this tool use. The tool use was rejected.", is_error=True
    )
    u = user("the issue is the formatter, not the migration runner")
    (c,) = of_kind(run(a1, rejected, u, assistant("Got it, the formatter rewrites the generated files.")), "correction")
    assert "rejected by the user" in c["content"]
    assert c["weakens"].startswith("migration runner")


def test_questions_are_not_corrections():
    assert run(assistant("I ran the tests, all green."), user("how long did the suite take?")) == []
    assert run(assistant("Frontend on :5173."), user("ok now how am i meant to get a code?")) == []


def test_status_reports_and_requests_for_work_are_not_corrections():
    # the shapes that filled packets with "User correction:" lines: the moment's state, a new task, an answer
    # typed instead of picking a question's option
    assert of_kind(run(assistant("CI should be green now."), user("It is still failing, look at the logs.")),
                   "correction") == []  # fmt: skip
    asked = assistant("Which one?", ToolUse("q1", "AskUserQuestion", '{"questions": []}'))
    refused = result("q1", "The user doesn't want to proceed with this tool use. The tool use was rejected.",
                     is_error=True)  # fmt: skip
    assert of_kind(run(asked, refused, user("Fix the bugs in the CLI flags.")), "correction") == []
    kept = run(assistant("It will sort itself out once CI catches up."),
               user("No, investigate and fix it instead of just saying it will work itself out."))  # fmt: skip
    (c,) = of_kind(kept, "correction")
    assert c["status"] == "stated" and "instead of just saying" in c["content"]


def test_a_short_fact_the_next_message_adds_on_the_same_subject_joins_the_correction():
    # cipher-box 2095544c: "you dont have access to docker here", then "docker is running on your host." — alone, a
    # reader took the second for "docker is on localhost"
    tried = assistant("Let me start the containers first.", bash("docker compose up -d", "b1"))
    refused = result("b1", "docker: command not found", is_error=True)
    first = user("did we not go through this before, you dont have access to docker here")
    second = user("docker is running on your host.")
    out = run(tried, refused, first, assistant("Sorry, I will not use docker."), second, assistant("Understood."))
    (c,) = of_kind(out, "correction")
    assert c["content"].startswith('User correction: "did we not go through this before, you dont have access to '
                                   'docker here" — then: "docker is running on your host."')  # fmt: skip
    assert second.uuid in c["provenance"]["uuids"]
    assert not any(r["content"].startswith("User-stated fact") for r in out)
    # on another subject, or after a message that corrected nothing, the fact stands alone
    other = run(tried, refused, first, assistant("Sorry."), user("the API is running on port 3000."))
    assert any(r["content"].startswith("User-stated fact") for r in other)
    assert all("port 3000" not in r["content"] for r in of_kind(other, "correction"))


def test_a_verdict_on_the_thing_at_hand_after_a_rejected_call_is_no_lesson():
    # duet 7d911558 L109-L118: Claude deleted a hook file, the user objected, Claude tried to restore it, the user
    # refused the write and said "ah but it's about the old vamp note, so we don't need it": nothing for next time
    assert of_kind(extract(excerpt(DUET_VAMP, 100, 120)), "correction") == []
    kept = run(assistant("I'll add a mock for the store.", edit("/p/tests/t.py", "e1")),
               result("e1", "The user doesn't want to proceed with this tool use.", is_error=True),
               user("we don't need to mock it, use the real database"))  # fmt: skip
    assert of_kind(kept, "correction")  # "don't need to <do>" still says how to work


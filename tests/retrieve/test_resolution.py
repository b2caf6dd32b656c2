"""A problem question on a real SQLite file: the turn that says how the problem ended answers before the guesses
the debugging went through, which repeat the question's words more often."""

from __future__ import annotations

import pytest

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.resolution import asks_about_a_problem, reports_resolution
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-app"
GUESS = "The uploads fail with a 500 because the upload endpoint has no storage key; the 500 on upload is likely that."
RESOLUTION = "Uploads work now. The fix was pointing STORAGE_API_URL at the storage node's own address."
TURNS = ["why do uploads fail with a 500?", GUESS, "no, the key is set", RESOLUTION]


@pytest.fixture
def debugging(conn):
    upsert_chunks(conn, [chunk_turn(i, t, role="user" if i % 2 == 0 else "assistant") for i, t in enumerate(TURNS)])
    return conn


def _order(conn, settings, text: str) -> list[str]:
    results = retrieve(conn, Query.from_text(text, project_id=PROJECT), settings, include_episodes=True)
    return [r.content for r in results if r.content in (GUESS, RESOLUTION)]


def test_the_resolution_answers_a_problem_question_before_the_guesses(debugging, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    assert _order(debugging, settings, "Why do uploads fail with a 500?")[0] == RESOLUTION
    # the same words asked as something else: score order, and the guess repeats them more
    assert _order(debugging, settings, "uploads 500 upload endpoint")[0] == GUESS


@pytest.mark.parametrize("text", ["The fix was pointing X at Y.", "fixed it by restarting the node",
                                  "Root cause: the cache key.", "The tests are working now.",
                                  "the bug was in parse()", "Found it. The cache holds a stale copy.",
                                  "Found the culprit — a second config file."])  # fmt: skip
def test_resolutions(text):
    assert reports_resolution(text)


@pytest.mark.parametrize("text", ["The fix is complete.", "Let me check the logs.", "It might be the key.", "",
                                  "I have not found it yet.", "Let me see whether I found the cause."])  # fmt: skip
def test_not_resolutions(text):
    assert not reports_resolution(text)


def test_problem_questions():
    assert asks_about_a_problem("Why did the release fail?")
    assert asks_about_a_problem("the build doesn't work on macOS")
    assert not asks_about_a_problem("Where does the index live?")

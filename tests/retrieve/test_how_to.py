"""How-to questions on a real SQLite file: the brief's procedure answers before the chatter that repeats its
words; a question of another shape ranks by score alone."""

from __future__ import annotations

import pytest

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.procedures import is_how_to
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-app"
CHATTER = [
    "can we release the new version today",
    "The release workflow for the new release is queued; I'll watch the release run and report on the release.",
    "is the release done",
    "The release finished: release v1.4.0 is out, the release notes are on the release page.",
]
PROCEDURE = ("To release: `gh workflow run release.yml -f bump=<major|minor|patch>`, then "
             "`gh run watch <run-id> --exit-status`.")  # fmt: skip


def _turn(n: int, text: str):
    return chunk_turn(n, text, role="user" if n % 2 == 0 else "assistant")


@pytest.fixture
def history(conn, store):
    upsert_chunks(conn, [_turn(i, t) for i, t in enumerate(CHATTER)])
    payload = {"content": PROCEDURE, "extractor_version": "t", "concepts": ["release", "gh"], "edges": [],
               "scope": "project", "kind": "workflow", "status": "verified", "slot": "brief:procedure:release"}
    store.append(LearningEvent("LearningExtracted", "brief-release", payload, "s1", PROJECT, "historical_backfill",
                               "k-brief-release", valid_from="2026-02-10T10:00:00Z"))  # fmt: skip
    project(conn)
    return conn


def _first(conn, settings, text: str) -> str:
    return retrieve(conn, Query.from_text(text, project_id=PROJECT), settings, include_episodes=True)[0].content


def test_a_how_to_question_gets_the_procedure_first(history, tmp_path):
    settings = load_settings({"HOME": str(tmp_path)})
    assert _first(history, settings, "how do we cut a release?") == PROCEDURE
    # the same words asked as something else: the chatter that repeats them outranks the procedure
    assert _first(history, settings, "release notes release page release") != PROCEDURE


GATE = "Before committing: `mix compile --warnings-as-errors`, then `mix test`, then `mix credo --strict`."
JS_TESTS = "The JS tests run with `cd assets && npx vitest run`; the JS DOM tests opt in to happy-dom."


def test_a_procedure_that_shares_a_word_with_the_question_does_not_jump_the_answer(conn, store, tmp_path):
    """The quality gate shares "tests" with "how do I run the JS tests?": a weak match stays in score order."""
    upsert_chunks(conn, [_turn(1, JS_TESTS)])
    payload = {"content": GATE, "extractor_version": "t", "concepts": ["mix"], "edges": [], "scope": "project",
               "kind": "workflow", "status": "verified", "slot": "brief:gate"}
    store.append(LearningEvent("LearningExtracted", "brief-gate", payload, "s1", PROJECT, "historical_backfill",
                               "k-brief-gate", valid_from="2026-02-10T10:00:00Z"))  # fmt: skip
    project(conn)
    settings = load_settings({"HOME": str(tmp_path)})
    assert _first(conn, settings, "How do I run the JS tests?") == JS_TESTS
    assert _first(conn, settings, "How do I run the checks before committing?") == GATE


@pytest.mark.parametrize("text", ["How do I run the tests?", "how to deploy", "What's the command to lint?",
                                  "which script builds the docs", "  how can we release"])  # fmt: skip
def test_how_to_questions(text):
    assert is_how_to(text)


@pytest.mark.parametrize("text", ["Why did the release fail?", "Where does the index live?", "release howto notes",
                                  "What did we decide about how to name branches?", ""])  # fmt: skip
def test_other_questions(text):
    assert not is_how_to(text)

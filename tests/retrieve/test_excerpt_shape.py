"""Announcements are no answers (real SQLite file): a short chunk that opens with what the assistant is about to do
ranks below the chunk that says what it found, even when it repeats more of the question's words."""

from __future__ import annotations

import pytest

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve.excerpt_shape import DISCOUNT, announces
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-app"
ANNOUNCE = "Let me check what the coverage ratchet is set to."
FINDING = "The coverage ratchet is set to 56.8; the ratchet is in ci.yml."


def _turn(n: int, text: str):
    return chunk_turn(n, text, role="assistant")


def test_the_finding_ranks_above_the_announcement(conn, tmp_path):
    upsert_chunks(conn, [_turn(0, ANNOUNCE), _turn(20, FINDING)])  # far apart: neither is the other's context
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text("what is the coverage ratchet set to?", project_id=PROJECT)
    results = retrieve(conn, query, settings, include_episodes=True, explain=True)
    assert [r.content for r in results] == [FINDING, ANNOUNCE]
    announced, found = results[1], results[0]
    assert announced.score / DISCOUNT > found.score  # by relevance alone the announcement led


@pytest.mark.parametrize("text", [ANNOUNCE, "Let me look at the failing test.", "Now I'll run the suite again.",
                                  "  I'm going to check the CI logs first"])  # fmt: skip
def test_announcements(text):
    assert announces(text)


@pytest.mark.parametrize("text", [FINDING, "Let me know if this works?" + " It does." * 40,
                                  "The release is queued; I'll watch it.", "did you go to the concert?"])  # fmt: skip
def test_not_announcements(text):
    assert not announces(text)

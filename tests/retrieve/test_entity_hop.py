"""The entity hop: a second round searches the names the first round's best turns mention (real SQLite)."""

from __future__ import annotations

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve import episodic
from nous_assets.retrieve.episodic import hop_terms
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-talk"


def _turn(n: int, text: str, session: str, day: str):
    return chunk_turn(n, text, role="user" if n % 2 else "assistant", project=PROJECT, session=session, day=day,
                      cwd="/home/dev/talk")


FIRST = ["Caroline: I recommend a book called Becoming Nicole, you would love it.",
         "Melanie: thanks, that sounds lovely.", "Caroline: it moved me a lot.", "Melanie: good to hear."]
SECOND = ["Melanie: the garden is full of tomatoes this year.", "Melanie: the kids painted the fence.",
          "Melanie: we baked bread on the weekend.", "Melanie: Becoming Nicole made me cry at the end."]
QUESTION = "Which book did Caroline recommend?"


def _found(conn, tmp_path) -> list[str]:
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text(QUESTION, project_id=PROJECT)
    return [r.content for r in retrieve(conn, query, settings, k=10, include_episodes=True)]


def test_hop_terms_are_the_names_the_question_lacks():
    assert hop_terms(FIRST[:1], QUESTION) == ["Becoming Nicole"]
    assert hop_terms(["Caroline: we met Jon in Rome. The trip was long."], "Where did Caroline meet Jon?") == ["Rome"]


def test_a_turn_sharing_no_word_with_the_question_is_reached_through_the_first_turns_name(conn, tmp_path,
                                                                                           monkeypatch):
    upsert_chunks(conn, [_turn(i, t, "s1", "2023-05-08") for i, t in enumerate(FIRST)]
                  + [_turn(i, t, "s2", "2023-06-20") for i, t in enumerate(SECOND)])
    monkeypatch.setattr(episodic, "HOP_WEIGHT", 0.0)
    without = _found(conn, tmp_path)
    assert FIRST[0] in without and SECOND[3] not in without
    monkeypatch.setattr(episodic, "HOP_WEIGHT", 0.5)
    with_hop = _found(conn, tmp_path)
    assert with_hop[0] == FIRST[0] and SECOND[3] in with_hop  # the second piece of the answer joins, below
    assert SECOND[0] not in with_hop  # the same session's unrelated turns do not

"""The answer follows the question: a reply borrows the match of the question turn it answers (real SQLite)."""

from __future__ import annotations

from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.retrieve import episodic
from nous_assets.retrieve.episodic import asks_about
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.search import retrieve
from nous_assets.settings import load_settings
from tests.retrieve.chunk_turns import chunk_turn

PROJECT = "-home-dev-talk"
ASKED = "Caroline: Wow Melanie, that painting is lovely! What inspired the painting?"
REPLY = "Melanie: Thanks! A walk along the lighthouse cliffs at dawn last spring."
CHATTER = [  # turns of other sessions that repeat the question's words and answer nothing
    "Melanie: my painting class was fun, everyone felt inspired by painting.",
    "Caroline: painting sounds relaxing, Melanie, I feel inspired to try painting.",
    "Melanie: the kids loved the painting workshop, an inspired painting day.",
]
QUESTION = "What inspired Melanie's painting?"


def _turn(n: int, text: str, session: str):
    return chunk_turn(n, text, role="user" if n % 2 == 0 else "assistant", project=PROJECT, session=session,
                      day="2023-05-08", cwd="/home/dev/talk")  # fmt: skip


def _store(conn, asked: str) -> None:
    filler = ["Caroline: hi!", "Melanie: hey, long time.", "Caroline: the weather is nice.", "Melanie: so true."]
    upsert_chunks(conn, [_turn(i, t, "s1") for i, t in enumerate([*filler, asked, REPLY, *filler])]
                  + [_turn(i, t, f"c{i}") for i, t in enumerate(CHATTER)])  # fmt: skip


def _found(conn, tmp_path, k: int = 5) -> list[str]:
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text(QUESTION, project_id=PROJECT)
    return [r.content for r in retrieve(conn, query, settings, k=k, include_episodes=True)]


def test_a_question_sentence_must_hold_a_word_of_the_question():
    asked = {"inspi", "paint", "melan"}
    assert asks_about(ASKED, asked)
    assert not asks_about("Melanie: I love painting and I was inspired. How about you?", asked)
    assert not asks_about("Melanie: painting, inspired, all of it.", asked)  # no question at all


def test_the_reply_to_the_matching_question_joins_the_first_results(conn, tmp_path, monkeypatch):
    _store(conn, ASKED)
    monkeypatch.setattr(episodic, "REPLY_WEIGHT", 0.0)
    without = _found(conn, tmp_path)
    assert ASKED in without and REPLY not in without
    monkeypatch.setattr(episodic, "REPLY_WEIGHT", 1.0)
    assert REPLY in _found(conn, tmp_path)


def test_a_turn_that_matched_on_other_words_lends_its_reply_nothing(conn, tmp_path):
    matched = "Caroline: Melanie, that painting inspired me so much! How are the kids?"
    _store(conn, matched)
    found = _found(conn, tmp_path)
    assert matched in found and REPLY not in found


CODING = "-home-dev-api"
REPORT = "hmm the staging deploy fails: `relation users does not exist`"
ANSWER = "Staging was created before the last migration, so its schema lags; run the migrations there first."
NOISE = [  # other sessions that share a word or two with the question and explain nothing
    "The staging deploy went out on Friday.",
    "Users like the new deploy page.",
    "A relation table was added for users.",
]


def _coding_store(conn, report: str) -> None:
    def turn(n: int, text: str, session: str):
        return chunk_turn(n, text, role="user" if n % 2 == 0 else "assistant", project=CODING, session=session,
                          day="2026-02-10", cwd="/home/dev/api")  # fmt: skip

    upsert_chunks(conn, [turn(0, report, "s1"), turn(1, ANSWER, "s1")]
                  + [turn(1, t, f"n{i}") for i, t in enumerate(NOISE)])  # fmt: skip


def _text_match(conn, tmp_path, question: str) -> dict[str, float]:
    """{result text: its text signal} for the question."""
    settings = load_settings({"HOME": str(tmp_path)})
    query = Query.from_text(question, project_id=CODING)
    found = retrieve(conn, query, settings, k=5, include_episodes=True, explain=True)
    return {r.content: r.breakdown["s_text"] for r in found}


def test_a_users_problem_report_lends_its_reply_to_a_question_about_the_problem(conn, tmp_path, monkeypatch):
    _coding_store(conn, REPORT)
    question = "Why does the staging deploy fail with relation users does not exist?"
    monkeypatch.setattr(episodic, "REPLY_WEIGHT", 0.0)
    alone = _text_match(conn, tmp_path, question)
    assert alone[ANSWER] < alone[REPORT]
    monkeypatch.setattr(episodic, "REPLY_WEIGHT", 1.0)
    lent = _text_match(conn, tmp_path, question)
    assert lent[ANSWER] == lent[REPORT]  # the answer matches the question as well as the report does
    # the same words asked about no problem: the report is no question, and lends nothing
    other = _text_match(conn, tmp_path, "Which relation of users does the staging deploy list?")
    assert other[ANSWER] < other[REPORT]

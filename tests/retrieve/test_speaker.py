"""The speaker lever: a question naming one participant prefers what that participant said."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from nous_assets.retrieve import scoring
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.scoring import EPISODE, Candidate, score, speaker_of
from nous_assets.settings import RetrieveSettings, Settings

SAID = "2023-07-03T10:00:00.000000Z"


def _settings() -> Settings:
    base = Settings(Path("/nonexistent"), Path("/nonexistent"), Path("/nonexistent/db"), Path("/nonexistent/a"), "*")
    return dataclasses.replace(base, retrieve=dataclasses.replace(RetrieveSettings(), mode="weighted"))


TURNS = [  # Caroline's question repeats the words; Melanie's reply is the answer
    (1, "Caroline: Melanie, what do you do to relax after work? Do you relax at all?", -3.0),
    (2, "Melanie: Pottery is how I relax, I go to a class every week.", -2.8),
]


def _ranked(question: str) -> list[int]:
    cands = [Candidate(i, row_kind=EPISODE, content=text, created_at=SAID, valid_from=SAID, bm25=b,
                       concepts=frozenset({"relax"})) for i, text, b in TURNS]
    return [r.key.id for r in score(cands, Query(text=question, concepts={"relax"}), _settings())]


def test_speaker_of_reads_the_turns_opening_name():
    assert speaker_of(TURNS[0][1]) == "Caroline" and speaker_of("Jon Smith: hi") == "Jon Smith"
    assert speaker_of("no speaker here: just text") is None


def test_the_named_speakers_turn_outranks_a_better_text_match_by_the_other(monkeypatch):
    monkeypatch.setattr(scoring, "SPEAKER_BOOST", 0.0)
    assert _ranked("What does Melanie do to relax?") == [1, 2]  # without the lever the text match wins
    monkeypatch.setattr(scoring, "SPEAKER_BOOST", 0.15)
    assert _ranked("What does Melanie do to relax?") == [2, 1]


def test_a_question_naming_both_speakers_or_none_is_left_as_it_is(monkeypatch):
    monkeypatch.setattr(scoring, "SPEAKER_BOOST", 0.15)
    assert _ranked("How do Caroline and Melanie relax?") == [1, 2]
    assert _ranked("What helps someone relax?") == [1, 2]


def test_a_memory_opening_with_a_label_is_no_speaker(monkeypatch):
    monkeypatch.setattr(scoring, "SPEAKER_BOOST", 0.15)
    memory = Candidate(3, content="Melanie: a learning whose text opens like a turn", created_at=SAID,
                       valid_from=SAID, bm25=-2.8, concepts=frozenset({"relax"}))  # fmt: skip
    turn = Candidate(1, row_kind=EPISODE, content=TURNS[0][1], created_at=SAID, valid_from=SAID, bm25=-3.0,
                     concepts=frozenset({"relax"}))  # fmt: skip
    ranked = score([memory, turn], Query(text="What does Melanie do to relax?", concepts={"relax"}), _settings())
    assert [r.breakdown["levers"] for r in ranked] == [1.0, 1.0]

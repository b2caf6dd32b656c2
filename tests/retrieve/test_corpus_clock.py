"""Recency from the corpus's own clock: a conversation moved in time ranks the same, whatever today is."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from pathlib import Path

from nous_assets.retrieve import scoring
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.scoring import EPISODE, Candidate, corpus_clock, score
from nous_assets.settings import RetrieveSettings, Settings
from nous_assets.timeutil import parse_time, to_iso

NOW = "2026-03-01T00:00:00.000000Z"  # the wall clock of the test: never what recency is measured from


def _settings() -> Settings:
    base = Settings(Path("/nonexistent"), Path("/nonexistent"), Path("/nonexistent/db"), Path("/nonexistent/a"), "*")
    return dataclasses.replace(base, retrieve=dataclasses.replace(RetrieveSettings(), mode="weighted"))


def _turns(shift_days: int) -> list[Candidate]:
    """Three memories of one project (May, June, July 2023), moved by ``shift_days``; the older ones match better."""
    said = ["2023-05-08T13:56:00Z", "2023-06-09T10:00:00Z", "2023-07-15T18:00:00Z"]
    bm25 = [-3.0, -2.6, -2.2]
    out = []
    for i, (when, b) in enumerate(zip(said, bm25, strict=True), start=1):
        stamp = to_iso(parse_time(when) + timedelta(days=shift_days))
        out.append(Candidate(i, content=f"learning {i} about the camping trip", created_at=stamp,
                             valid_from=stamp, temporal_confidence="high", bm25=b, concepts=frozenset({"camping"})))
    return out


def _ranking(shift_days: int) -> list[tuple[int, float]]:
    query = Query(text="camping trip", concepts={"camping"}, now=NOW)
    return [(r.key.id, round(r.score, 9)) for r in score(_turns(shift_days), query, _settings())]


def test_the_clock_is_the_latest_moment_of_the_corpus_not_now():
    query = Query(text="camping", now=NOW)
    assert corpus_clock(_turns(0), query) == to_iso(parse_time("2023-07-15T18:00:00Z"))
    assert corpus_clock(_turns(0), Query(text="camping", now=NOW, as_at="2023-06-01T00:00:00Z")).startswith(
        "2023-06-01"
    )


def test_a_conversation_moved_three_years_or_400_days_back_ranks_and_scores_the_same():
    same = _ranking(0)
    assert _ranking(1096) == same
    assert _ranking(-400) == same
    assert same[0][0] == 3  # the newest memory is recent by the project's own clock: recency counts


def test_with_the_wall_clock_the_moved_copy_would_rank_differently(monkeypatch):
    monkeypatch.setattr(scoring, "CORPUS_CLOCK", False)
    assert _ranking(1096) != _ranking(0)  # what the corpus clock removes: a lever keyed to today's date


def test_transcript_chunks_do_not_age_they_are_evidence_of_when_something_was_said():
    turns = [Candidate(i, row_kind=EPISODE, content=f"turn {i} about camping", created_at=when, valid_from=when,
                       bm25=-2.0, concepts=frozenset({"camping"}))
             for i, when in ((1, "2023-05-08T13:56:00Z"), (2, "2023-07-15T18:00:00Z"))]
    ranked = score(turns, Query(text="camping", concepts={"camping"}, now=NOW), _settings())
    assert [r.breakdown["s_recency"] for r in ranked] == [0.0, 0.0]
    assert ranked[0].score == ranked[1].score

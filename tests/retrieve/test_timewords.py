"""Time words resolved against the corpus's own clock: a turn's "last week" is a week before it was said."""

from __future__ import annotations

from datetime import date

from nous_assets.retrieve.timewords import asks_when, event_ranges, overlaps, question_ranges

SAID = date(2023, 7, 3)  # a Monday


def test_relative_words_resolve_against_the_day_the_turn_was_said_not_today():
    assert event_ranges("I went camping last week", SAID) == [(date(2023, 6, 26), date(2023, 7, 2))]
    assert event_ranges("we did it yesterday", SAID) == [(date(2023, 7, 2), date(2023, 7, 2))]
    assert event_ranges("ran a race two days ago", SAID) == [(date(2023, 7, 1), date(2023, 7, 1))]
    assert event_ranges("last Friday was great", SAID) == [(date(2023, 6, 30), date(2023, 6, 30))]
    assert event_ranges("I painted that last year", SAID) == [(date(2022, 1, 1), date(2022, 12, 31))]
    assert event_ranges("it was last month", SAID) == [(date(2023, 6, 1), date(2023, 6, 30))]


def test_the_same_words_said_three_years_later_mean_three_years_later():
    later = date(2026, 7, 6)  # also a Monday
    assert event_ranges("I went camping last week", later) == [(date(2026, 6, 29), date(2026, 7, 5))]


def test_a_month_without_a_year_is_its_latest_one_by_the_day_said():
    assert event_ranges("back in October", SAID) == [(date(2022, 10, 1), date(2022, 10, 31))]
    assert event_ranges("in June", SAID) == [(date(2023, 6, 1), date(2023, 6, 30))]
    assert event_ranges("you may like it", SAID) == []  # the verb, not the month


def test_question_periods_and_when_questions():
    june = question_ranges("When did Melanie go camping in June?", date(2023, 10, 20))
    assert june == [(date(2023, 6, 1), date(2023, 6, 30))]
    assert question_ranges("What did Jon do during the summer?", date(2023, 10, 20)) == [
        (date(2023, 6, 1), date(2023, 8, 31))
    ]
    assert asks_when("When did Gina open her store?") and asks_when("How long ago was her birthday?")
    assert not asks_when("What did Gina open?")


def test_a_turn_said_in_july_about_last_month_meets_a_question_about_june():
    turn = event_ranges("we went camping last month", SAID)
    question = question_ranges("Where did she camp in June?", date(2023, 10, 20))
    assert overlaps(turn, question)
    assert not overlaps(event_ranges("we went camping yesterday", SAID), question)

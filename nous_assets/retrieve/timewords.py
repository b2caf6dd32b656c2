"""Time words read against the corpus's own clock: what a turn's "last week" means, what a question's "in June" asks.

A turn says "we went camping last week"; the event is a week before the turn was said, not a week before today.
:func:`event_ranges` resolves a text's relative and calendar expressions ("yesterday", "last week", "two days
ago", "last Friday", "last year", "in June", "2022") against the moment the text was said, so a question about
"June" meets a turn said on 3 July about "last month". :func:`question_ranges` does the same for a question,
against the question's own date (the latest event of the corpus when the question carries none), never the wall
clock. :func:`asks_when` tells a question that asks for a time ("when", "how long ago", "what year").

Every range is a closed ``(first_day, last_day)`` pair of :class:`datetime.date`. Nothing here knows any
conversation's words or dates: only English calendar vocabulary.
"""

from __future__ import annotations

import re
from calendar import monthrange
from datetime import date, timedelta

DateRange = tuple[date, date]

_MONTHS = {
    name: n
    for n, names in enumerate(
        (("january", "jan"), ("february", "feb"), ("march", "mar"), ("april", "apr"), ("may",), ("june", "jun"),
         ("july", "jul"), ("august", "aug"), ("september", "sep", "sept"), ("october", "oct"),
         ("november", "nov"), ("december", "dec")),
        start=1,
    )
    for name in names
}
_WEEKDAYS = {d: n for n, d in enumerate(("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"))}
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7,
            "eight": 8, "nine": 9, "ten": 10, "couple": 2, "few": 3, "several": 3}
_SEASONS = {"spring": (3, 5), "summer": (6, 8), "fall": (9, 11), "autumn": (9, 11)}
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

_AGO = re.compile(r"\b(\d+|an?|one|two|three|four|five|six|seven|eight|nine|ten|couple|few|several)"
                  r"(?: of)? (day|week|month|year)s? ago\b")
_RELATIVE = re.compile(r"\b(last|next|this|past) (week|weekend|month|year|night|" + "|".join(_WEEKDAYS) + "|"
                       + "|".join(_SEASONS) + r")\b")
_ON_WEEKDAY = re.compile(r"\b(?:on|this|past) (" + "|".join(_WEEKDAYS) + r")\b")
_MONTH_NAME = re.compile(r"\b(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\b(?:,? (\d{4}))?")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
_SEASON = re.compile(r"\b(?:in|during|this|that) (?:the )?(" + "|".join(_SEASONS) + r")\b")
_DAY_WORDS = {"yesterday": -1, "today": 0, "tonight": 0, "tomorrow": 1}
_DAY_WORD = re.compile(r"\b(yesterday|today|tonight|tomorrow)\b")
_WHEN = re.compile(
    r"^\s*(when|what (year|month|date|day|time)|how long (ago|has|have|did|was)|which (year|month|day))\b"
)


def _month(year: int, month: int) -> DateRange:
    return date(year, month, 1), date(year, month, monthrange(year, month)[1])


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1


def _week_of(day: date) -> DateRange:
    start = day - timedelta(days=day.weekday())
    return start, start + timedelta(days=6)


def _weekday_before(said: date, weekday: int) -> date:
    back = (said.weekday() - weekday) % 7 or 7
    return said - timedelta(days=back)


def _relative(word: str, unit: str, said: date) -> DateRange | None:
    step = {"last": -1, "past": -1, "next": 1, "this": 0}[word]
    if unit == "night":
        return (said - timedelta(days=1),) * 2 if step < 0 else (said, said)
    if unit in ("week", "weekend"):
        start, end = _week_of(said + timedelta(days=7 * step))
        return (end - timedelta(days=1), end) if unit == "weekend" else (start, end)
    if unit == "month":
        return _month(*_shift_month(said, step))
    if unit == "year":
        year = said.year + step
        return date(year, 1, 1), date(year, 12, 31)
    if unit in _WEEKDAYS:
        if step > 0:
            ahead = (_WEEKDAYS[unit] - said.weekday()) % 7 or 7
            return (said + timedelta(days=ahead),) * 2
        return (_weekday_before(said, _WEEKDAYS[unit]),) * 2
    if unit in _SEASONS:
        first, last = _SEASONS[unit]
        year = said.year + min(step, 0) if step < 0 or said.month >= first else said.year
        return date(year, first, 1), _month(year, last)[1]
    return None


def _ago(count: str, unit: str, said: date) -> DateRange:
    n = int(count) if count.isdigit() else _NUMBERS.get(count, 1)
    days = n * _UNIT_DAYS[unit]
    slack = max(1, _UNIT_DAYS[unit] // 2) if unit != "day" else 0
    centre = said - timedelta(days=days)
    return centre - timedelta(days=slack), centre + timedelta(days=slack)


def _calendar(text: str, said: date) -> list[DateRange]:
    """Named months (with or without a year) and bare years; a month without a year is its latest one by ``said``."""
    out: list[DateRange] = []
    for m in _MONTH_NAME.finditer(text):
        name, year = m.group(1), m.group(2)
        if name == "may" and not year:
            continue  # "may" is far more often the verb
        month = _MONTHS[name]
        y = int(year) if year else (said.year if month <= said.month else said.year - 1)
        out.append(_month(y, month))
    named_years = {m.group(2) for m in _MONTH_NAME.finditer(text) if m.group(2)}
    out += [(date(int(y), 1, 1), date(int(y), 12, 31)) for y in _YEAR.findall(text) if y not in named_years]
    return out


def event_ranges(text: str, said: date) -> list[DateRange]:
    """The days ``text`` (said on ``said``) talks about: relative words resolved against ``said``, calendar names."""
    low = (text or "").lower()
    out = [(said + timedelta(days=_DAY_WORDS[w]),) * 2 for w in _DAY_WORD.findall(low)]
    out += [_ago(n, u, said) for n, u in _AGO.findall(low)]
    out += [r for w, u in _RELATIVE.findall(low) if (r := _relative(w, u, said))]
    out += [(_weekday_before(said, _WEEKDAYS[d]),) * 2 for d in _ON_WEEKDAY.findall(low)]
    return out + _calendar(low, said) + _seasons(low, said)


def _seasons(low: str, day: date) -> list[DateRange]:
    """"in/during the summer": the latest such season that began by ``day``."""
    out = []
    for season in _SEASON.findall(low):
        first, last = _SEASONS[season]
        year = day.year if day.month >= first else day.year - 1
        out.append((date(year, first, 1), _month(year, last)[1]))
    return out


def question_ranges(text: str, asked: date) -> list[DateRange]:
    """The periods a question restricts itself to ("in June", "in 2022", "last week", "during the summer")."""
    low = (text or "").lower()
    out = _calendar(low, asked) + [_ago(n, u, asked) for n, u in _AGO.findall(low)]
    out += [r for w, u in _RELATIVE.findall(low) if (r := _relative(w, u, asked))]
    return out + _seasons(low, asked)


def asks_when(text: str) -> bool:
    """Whether a question asks for a time ("When did...", "What year...", "How long ago...")."""
    return bool(_WHEN.match((text or "").lower()))


def overlaps(ranges: list[DateRange], others: list[DateRange], slack_days: int = 0) -> bool:
    """Whether any range of ``ranges`` meets any of ``others`` (each widened by ``slack_days``)."""
    pad = timedelta(days=slack_days)
    return any(a0 - pad <= b1 and b0 - pad <= a1 for a0, a1 in ranges for b0, b1 in others)

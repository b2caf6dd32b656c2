"""What the user says: one pass over a stream's user messages, handing each to the speech rules.

Order matters inside one message: an option pick or an approval first (it consumes the message's first
sentence), then a correction (its sentences are used up), then the remaining sentences as preferences,
decisions or stated facts. Task prompts, slash-command arguments, pasted text (logs, review comments,
transcripts) and generated records are never mined. A short fact the next message adds on the subject of a
correction joins that correction (:func:`_join_follow_ups`).
"""

from __future__ import annotations

import re

from nous_assets.extract.rules import corrections, decisions, evidence, filters, preferences
from nous_assets.extract.rules.session import Cand, Stream
from nous_assets.extract.rules.text import (
    TRIVIAL_RE,
    clean_md,
    fit,
    leading_prose,
    one_line,
    sentences,
    strip_noise,
    words,
)
from nous_assets.turns import Turn

MAX_PER_MESSAGE = 4


def speech(s: Stream) -> list[Cand]:
    """Candidates from every user message of a main (non-subagent) stream."""
    if s.sidechain:
        return []
    out: list[Cand] = []
    users = s.user_positions
    corrected: Cand | None = None  # the correction the user's previous message made, if any
    for ui, pos in enumerate(users):
        if pos in s.task_positions:
            corrected = None
            continue
        prev_user = users[ui - 1] if ui else -1
        next_user = users[ui + 1] if ui + 1 < len(users) else len(s.turns)
        between = s.turns[prev_user + 1 : pos]
        episode = [t for t in between if t.role == "assistant" and t.kind == "message"]
        after = [t for t in s.turns[pos + 1 : next_user] if t.role == "assistant" and t.kind == "message"]
        found = _message(s, pos, s.turns[pos], episode, between, after)
        if corrected is not None:
            found = _join_follow_ups(corrected, found)
        out.extend(found)
        corrected = next((c for c in found if c.kind == "correction"), None)
    out.extend(decisions.answers(s))
    return out


FOLLOW_UP_WORDS = 8


def _join_follow_ups(correction: Cand, found: list[Cand]) -> list[Cand]:
    """``found`` (the candidates of the message right after ``correction``) without the short facts on the correction's
    subject, which join it ("you dont have access to docker here", then "docker is running on your host."): alone
    such a fact is half a thought (a reader took "docker is running on your host" for localhost)."""
    kept = []
    for c in found:
        said = c.concept_text  # a stated fact's quote
        if (not c.content.startswith(preferences.FACT_HEAD + ":") or len(words(said)) > FOLLOW_UP_WORDS
                or not evidence.subject(c) & evidence.subject(correction)):  # fmt: skip
            kept.append(c)
            continue
        correction.content = fit([correction.content, f' — then: "{said}"'], corrections.MAX_CONTENT)
        correction.turns = [*correction.turns, *c.turns]
        correction.concept_text = f"{correction.concept_text} {said}"
    return kept


def _message(
    s: Stream, pos: int, turn: Turn, episode: list[Turn], between: list[Turn], after: list[Turn]
) -> list[Cand]:
    raw = strip_noise(turn.text).strip()
    if not raw or filters.generated_text(raw):
        return []
    if raw.startswith("/") and len(raw.split()) <= 3:
        return []  # a slash command typed as text
    prose = leading_prose(clean_md(raw)) or (one_line(clean_md(raw)) if len(raw) < 200 else "")
    if filters.pasted_text(raw, prose):
        return []
    prose = filters.own_words(raw, prose)
    compact = one_line(prose)
    spoken = [t for t in episode if t.text.strip()]
    picked = decisions.option_choice(s, pos, turn, compact, spoken)
    if picked is not None:
        return picked
    sents = sentences(prose)
    if not sents:
        return []
    out, approved = decisions.approval(s, pos, turn, sents[0], spoken)
    if approved:
        sents = sents[1:]
    found = preferences.checking_question(s, pos, turn, compact)
    if found is not None:
        out.append(found)
    if TRIVIAL_RE.match(compact) or len(words(compact)) < 3 or not sents:
        return out
    used: set[int] = set()
    found = corrections.correction(s, pos, turn, sents, episode, between, after)
    if found is not None:
        out.append(found[0])
        used.update(found[1])
    out.extend(preferences.statements(s, pos, turn, sents, used))
    return [c for c in out if not re.search(r"^\W*$", c.content)][:MAX_PER_MESSAGE]

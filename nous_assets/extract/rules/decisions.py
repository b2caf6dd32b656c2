"""Decisions: a choice the user states ("let's use …") or a proposal of Claude's that the user approves.

An approval ("ok", "go ahead", "sounds good", picking option "B") turns the assistant's proposal into a
decision — unless the proposal is a one-off operation (push, force-push, merge, deploy, run, delete,
open a PR …): approving it once is not a standing decision and must never come back as one.
"""

from __future__ import annotations

import re

from nous_assets.extract.rules.session import Cand, Stream, cand
from nous_assets.extract.rules.text import (
    I,
    cap,
    clean_md,
    fit,
    key_sentence,
    sentences,
    strip_noise,
    upper_first,
    user_scope,
    words,
)
from nous_assets.turns import Turn

MAX_CONTENT = 320

DECISION_RE = re.compile(
    r"\blet'?s (?:go with|use|switch to|stick with|stay with|keep|adopt|move to|migrate to|choose|pick|drop|replace|"
    r"start with|build it (?:in|with)|write it in)\b"
    r"|\bwe'?ll (?:use|go with|switch to|stick with|keep|adopt|move to|migrate to|drop)\b"
    r"|\bwe will (?:use|go with|switch to|stick with|keep|adopt|move to|migrate to|drop)\b"
    r"|\bwe'?re going (?:to use|to go with|to switch to|with)\b"
    r"|\b(?:i|we) (?:have |'ve )?decided\b|\bdecided to\b|\bdecision is\b|\bgoing with\b"
    r"|\binstead of .{2,60}?,? (?:we'?ll|let'?s|we will|we should|use)\b|\bthe plan is\b",
    I,
)
APPROVAL_RE = re.compile(
    r"^(?:yes|yep|yeah|yup|ok(?:ay)?|sure|sounds good|go ahead|do it|please do|lgtm|perfect|great|approved|"
    r"agreed|let'?s do it|proceed|ship it|works for me|that works|makes sense|go for it|absolutely|correct)\b"
    r"(?:[ ,]+(?:please|thanks|go ahead|do it|proceed|sounds good))*[.!]*$",
    I,
)
_OPTION_RE = re.compile(
    r"^(?:option\s+|go with\s+|let'?s do\s+)?\(?([a-e1-5])\)?[.!]?(?:\s+please)?$"
    r"|^(?:option\s+)?\(?([a-e1-5])\)?\s+(?:does |do )?(?:seems?|sounds?|looks?|is)\s+(?:like\s+)?(?:a\s+)?"
    r"(?:good|great|decent|fine|best|right|better)\b",
    I,
)
_QUESTION_PROPOSAL_RE = re.compile(
    r"\b(?:want me to|should i|shall i|would you like me to|do you want me to|should we|shall we|can i|may i)\s+"
    r"(.+?)\s*\?*$",
    I,
)
_PRONOUN_OBJECT_RE = re.compile(
    r"^(?:go ahead(?: with)?|proceed(?: with)?|do|add|make|implement|fix|apply|continue|start)?\s*"
    r"(?:that|it|this|them|those|these|so|the change|the changes|the fix)?\s*(?:now|for you|too|as well)?$",
    I,
)
_RECOMMEND_RE = re.compile(
    r"\b(?:i can|i could|i'?ll|i will|i'?d (?:suggest|recommend|go with)|i recommend|i suggest|i propose|"
    r"my recommendation|recommended|we should|we could|the (?:approach|plan|solution|fix) (?:is|would be))\b",
    I,
)
# A "yes" approves one action at one moment ("Shall I push and open a PR?"): operations on the repository,
# processes or the network are one-off actions, not durable decisions, and must not come back as standing
# instructions in later sessions ("force-push to main" approved once is not "we force-push to main").
ONE_OFF_RE = re.compile(
    r"^(?:(?:go ahead and|now|also|just|first|then|finally|quickly)\s+)*"
    r"(?:force[- ]?push|push|commit|merge|rebase|squash|amend|cherry-pick|revert|reset|stash|tag|release|publish|"
    r"deploy|kill|restart|re-?run|run|execute|delete|drop|wipe|purge|curl|wget|pipe|send|upload|install|"
    r"(?:continue|finish|abort) (?:with )?the (?:rebase|merge|cherry-pick)|(?:open|create|raise) (?:a |the )?"
    r"(?:pr|pull request|merge request)|close (?:the|this) (?:pr|pull request|issue))\b",
    I,
)
_CHOICE_RE = re.compile(
    r"\b(?:use|using|keep|store|switch(?:es|ing)?|migrat\w* to|adopt|stay (?:on|with)|go with|put .{1,40} in|split|"
    r"derive|read (?:it |them )?from|pin|prefer|default to|instead of|rather than|over|live in|lives in|"
    r"move .{1,40} to|enable|disable|turn (?:on|off)|set .{1,40} to|replace|remove|drop)\b",
    I,
)
_NEXT_STEP_RE = re.compile(
    r"^(?:(?:now|then|also|next|first)\s+)?(?:update|write|draft|create|add|archive|grep|check|verify|test|open|file|"
    r"post|rename|fix|implement|refactor|document|look|investigate|read|summari[sz]e|try|spell out|leave)\b",
    I,
)


def choice(proposal: str) -> bool:
    """A proposal that chooses how things are ("keep Java 17", "store the index next to wakil.db") rather than
    the next step of the task ("update research.md with all this"): approving a step decides nothing lasting."""
    return bool(_CHOICE_RE.search(proposal)) and not _NEXT_STEP_RE.match(proposal)


_SECTION_RE = re.compile(
    r"^(?:the )?(?:approach|plan|proposal|recommendation|solution|proposed (?:fix|change)s?)\b", I
)


def option_choice(s: Stream, pos: int, turn: Turn, compact: str, episode: list[Turn]) -> list[Cand] | None:
    """The user picked an option of the last assistant message: a decision (None if not an option pick)."""
    m = _OPTION_RE.match(compact)
    if not m or not episode:
        return None
    label = m.group(1) or m.group(2)
    chosen = _option_text(episode, label)
    if not chosen:
        return []
    content = fit([f"Decision (the user chose option {label.upper()}): {chosen}"], MAX_CONTENT)
    return [cand("decision", content, turn, s.gpos[pos], [turn, episode[-1]], chosen, scope=user_scope(chosen),
                 score=2.5, basis="approval")]  # fmt: skip


def approval(s: Stream, pos: int, turn: Turn, first: str, episode: list[Turn]) -> tuple[list[Cand], bool]:
    """(decision from an approved proposal, whether ``first`` was an approval at all)."""
    if not (APPROVAL_RE.match(first) and episode and asks(episode[-1].text)):
        return [], False
    proposal = _proposal(episode[-1].text)
    if not proposal or ONE_OFF_RE.match(proposal) or not choice(proposal):
        return [], True
    said = cap(first, 30).replace('"', "'")
    content = fit(
        [f"Decision: {proposal.rstrip('.')}", f' (proposed by Claude, approved by the user: "{said}")'], MAX_CONTENT
    )
    found = cand("decision", content, turn, s.gpos[pos], [turn, episode[-1]], proposal, score=2.5, basis="approval")
    return [found], True


def asks(text: str) -> bool:
    """The assistant message ends on a question or recommends something."""
    cleaned = clean_md(text)
    tail = " ".join(sentences(cleaned)[-3:])
    return "?" in tail or bool(_RECOMMEND_RE.search(cleaned))


_OFFER_RE = re.compile(r"\b(?:options?|approach(?:es)?|choose|pick|prefer|which (?:one|would|do|should))\b", I)


_TRAILING_JOIN_RE = re.compile(r"[,;]?\s+(?:or|and)$", I)  # "1. Return it from the endpoint, or": the "or" joins


def _option_text(episode: list[Turn], label: str) -> str:
    """The text of option ``label`` in the last message that offered a choice: a line labelled "Option 1" or,
    in a message that asks to choose, "1." — not the first item of any numbered list (findings, steps)."""
    rx = re.compile(rf"^\s*(option\s+)?\(?{re.escape(label)}[).:]\s*(.+)$", I)
    for t in reversed(episode):
        text = strip_noise(t.text)
        offers = bool(_OFFER_RE.search(" ".join(sentences(clean_md(text))[-4:])))
        for line in reversed(text.splitlines()):  # the list nearest the question: findings come earlier
            plain = line.replace("**", "").replace("__", "").strip()
            m = rx.match(plain)
            if m and (m.group(1) or offers) and len(words(m.group(2))) >= 2:
                return _TRAILING_JOIN_RE.sub("", cap(clean_md(m.group(2)).replace("\n", " "), 300))
    return ""


def _proposal(text: str) -> str:
    cleaned = clean_md(text)
    sents = [x for x in sentences(cleaned) if x != "[code]"]
    for sent in reversed(sents[-4:]):
        m = _QUESTION_PROPOSAL_RE.search(sent)
        if m:
            obj = m.group(1).strip(" ?.")
            if not _PRONOUN_OBJECT_RE.fullmatch(obj) and len(words(obj)) >= 3:
                return cap(upper_first(obj), 260)
    lines = cleaned.splitlines()
    for i, line in enumerate(lines):
        if _SECTION_RE.match(line.strip(" :*")):
            items = []
            for nxt in lines[i + 1 : i + 8]:
                body = nxt.strip()
                if not body:
                    if items:
                        break
                    continue
                if len(words(body)) >= 3:
                    items.append(body.rstrip("."))
                if len(items) == 2:
                    break
            if items:
                return cap("; ".join(items), 260)
    for sent in sents:
        if _RECOMMEND_RE.search(sent) and len(words(sent)) >= 5 and not sent.endswith("?"):
            return cap(sent.rstrip(":"), 260)
    return key_sentence(text, 220)


_ANSWER_RE = re.compile(r"\"((?:[^\"\\]|\\.){5,400})\"=\"((?:[^\"\\]|\\.){1,300})\"")
_NO_DECISION_RE = re.compile(
    r"^(?:yes|no|ok(?:ay)?|sure|skip|later|cancel|none|other|continue|proceed|(?:work on|do|start) (?:it|this|that)"
    r"(?: now| later)?|not now)[.!]?$",
    I,
)


# a question about a batch of the moment ("I found 15 failing PRs, how …?", "How should I integrate the 5 completed
# branches?"): its answer picks how to handle those, it decides nothing that lasts
_STEERING_RE = re.compile(
    r"\b\d+ (?:completed|failing|open|remaining|pending|finished|ready|changed)\b|\bthese \d+\b", I
)


def answers(s: Stream) -> list[Cand]:
    """The user's answers to Claude's multiple-choice questions (AskUserQuestion): decisions in their words."""
    out: list[Cand] = []
    for call in s.calls:
        if call.name != "AskUserQuestion" or call.result is None or call.result.is_error:
            continue
        for k, m in enumerate(_ANSWER_RE.finditer(call.result.text)):
            question, answer = (x.replace('\\"', "'").strip() for x in m.groups())
            if _NO_DECISION_RE.match(answer) or ONE_OFF_RE.match(answer) or _STEERING_RE.search(question):
                continue
            content = fit([f'Decision: asked "{cap(question, 160)}", the user answered "{cap(answer, 120)}"'],
                          MAX_CONTENT)  # fmt: skip
            turn = call.result_turn or call.turn
            pos = call.result_pos if call.result_pos is not None else call.pos
            out.append(cand("decision", content, turn, s.gpos[pos], [call.turn, turn], f"{question} {answer}",
                            sub=k, score=3.0, basis="user"))  # fmt: skip
    return out

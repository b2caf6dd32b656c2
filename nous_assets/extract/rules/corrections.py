"""Corrections: the user pushes back on what Claude just said or did.

Signals are the user's own words ("no, …", "that's wrong", "X, not Y", "you should have", "I said …",
"still fails") or a rejected tool call followed by an explanation. The memory quotes the user and says
what Claude had said or done (so it stands on its own), and ``weakens`` names the corrected belief so
the projection can weaken an older memory that holds it.

Not corrections: pasted review comments or logs ("pr feedback: …", a reviewer's numbered findings) —
they are someone else's text, handled by :mod:`~nous_assets.extract.rules.filters`.
"""

from __future__ import annotations

import re

from nous_assets.extract.rules import decisions, preferences
from nous_assets.extract.rules.session import Cand, Stream, cand, describe_uses, is_interrupt
from nous_assets.extract.rules.text import FILLER_RE, I, cap, fit, key_sentence, quote, temporal, user_scope, words
from nous_assets.turns import Turn

MAX_CONTENT = 320

START_RE = re.compile(
    r"^(?:no|nope|nah|wrong|incorrect|stop|undo|revert|don'?t do that|that'?s not it)\b(?![-'])", I
)
ANY_RE = re.compile(
    r"\b(?:that'?s|that is|this is|it'?s|you'?re|you are) (?:wrong|not right|incorrect|not correct|not what i)"
    r"|\bnot what i (?:asked|wanted|meant|said)\b"
    r"|\byou should(?:n'?t| not)? have\b"
    r"|(?<!am )\bi (?:said|told you|asked you|already said|meant)\b"
    r"|\bdon'?t do that\b|\bplease (?:stop|don'?t)\b|\bstop (?:doing|using|adding|changing|it)\b"
    r"|\bwrong (?:file|branch|directory|dir|path|place|command|one|function|approach|repo|project|version|way)\b"
    r"|\bwhy (?:did|would|do) you\b|\bdid we not\b|\bwe (?:already )?went through this\b"
    r"|\byou (?:broke|forgot|missed|ignored|deleted|removed|didn'?t)\b"
    r"|\byou (?:don'?t|do not) have access\b|\bthat(?:'s| is| has) already been\b"
    r"|\bstill (?:doesn'?t|does not|isn'?t|is not|not|fails|failing|broken|wrong|no|seeing)\b"
    r"|\b(?:doesn'?t|does not|didn'?t|did not|isn'?t|is not) (?:work|fix|help)\b"
    r"|^actually\b|\bactually,"
    r"|\b(?:is|was|are|were) (?:the |a |an )?[\w./:@-]+(?: [\w./:@-]+){0,4},? not (?:the |a )?[\w./:@-]+"
    r"|\bnot [\w./:@-]+(?: [\w./:@-]+){0,3},? but\b|\bnot the \w+ i was looking for\b"
    r"|\binstead\b",
    I,
)
_NEGATED_RE = re.compile(
    r", not (?:the |a )?([\w./:@-]+(?: [\w./:@-]+){0,2})|\bnot ([\w./:@-]+(?: [\w./:@-]+){0,3}),? but\b"
    r"|\binstead of ([\w./:@ -]{2,40}?)(?=[,.;]|$| we| let)"
    r"|\brather than ([\w./:@ -]{2,40}?)(?=[,.;]|$)",
    I,
)


_LESSON_RE = re.compile(
    r"\b(?:instead of|rather than) (?:just |simply )?\w+ing\b"
    r"|\b(?:don'?t|do not|never|stop|avoid|quit) (?!need (?:it|that|this|them|those|these)\s*(?:[.,;!]|$))\w+"
    r"|\byou (?:should(?:n'?t| not)?|need to|have to|must|forgot|missed|ignored|broke)\b"
    r"|\bwithout (?:asking|checking|testing|verifying|running|reading|looking|confirming)\b|\bbefore (?:you )?\w+ing\b"
    r"|\balways\b|\bi (?:told|asked) you\b|\bnot what i (?:asked|wanted)\b|\bno longer\b"
    r"|\bnot the \w+ i (?:was looking for|meant|wanted)\b"
    r"|\bwrong (?:file|branch|directory|dir|path|place|command|function|approach|repo|project|version|way)\b"
    r"|\b(?:real|actual|root) (?:cause|problem|issue)\b|^actually\b|\bactually,"
    r"|\b(?:is|was|are|were) (?:the |a |an )?[\w./:@-]+(?: [\w./:@-]+){0,4},? not (?:the |a )?[\w./:@-]+"
    r"|\bnot [\w./:@-]+(?: [\w./:@-]+){0,3},? but\b|^(?:no|nope|wrong|incorrect)\b[,.!]?\s+\w+(?:\s+\w+){3,}",
    I,
)
_FREE_ANSWER_TOOLS = frozenset({"AskUserQuestion"})  # rejecting its options is answering in one's own words


_ASKING_RE = re.compile(
    r"\b(?:why (?:is|are|does|do|did|would|not)|should (?:it|we|they|this) not|shouldn'?t (?:it|we|they|this)"
    r"|brings? up the question|i wonder|what if|how about|could we|can we)\b",
    I,
)


def lesson(text: str) -> bool:
    """A correction worth remembering says how to work or what is true ("don't mock the database", "instead of
    just saying it will work itself out", "the issue is the formatter, not the runner"); "it is still failing",
    "fix the bugs in the CLI flags", "so we don't need it" (a verdict on the thing at hand) or a question ("should
    it not also be random?") report the moment, ask for work or open a discussion: they are not kept."""
    return bool(_LESSON_RE.search(text)) and not text.rstrip().endswith("?") and not _ASKING_RE.search(text)


def _rejected(between: list[Turn]) -> bool:
    """A tool call of Claude's the user refused (not a question's options the user answered in words)."""
    refused = {tr.tool_use_id for t in between for tr in t.tool_results
               if tr.is_error and "doesn't want to proceed" in tr.text}  # fmt: skip
    names = {u.id: u.name for t in between for u in t.tool_uses}
    return any(names.get(i) not in _FREE_ANSWER_TOOLS for i in refused)


def correction(
    s: Stream, pos: int, turn: Turn, sents: list[str], episode: list[Turn], between: list[Turn], after: list[Turn]
) -> tuple[Cand, set[int]] | None:
    """The correction in a user message (and the indexes of the sentences it used), or None."""
    if not episode:
        return None
    rejected = _rejected(between)
    interrupted = any(is_interrupt(t) for t in between[-3:])
    start = _marker(sents)
    if start is None and rejected:
        body = [i for i, x in enumerate(sents) if not FILLER_RE.match(x)]
        if body and len(words(" ".join(sents))) >= 4:
            start = body[0]
    if start is None:
        return None
    weak_marker = not START_RE.match(sents[start])
    if start > 0 and weak_marker and not FILLER_RE.match(sents[start - 1]) and not sents[start - 1].endswith("?"):
        start -= 1  # a mid-message marker ("instead", "actually"): keep the sentence that sets it up
    idx = {start}
    picked = [sents[start]]
    for j in range(start + 1, min(len(sents), start + 3)):
        if len(" ".join(picked)) > 170 or preferences.classify(sents[j]) in ("preference", "decision"):
            break
        picked.append(sents[j])
        idx.add(j)
    said = quote(picked, 220)
    if not lesson(" ".join(picked)) or any(x.rstrip().endswith("?") for x in picked):
        return None  # a question, or no lesson: the moment's state or a request for work
    context, weak = _context(episode, rejected, interrupted)
    follow = _followup(after)
    negated = _NEGATED_RE.search(" ".join(picked))
    weakens = weak
    if negated:
        what = next(g for g in negated.groups() if g)
        weakens = f"{what.strip()} — {weak}" if weak else what.strip()
    # A correction long enough to stand alone does not repeat the belief it corrects (``weakens`` keeps it).
    standalone = len(words(said)) >= 8 and not rejected and not interrupted
    content = fit(
        [
            f'User correction: "{said}"',
            f" — after Claude {context}" if context and not standalone else "",
            f"; Claude then {follow}" if follow.startswith("concluded") or (follow and not standalone) else "",
        ],
        MAX_CONTENT,
    )
    conf, _ = temporal(said)
    c = cand(
        "correction",
        content,
        turn,
        s.gpos[pos],
        [turn, *episode[-1:], *after[:1]],
        said + " " + (context or ""),
        temporal=conf,
        scope=user_scope(said + " " + (context or "")),
        score=3.0,
        basis="user",
    )
    c.weakens = cap(weakens or said, 200)
    return c, idx


def _marker(sents: list[str]) -> int | None:
    for i, sent in enumerate(sents[:6]):
        if FILLER_RE.match(sent) and not START_RE.match(sent):
            continue
        if START_RE.match(sent) or ANY_RE.search(sent):
            if decisions.DECISION_RE.search(sent) and not START_RE.match(sent):
                continue  # "let's use X instead of Y" is a decision
            return i
    return None


def _context(episode: list[Turn], rejected: bool, interrupted: bool) -> tuple[str, str]:
    """(phrase for the content, description for ``weakens``) of what Claude did before the correction."""
    last = episode[-1]
    action = describe_uses(last.tool_uses, last.cwd) if last.tool_uses else ""
    said = ""
    for t in reversed(episode):
        if t.text.strip():
            said = key_sentence(t.text, 130)
            break
    if rejected and action:
        return f"tried to {action} (rejected by the user)", f"Claude's attempt to {action}"
    if interrupted and action:
        return f"started to {action} (interrupted)", f"Claude's attempt to {action}"
    if said:
        return 'said "' + said.replace('"', "'") + '"', said
    if action:
        return action, action
    return "", ""


def _followup(after: list[Turn]) -> str:
    """What Claude did after the correction: a stated diagnosis, else its first action, else its reply."""
    reply = ""
    for t in after[:4]:
        text = t.text.strip()
        if text:
            diag = key_sentence(text, 120, mode="explain")
            if diag:
                return 'concluded "' + diag.replace('"', "'") + '"'
            if not reply:
                reply = key_sentence(text, 120, mode="reason")
        if t.tool_uses:
            desc = describe_uses(t.tool_uses, t.cwd)
            if desc:
                desc = desc.replace("edit ", "edited ", 1).replace("run ", "ran ", 1)
                return desc.replace("delegate to", "delegated to").replace("search the web", "searched the web")
    return 'replied "' + reply.replace('"', "'") + '"' if reply else ""

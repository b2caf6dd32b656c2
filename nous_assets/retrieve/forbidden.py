"""A line that does what the project's own rules forbid says so.

A session can learn how to get past a failure in a way the project does not normally allow: the push to ``main``
was rejected, so it pulled, rebased and pushed to ``main`` again (the user had asked for it that once), while the
project's ``AGENTS.md`` says "Never push directly to `main`. Always use branches and PRs." Injected as it stands, the
lesson reads as a confident instruction to break a standing rule (a fresh reader judged it harmful), though what it
teaches is right when the user does ask for it. The rule is in the store too, so the packet build compares them: the
line carries the rule it goes against, as a mark (``[against the rule "Never push directly to `main`.": only when the
user asks for it]``).

A prohibition is read from a rule the project or the user stated or wrote down (a convention, preference or
correction that still holds): "never", "do not", "don't", "must not" or "avoid", then the action — a verb and
what it acts on, up to the end of the clause. A command breaks it when one command (a backticked span of the line)
holds the verb (any form: "push", "pushes", "pushing") and every word the action names; a generic verb such as
"use" or "run" need not appear, but then only a quoted name counts ("never use `npm`", not "do not run these
checks"): "Never push directly to `main`" is broken by ``git push origin main``, not by ``git push -u origin
feat/x``. A prohibition that names nothing besides its verb ("Don't commit unless asked") is too broad to test a
command with and is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

_NEGATION = re.compile(r"\b(?:never|do not|don't|dont|must not|mustn't|should not|shouldn't|avoid)\s+", re.I)
_CLAUSE_END = re.compile(r"[.;:!?()\n—]|,|\s-\s|\b(?:unless|without|except|instead|before|after|when|if|because|so)\b")
_WORD = re.compile(r"[a-z0-9][a-z0-9._/-]*")
_COMMAND = re.compile(r"`([^`\n]+)`")
GENERIC_VERBS = frozenset({"use", "using", "run", "running", "call", "calling", "execute", "invoke"})
"""Verbs a command does not spell: "never use `npm`" is broken by any command that holds ``npm``."""
_FILLER = frozenset(
    "a an the to into onto on in at of for from with by any ever this that these those it its your our their "
    "directly manually yourself again also just anything something".split()
)
RULE_KINDS = frozenset({"convention", "preference", "correction"})


@dataclass(frozen=True)
class Prohibition:
    """What a rule forbids: a verb and the words it acts on (all must appear in one command), and the rule's
    sentence that says it."""

    verb: str
    objects: frozenset[str]
    said: str = field(default="", compare=False)

    def mark(self) -> str:
        """The mark of a packet line that goes against it."""
        return f'against the rule "{self.said}": only when the user asks for it'


def _stem(word: str) -> str:
    """"pushing", "pushes", "pushed" -> "push" (crude on purpose: both sides are cut the same way)."""
    for suffix in ("ing", "es", "ed", "s"):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def prohibitions(text: str) -> list[Prohibition]:
    """Every testable prohibition in a rule's text (see the module docstring)."""
    found = []
    for negation in _NEGATION.finditer(text or ""):
        start = max(text.rfind(end, 0, negation.start()) for end in (". ", ": ", "\n"))
        tail = re.search(r"[.!?](?:\s|$)|\n", text[negation.start() :])
        said = text[start + 1 : negation.start() + (tail.end() if tail else len(text))].strip(" \"'“”")
        rest = text[negation.end() :]
        end = _CLAUSE_END.search(rest)
        clause = rest[: end.start()] if end else rest
        words = _WORD.findall(clause.replace("`", " ").lower())
        words = [w for w in words if w not in _FILLER and not w.endswith("ly")]
        if len(words) < 2:
            continue
        verb = words[0]
        if verb in GENERIC_VERBS:  # "never use `npm`": only what is quoted names a tool ("these checks" does not)
            named = [w for span in _COMMAND.findall(clause) for w in _WORD.findall(span.lower())]
            if named:
                found.append(Prohibition(verb, frozenset(_stem(w) for w in named), said))
        else:
            found.append(Prohibition(_stem(verb), frozenset(_stem(w) for w in words[1:]), said))
    return found


def breaks(prohibition: Prohibition, text: str) -> bool:
    """Whether one command of ``text`` does what ``prohibition`` forbids."""
    for command in _COMMAND.findall(text or ""):
        words = {_stem(w) for w in _WORD.findall(command.lower())}
        if (prohibition.verb in GENERIC_VERBS or prohibition.verb in words) and prohibition.objects <= words:
            return True
    return False


def rules_from(rows: Iterable[tuple[int, str]]) -> tuple[tuple[int, Prohibition], ...]:
    """(rule memory id, prohibition) for every prohibition the rules' texts state."""
    return tuple((memory_id, p) for memory_id, text in rows for p in prohibitions(text))


def broken_rule(
    text: str, rules: Iterable[tuple[int, Prohibition]], own_id: int | None = None
) -> Prohibition | None:
    """The first prohibition a command of ``text`` breaks (a rule never breaks itself), or None."""
    for rule_id, prohibition in rules:
        if rule_id != own_id and breaks(prohibition, text):
            return prohibition
    return None

"""Preferences and stated facts: what the user says about how to work and about the project.

Sentence-level: each sentence of a user message is classified as a preference ("always/never …", "from
now on …", "please use …", "I'd rather …", "we use …", "X should be Y"), a decision ("let's use …", see
:mod:`~nous_assets.extract.rules.decisions`) or a stated fact ("we deploy to …", "I'm on macOS"), with
short neighbouring sentences joined when they carry the object ("todomvc is great. let's use it").
The memory quotes the user. Scope is ``global`` only when the words name nothing of this project (a
preference about how Claude should work with this user); questions and hedges are not statements.
"""

from __future__ import annotations

import re

from nous_assets.extract.rules import decisions
from nous_assets.extract.rules.session import Cand, Stream, cand
from nous_assets.extract.rules.text import FILLER_RE, I, fit, quote, temporal, user_scope, words
from nous_assets.turns import Turn

MAX_CONTENT = 320

HIGH_RE = re.compile(
    r"^(?:please )?(?:always|never)\b|\b(?:always|never) (?:use|run|do|add|write|commit|push|call|create|put|"
    r"make|test|mock|edit|touch|import|include|leave|ask|check|prefer|start|keep|rebase|merge|format|"
    r"delete|remove|change|modify|skip|install|update|hardcode|force|store|fix)\b|\bfrom now on\b|\bgoing forward\b"
    r"|\bin the future\b|\bevery time you\b",
    I,
)
PREF_RE = re.compile(
    r"^(?:please )?(?:don'?t|do not)\b(?! (?:know|worry|think|see|understand|care|remember|have|mind|get|need))"
    r"|\bplease (?:use|don'?t|do not|avoid|keep|prefer|make sure|stick to|write|put)\b"
    r"|\b(?:i|we) (?:prefer|like to|always|never|usually)\b|^prefer\b|\bi'?d (?:rather|prefer|like|love)\b"
    r"|\b(?:make|be) sure (?:to|you|that|it)\b|\b(?:i|we) (?:really |explicitly |definitely )?want\b"
    r"|\bwe (?:really |explicitly |definitely )?(?:don'?t|do not) want\b|\bwe use\b"
    r"|\bwe (?:don'?t|do not|never) use\b|\bremember (?:that|to)\b|\bkeep in mind\b|\bdon'?t forget (?:to|that)\b"
    r"|^(?:avoid|stop using|use)\b|\bwe do [\w-]+-first\b|\b[\w-]+-first\b"
    r"|\bshould (?:always|never)\b|\brather than\b|\bi (?:think|feel) (?:it'?s|its) better\b"
    r"|\bi (?:allow|don'?t allow|do not allow) you\b|\bi expect\b|\bi want you to\b",
    I,
)
# how a thing should be ("it should be selected by default", "X should appear as Y"): as often this task's feature
# request as a principle of the project, so it needs a mark of generality or a reason to count
SHOULD_RE = re.compile(
    r"\b(?:it|this|that|they) (?:needs|has) to be\b|\bneeds to be\b"
    r"|\b(?:it|this|that|they|[\w\"'`]+) should (?:appear|be|show|say|read|display|use|stay|go)\b"
    r"|\bwe should (?:just )?(?:display|show|use|keep|not)\b",
    I,
)
GENERAL_RE = re.compile(
    r"\b(?:always|never|any|every|all|in general|generally|because|since|given|so that|long[- ]term|by default"
    r"|whenever|rather than|instead of|only|if|unless|when)\b",
    I,
)
FACT_RE = re.compile(
    r"\b(?:i'?m|i am) (?:using|on|running|working (?:on|with)|based in|a|an|the)\b"
    r"|\bmy (?:name|email|username|os|setup|editor|shell|role|team|company)\b"
    r"|\bwe'?re (?:on|using|running|deploying|targeting|building)\b|\bwe are (?:on|using|running)\b"
    r"|\b(?:our|this|the) (?:api|server|app|application|project|repo|repository|database|db|ci|backend|frontend|"
    r"service|cluster|stack|codebase|pipeline|deployment|production|staging|team|branch|main branch)\b"
    r".{0,60}?\b(?:is|are|runs?|uses?|lives?|deploys?|has|needs|requires|talks to|is hosted|depends on)\b"
    r"|\bwe (?:deploy|host|run|ship|build|release) (?:to|on|with|in|from)\b"
    r"|\bthis (?:project|repo|codebase|app|service) (?:uses|is|runs|has|needs|requires|depends)\b"
    r"|\b(?:has become|is now|became) available\b|\bsince your (?:knowledge )?cut-?off\b"
    r"|\b(?:was|has been|got) (?:released|deprecated|renamed|removed|merged)\b|\bno longer (?:exists|works|supported)\b"
    r"|\bis deprecated\b|\b(?:you can|you'?ll need to|you need to|just) run\b|\b[\w.-]+ is running on\b"
    r"|^run [`'\"]?[\w./-]+.{0,80}?\bto (?:see|find|get|check|list|show|start|build|run|view)\b",
    I,
)
HEDGE_RE = re.compile(
    r"\b(?:i don'?t know|not sure|i wonder|wondering|maybe|might|perhaps|if we want|whether|i guess|i bet|"
    r"i'?m guessing|do you think|could you|can you|would you|how (?:hard|do|can|would)|seems?|looks? like|"
    r"appears? (?:to|that)|kind of|sort of|i feel like|wth|wtf|something (?:broke|is broken|isn'?t working))\b",
    I,
)
_TIP_RE = re.compile(r"\b(?:you can|you'?ll need to|you need to|just) run\b|^run\b", I)
_PASTE_INTRO_RE = re.compile(
    r"\b(?:this is from|here is|here'?s|this is the (?:output|log|error|trace)|see below|below is)\b", I
)
FACT_HEAD = "User-stated fact"
_LABEL = {"preference": "User preference", "decision": "Decision", "fact": FACT_HEAD}
_KIND = {"preference": "preference", "decision": "decision", "fact": "architecture"}


_RULE_RE = re.compile(r"\b(?:should|must|will|to) (?:always|never)\b|\b(?:always|never) be\b", I)
_TASK_RE = re.compile(
    r"^(?:yes|yep|ok(?:ay)?|sure|great|perfect|alright)\b|^(?:i want to|i'?d like to|we need to|can we|could we)\b"
    r"|^(?:please |ok,? |so,? |note,? |then )?(?:analy[sz]e|create|update|investigate|fix|add|remove|delete|write|"
    r"implement|refactor|help|tell|show|find|review|plan|iteratively|go|do|try|look|open|merge|push|commit|release|"
    r"check|rebase|rename|move|draft|prepare|summari[sz]e|explain|describe|research|verify|test|restart)\b"
    r"|(?<!for )\bnow\b|\bthis time\b|\bfor this\b|\byet\b|\bnext\b|\bthe (?:rest|remaining|other ones)\b"
    r"|\bthis (?:pr|file|one|branch|change|commit|issue|bug|test|function|step|task|plan|session)\b|\btoday\b"
    r"|\blet'?s\b|\b(?:continue|keep going|carry on|go on|proceed)\b|\btackle\b|\bwork through\b",
    I,
)


CRITIQUE_RE = re.compile(
    r"\btoo (?:verbose|long|wordy|big|complex|complicated|detailed|technical|dense|chatty|much text)\b"
    r"|\b(?:more|extremely|very|really|super) (?:concise|terse|brief|direct|succinct)\b|\bno jargon\b"
    r"|\bkeep (?:it|them|answers?|replies|comments?|docs?) (?:short|concise|brief|simple)\b",
    I,
)
"""The user judging the output's form ("that's too verbose", "make it extremely concise"): how they want work
written, whatever the task it was said about."""
_REASON_RE = re.compile(r"\b(?:since|because|as) (?:i|we) (?:really )?(?:want|prefer|need|don'?t want)\b", I)


def standing(sentence: str) -> bool:
    """A rule for the future or a principle of the project, not a request for the task at hand: "always …",
    "from now on …", a judgement of the output's form ("too verbose") or a reason that states what the user wants
    ("… since I want tests to fail if something isn't configured") hold whatever else the sentence says; otherwise
    nothing may tie it to the work of the moment ("now", "this PR", "next", "the rest", "let's", "continue …").
    "Continue until all are done" asks for this task's work; it is not how to work."""
    if HIGH_RE.search(sentence) or _RULE_RE.search(sentence) or CRITIQUE_RE.search(sentence):
        return True
    return bool(_REASON_RE.search(sentence)) or not _TASK_RE.search(sentence)


_CHECKING_RE = re.compile(
    r"^(?:and |so |also |but )?did you (?:also |already |actually )?((?:push|commit|run|test|update|check|verify|"
    r"rebase|close|sync|add|format|lint|build|deploy|document|write)\b[^?]{0,60})\?+\s*$",
    I,
)


def checking_question(s: Stream, pos: int, turn: Turn, text: str) -> Cand | None:
    """'did you push?' after Claude reports it is done: the user expects that step before work is called done."""
    m = _CHECKING_RE.match(text.strip())
    if not m:
        return None
    step = m.group(1).strip()
    content = fit([f'User expectation: {step} before calling the work done (the user checked: "{quote([text], 80)}")'],
                  MAX_CONTENT)  # fmt: skip
    return cand("preference", content, turn, s.gpos[pos], [turn], text, sub=8, score=2.0, basis="user")


def classify(sentence: str) -> str | None:
    """'preference' | 'decision' | 'fact' | None for one sentence of a user message."""
    s = sentence.strip()
    if len(words(s)) < 3 or FILLER_RE.match(s) or re.match(r"^(?:because|and|but|or)\b", s, I):
        return None  # a fragment whose subject is in another sentence
    question = s.endswith("?")
    if _PASTE_INTRO_RE.search(s):
        return None
    if HIGH_RE.search(s) and not question:
        return "preference"
    if CRITIQUE_RE.search(s) and not question:
        return "preference"
    if HEDGE_RE.search(s) or question:
        return None
    if decisions.DECISION_RE.search(s):
        return "decision"
    if PREF_RE.search(s) or SHOULD_RE.search(s) and GENERAL_RE.search(s):
        return "preference"
    if FACT_RE.search(s):
        return "fact"
    return None


def statements(s: Stream, pos: int, turn: Turn, sents: list[str], used: set[int]) -> list[Cand]:
    """Preference / decision / fact candidates from the sentences of one user message not used yet."""
    out: list[Cand] = []
    sub = 1
    i = 0
    while i < len(sents):
        if i in used:
            i += 1
            continue
        label = classify(sents[i])
        if label is None or label in ("preference", "fact") and not standing(sents[i]):
            i += 1
            continue
        picked, i = _group(sents, i, label, used)
        said = quote(picked)
        conf, note = temporal(said, "high" if label == "preference" and HIGH_RE.search(said) else "medium")
        head = "User tip" if label == "fact" and _TIP_RE.search(said) else _LABEL[label]
        content = fit([f'{head}: "{said}"', f' (time-bound: "{note}")' if note else ""], MAX_CONTENT)
        scope = user_scope(said) if label == "preference" else "project"
        out.append(
            cand(
                _KIND[label], content, turn, s.gpos[pos], [turn], said, sub=sub, temporal=conf, scope=scope,
                score=2.5 if label != "fact" else 1.5, basis="user",
            )  # fmt: skip
        )
        sub += 1
    return out


def _group(sents: list[str], i: int, label: str, used: set[int]) -> tuple[list[str], int]:
    """The sentence at ``i`` with a short set-up sentence before it and short follow-ups after it."""
    sent = sents[i]
    picked = [sent]
    used.add(i)
    prev = sents[i - 1] if i > 0 else ""
    if (
        prev
        and i - 1 not in used
        and len(sent) < 140
        and classify(prev) is None
        and not prev.endswith("?")
        and not FILLER_RE.match(prev)
        and len(prev) <= 100
        and standing(prev)  # "Fix the failing checks of PR 90. Don't add skips": the rule, not the task
    ):
        picked.insert(0, prev)  # "todomvc is great. let's use something simple" - the object comes first
        used.add(i - 1)
    j = i + 1
    while j < len(sents) and j not in used:
        nxt = sents[j]
        length = len(" ".join(picked))
        if picked[-1].endswith(("...", "…")) and not nxt.endswith("?") and len(nxt) <= 160:
            picked.append(nxt)  # "… is too long... really i just want a oneliner": the thought goes on
            used.add(j)
            j += 1
            continue
        if classify(nxt) == label and length < 120:
            picked.append(nxt)
            used.add(j)
            j += 1
            continue
        if (
            classify(nxt) is None
            and length < 130
            and not nxt.endswith("?")
            and len(nxt) <= 160
            and not FILLER_RE.match(nxt)
            and not HEDGE_RE.search(nxt)
            and not re.match(r"^(?:but|and|so|also|or)\b", nxt, I)
        ):
            picked.append(nxt)
            used.add(j)
            j += 1
        break
    return picked, j

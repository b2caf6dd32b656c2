"""One memory per learning: is an incoming learning already held, a newer value of a slot, or new?

The spec's three-tier re-learning detection, decided when a learning is appended (not in the projection),
so the decision is itself recorded as events and a replay reproduces it exactly:

* **reinforce** — the learning is a near-duplicate of a current memory (token Jaccard over the content,
  stop words and quoted evidence aside, at least ``dedup_jaccard`` = 0.75, and the same files named when
  both name files):
  the caller appends ``LearningReinforced`` on that memory instead of a second ``LearningExtracted``.
* **tier 2** — failing that, the TF-IDF cosine (:mod:`.paraphrase`, character n-grams of the same words,
  so ``commit``/``committing`` agree) at least ``relearn_cosine`` = 0.85 with a memory of the same subject
  is a rewording of it: reinforce, as above.
* **tier 3** — a pair left ambiguous (a tier-1 near-miss, or a cosine from ``relearn_ambiguous`` = 0.70 up to
  the tier-2 threshold) goes to the optional judge (an LLM, :mod:`.judge`); "same" reinforces.
* **new** — otherwise. A near-miss (Jaccard ``relearn_near_miss`` = 0.65 up to the threshold, or an
  ambiguous cosine the judge did not call the same) is reported with the decision so the caller can log
  it as a re-learning signal for later analysis.
* **slots** — a learning that states the current value of a single-valued thing (``payload.slot``) is
  ordered among the memories of the same (project, slot) by validity time, never by score or by when it was
  ingested: the value in force before it is closed at its ``valid_from``, and if a later value is already
  held, the incoming one is closed at that value's ``valid_from``. Whatever the order of ingestion, the
  value with the latest validity is the one left current, and the windows in between are contiguous. A later
  value of a fact tools print that names only part of what the current value names reinforces it instead
  (:func:`_tool_fact`); one that quotes a setting the held value quotes with another literal is a new value
  however alike the words (:func:`changed_value`).

Pure functions over plain values: the caller loads the comparable memories (``store.memory_lookup``)
and writes the events; what a re-learning then does to the memory is :mod:`.decision_matrix`'s call.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from nous_assets.reconcile.paraphrase import cosines
from nous_assets.store.search.memory_lookup import Held  # the row type the store's lookups return

_TOKEN = re.compile(r"[^\W_]+")  # letters and digits of any script; punctuation and "_" separate
# Function words carry no content: leaving them in would make two different one-liners look alike.
STOP_WORDS = frozenset(
    "a an and are as at be been by for from has have in into is it its of on or that the this to was were "
    "when which with".split()
)


def _words(text: str | None) -> list[str]:
    """Lowercase letter/digit runs of ``text`` in order, without function words (``mix-test`` -> mix, test)."""
    return [t for t in _TOKEN.findall((text or "").lower()) if t not in STOP_WORDS]


def tokens(text: str | None) -> frozenset[str]:
    """The set of :func:`_words` of ``text``."""
    return frozenset(_words(text))


# Quoted words and parentheticals are a learning's evidence ("… without stopping to ask ("tackle them")"),
# not what it says: two sessions quoting the user differently still state one learning — unless the quotes
# are most of the text, and then they are what it says.
_EVIDENCE = re.compile(r'"[^"\n]*"|“[^”\n]*”|\([^()\n]*\)')
MIN_GIST_WORDS = 5


def _gist(text: str | None) -> str:
    """The part of a learning it is compared by: the words outside quotes and parentheses when they are most
    of its words (five at least); a learning that is mostly quotes (``User correction: "…" — after Claude
    said "…"``) is compared whole, since what lies outside its quotes is only the frame around them."""
    outside = _EVIDENCE.sub(" ", text or "")
    every, gist = tokens(text), tokens(outside)
    return outside if len(gist) >= MIN_GIST_WORDS and 2 * len(gist) >= len(every) else text or ""


def signature(text: str | None) -> frozenset[str]:
    """The words a learning is compared by (see :func:`_gist`)."""
    return tokens(_gist(text))


def same_template(a: str, b: str) -> bool:
    """True when two learnings are one sentence with other words in the same places ("always run ruff before
    committing to billing" / "always run mypy before committing to reports"): a template filled with other
    names states another learning, however many words the two share. A restatement moves, adds or drops words."""
    sa, sb = _words(_gist(a)), _words(_gist(b))
    if len(sa) != len(sb) or sa == sb:
        return False
    return all(x == y or (x not in sb and y not in sa) for x, y in zip(sa, sb, strict=True))


_FILE_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)+[\w.-]*\w")


def file_paths(text: str | None) -> frozenset[str]:
    """The file paths ``text`` names (``apps/web/.env.example``): what a learning is about, word for word."""
    return frozenset(_FILE_PATH.findall(text or ""))


_CODE_SPAN = re.compile(r"`([^`\n]+)`")


def same_subject(a: str, b: str) -> bool:
    """False when both texts name files and not the same ones, or each names one command and not the same
    one (``mix ecto.migrate`` / ``MIX_ENV=test mix ecto.migrate``): alike words about other files or
    commands are other learnings."""
    pa, pb = file_paths(a), file_paths(b)
    if pa and pb and pa != pb:
        return False
    ca, cb = _CODE_SPAN.findall(_gist(a)), _CODE_SPAN.findall(_gist(b))
    return not (len(ca) == 1 and len(cb) == 1 and ca[0].strip() != cb[0].strip())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a or not b:
        return 0.0
    return len(a & b) / len(a | b)


@dataclass(frozen=True)
class Incoming:
    learning_id: str
    content: str
    valid_from: str | None = None
    slot: str | None = None


@dataclass(frozen=True)
class Supersession:
    """``old`` stops being valid at ``at`` because ``new`` states the slot's value from then on; ``restates`` when
    ``new`` names all ``old`` named (:func:`restates`)."""

    old: str
    new: str
    at: str | None
    restates: bool = False


@dataclass(frozen=True)
class Decision:
    action: str  # "new" | "reinforce"
    target: str | None = None  # reinforce: the learning already held
    similarity: float = 0.0  # reinforce: with the target; new: the best near-miss (0 when none)
    near: str | None = None  # new: the near-miss learning, if any
    supersessions: tuple[Supersession, ...] = ()
    tier: int = 1  # which tier matched (reinforce) or measured the near-miss (new)

    @property
    def reinforces(self) -> bool:
        return self.action == "reinforce"


Judge = Callable[[str, str], bool | None]
"""Tier 3: are these two learnings (incoming, held) one learning? None when it cannot tell (then: no)."""

TIER2_MIN_JACCARD = 0.4
"""Tier 2 only looks at memories sharing this share of words: a rewording keeps most of its words, and below
this the cosine of character n-grams measures shared spelling (file names, commands), not one meaning."""


def _order(valid_from: str | None, learning_id: str) -> tuple[str, str]:
    """Validity order; equal times fall back to the learning id so every ingestion order agrees."""
    return (valid_from or "", learning_id)


def _best(new: Incoming, incoming: frozenset[str], held: Iterable[Held]) -> tuple[Held | None, float]:
    best: Held | None = None
    best_key: tuple[float, str, str] | None = None
    for h in held:
        alike = same_subject(new.content, h.content) and not same_template(new.content, h.content)
        sim = jaccard(incoming, signature(h.content)) if alike else 0.0
        key = (-sim, h.valid_from or "", h.learning_id)  # ties: the earliest-learned, then the lowest id
        if best_key is None or key < best_key:
            best, best_key = h, key
    return best, (-best_key[0] if best_key else 0.0)


def _slot_decision(new: Incoming, words: frozenset[str], same_slot: Sequence[Held], threshold: float) -> Decision:
    """Place ``new`` among the slot's values by validity: merge with an equal neighbour, else close around it."""
    mine = _order(new.valid_from, new.learning_id)
    before = [h for h in same_slot if _order(h.valid_from, h.learning_id) < mine]
    after = [h for h in same_slot if _order(h.valid_from, h.learning_id) > mine]
    prev = max(before, key=lambda h: _order(h.valid_from, h.learning_id), default=None)
    succ = min(after, key=lambda h: _order(h.valid_from, h.learning_id), default=None)
    for neighbour in (prev, succ):
        if neighbour is not None and not same_template(new.content, neighbour.content) \
                and _tool_fact(new, neighbour) != FULLER \
                and not changed_value(new.content, neighbour.content):  # fmt: skip
            sim = jaccard(words, signature(neighbour.content))
            if sim >= threshold:  # the same value stated again: one memory, reinforced
                return Decision("reinforce", neighbour.learning_id, sim)
    if prev is not None and prev.valid_until is None and _tool_fact(new, prev) == IN_PART:
        return Decision("reinforce", prev.learning_id, jaccard(words, signature(prev.content)))
    closes: list[Supersession] = []
    if prev is not None and (prev.valid_until is None or new.valid_from is None or prev.valid_until > new.valid_from):
        closes.append(Supersession(prev.learning_id, new.learning_id, new.valid_from,
                                   restates(new.content, prev.content, new.slot)))
    if succ is not None:
        closes.append(Supersession(new.learning_id, succ.learning_id, succ.valid_from,
                                   restates(succ.content, new.content, new.slot)))
    return Decision("new", supersessions=tuple(closes))


_LITERAL = re.compile(r'"[^"\n]*"|\'[^\'\n]*\'|\b\d+(?:\.\d+)*\b|\b(?:true|false|nil|null|none)\b', re.IGNORECASE)


def changed_value(a: str, b: str) -> bool:
    """Whether two values of a slot quote one setting with another literal (``http: [ip: {127, 0, 0, 1}, port:
    1100]`` / ``http: [ip: {0, 0, 0, 0}, port: 1100]``; ``"mode": "full"`` / ``"mode": "silent"``): the same span
    with its numbers, strings and booleans aside, each side quoting what the other does not. Alike words
    otherwise: a reinforcement would keep the older text, and the packet would state the value the file no longer
    holds (a fresh reader judged such a line harmful)."""
    sa, sb = set(_CODE_SPAN.findall(a)), set(_CODE_SPAN.findall(b))
    shapes = {_LITERAL.sub("#", x) for x in sa - sb}
    return any(_LITERAL.sub("#", y) in shapes for y in sb - sa)


PARTIAL_SLOT_PREFIX = "tool:"
_CLAUSES = re.compile(r"[,;:()]")
MAX_NAME_WORDS = 3


def _named(text: str) -> frozenset[str]:
    """What a fact names: its backticked spans and its short list items (``[FORMAT]``, ``eslint --fix``,
    ``lint-staged``: a clause of at most three words between commas, colons, semicolons or brackets)."""
    spans = _CODE_SPAN.findall(text)
    items = (c.strip(" .").lower() for c in _CLAUSES.split(_CODE_SPAN.sub(" ", text)))
    return frozenset(spans) | {c for c in items if c and len(c.split()) <= MAX_NAME_WORDS}


FULLER, IN_PART = "fuller", "in part"


def _tool_fact(new: Incoming, held: Held) -> str:
    """How a value of a fact tools print (slot ``tool:…``) compares with a held one: :data:`FULLER` when it names
    all the held one names and more (a check it did not list): it replaces the held value, whose text a
    reinforcement would keep without the new check; :data:`IN_PART` when it names nothing the held one does not:
    the same fact seen again or in part, which reinforces it. A hook prints only the checks that failed, so a
    session where only [FORMAT] failed would otherwise close the value that named [FORMAT], [CREDO], [DIALYZER] and
    said that skipping git hooks does not get past it. "" for other slots (the brief's items are recomputed from the
    whole history: a path one drops is gone) and for values that name other things (another branch, another
    check), which supersede as any slot value does."""
    if not (new.slot or "").startswith(PARTIAL_SLOT_PREFIX):
        return ""
    mine, theirs = _named(new.content), _named(held.content)
    if mine > theirs:
        return FULLER
    return IN_PART if mine and mine <= theirs else ""


def restates(newer: str, older: str, slot: str | None) -> bool:
    """Whether a value of a fact tools print that closes an older one names all the older one named (a hook seen
    in full after a session saw only part of it): the same fact seen again, so the sessions that saw the older value
    count for the newer (:func:`~nous_assets.store.reads.recurrence.learning_sessions`). Else a fuller value
    would start from one session and fall below the packet's evidence bar, however many sessions saw the fact."""
    if not (slot or "").startswith(PARTIAL_SLOT_PREFIX):
        return False
    theirs = _named(older)
    return bool(theirs) and theirs <= _named(newer)


MIN_STEM = 4


def _inflection(x: str, y: str) -> bool:
    """Two forms of one word ("require"/"requires", "container"/"containers"): a long common beginning."""
    stem = len(os.path.commonprefix([x, y]))
    return stem >= MIN_STEM and stem >= 0.6 * min(len(x), len(y))


def _reworded(new: Incoming, h: Held) -> bool:
    """Tier 2's guard: the same subject, and no word swapped for another name (an inflected word is no swap)."""
    if not same_subject(new.content, h.content):
        return False
    if not same_template(new.content, h.content):
        return True
    pairs = zip(_words(_gist(new.content)), _words(_gist(h.content)), strict=True)
    return all(x == y or _inflection(x, y) for x, y in pairs)


def _normal(text: str) -> str:
    """The words a learning is compared by, in order: what tier 2 takes its n-grams from."""
    return " ".join(_words(_gist(text)))


def _tier2(new: Incoming, words: frozenset[str], current: Sequence[Held]) -> tuple[Held | None, float]:
    """The current memory with the highest TF-IDF cosine among those sharing enough words (ties: lowest id)."""
    close = [h for h in current if jaccard(words, signature(h.content)) >= TIER2_MIN_JACCARD and _reworded(new, h)]
    if not close:
        return None, 0.0
    scores = cosines(_normal(new.content), [_normal(h.content) for h in current])
    ranked = sorted((-score, h.learning_id, h) for h, score in zip(current, scores, strict=True) if h in close)
    return ranked[0][2], -ranked[0][0]


def decide(
    new: Incoming,
    held: Sequence[Held],
    *,
    threshold: float = 0.75,
    near_miss: float = 0.65,
    cosine: float = 0.85,
    ambiguous: float = 0.70,
    judge: Judge | None = None,
    exclude: frozenset[str] = frozenset(),
) -> Decision:
    """What appending ``new`` should do, given the comparable memories ``held`` (see the module doc).

    ``held`` holds current memories (``valid_until`` None) and, for a slotted learning, every memory of its
    slot whatever its window. ``exclude`` names learnings never to merge with (the version a re-extraction
    replaces). ``judge`` is tier 3, asked only about an ambiguous pair.
    """
    words = signature(new.content)
    pool = [h for h in held if h.learning_id not in exclude and h.learning_id != new.learning_id]
    if new.slot:
        same_slot = [h for h in pool if h.slot == new.slot]
        if same_slot:
            return _slot_decision(new, words, same_slot, threshold)
    current = [h for h in pool if h.valid_until is None and not (new.slot and h.slot == new.slot)]
    best, sim = _best(new, words, current)
    if best is not None and sim >= threshold:
        return Decision("reinforce", best.learning_id, sim)
    para, cos = _tier2(new, words, current)
    if para is not None and cos >= cosine:
        return Decision("reinforce", para.learning_id, cos, tier=2)
    if best is not None and sim >= near_miss:
        near = Decision("new", similarity=sim, near=best.learning_id)
    elif para is not None and cos >= ambiguous:
        near = Decision("new", similarity=cos, near=para.learning_id, tier=2)
    else:
        return Decision("new")
    held_text = next(h.content for h in current if h.learning_id == near.near)
    if judge is not None and judge(new.content, held_text):
        return Decision("reinforce", near.near, near.similarity, tier=3)
    return near

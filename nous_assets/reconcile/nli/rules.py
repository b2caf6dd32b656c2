"""The ``rules`` classifier: offline, deterministic contradiction rules over two short learning texts.

Every rule is about the *shape* of two statements, never about the words of one project:

* **value** — one sentence with one short span changed, where the span is a value (a number, version,
  path, flag, command in backticks, ``key=value``) or follows a single-valued cue ("use", "port",
  "default", "set to", "runs on", …): "serves on port 3000" / "serves on port 4000". Single-valued: the
  newer-valid statement wins.
* **assignment** — both texts set the same key to different values (``key=a`` / ``key: b``,
  ``name@1.2`` / ``name@1.3``, ``--flag=x`` / ``--flag=y``, "port 80" / "port 8080") and otherwise talk
  about the same thing. Single-valued.
* **instead** — one says "X instead of Y" (or "rather than Y", "not Y") and the other recommends Y, or the
  reverse preference. Single-valued (one choice for one job).
* **removal** — one says the thing it shares with the other is "no longer" so, "deprecated", "removed in"
  a version, "not … anymore".
* **negation** — the same content words with opposite polarity (an odd number of negations on one side).
* **antonym** — the same content words except one antonym pair (enable/disable, always/never, sync/async…).

Otherwise two texts whose content words mostly coincide entail each other, and anything else is neutral.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Sequence

from nous_assets.reconcile.nli.base import Verdict

VERSION = "rules-1"

_TOKEN = re.compile(r"[\w./@~+:=#-]*[\w/@~+=#-]|\S")
_EDGE_PUNCT = ".:,;!?"
STOP = frozenset(
    "a an and are as at be been being by for from has have had in into is it its of on or so that the this "
    "to was were which with when while then than there these those their they them we you your our i it's "
    "should must will would can could may might just also only all any some each every".split()
)
NEGATIONS = frozenset(
    "not no never nothing none nobody neither nor cannot can't don't doesn't didn't isn't aren't wasn't "
    "weren't won't wouldn't shouldn't mustn't avoid without stop stopped".split()
)
_REMOVAL = re.compile(r"\bno longer\b|\bdeprecated\b|\bremoved (?:in|from|since)\b|\banymore\b|\bnot any more\b")
ANTONYMS = {
    frozenset(p.split("/"))
    for p in (
        "enable/disable enabled/disabled enables/disables true/false on/off always/never allow/deny "
        "allowed/denied allow/forbid include/exclude included/excluded includes/excludes sync/async "
        "synchronous/asynchronous required/optional public/private add/remove added/removed adds/removes "
        "start/stop before/after increase/decrease yes/no with/without works/fails passes/fails "
        "succeeds/fails supported/unsupported available/unavailable valid/invalid visible/hidden "
        "enable/turn-off open/closed lock/unlock locked/unlocked allowed/blocked allow/block accept/reject "
        "accepted/rejected show/hide first/last inside/outside upper/lower uppercase/lowercase "
        "ascending/descending more/less higher/lower faster/slower larger/smaller over/under"
    ).split()
}
_VALUE_CUES = frozenset(
    "use uses using default defaults set sets to is are equals listens listen serves serve "
    "port ports version versions points point lives live located via prefer prefers switch switched "
    "pinned pin requires require target targets named called named branch".split()
)
_ASSIGN = re.compile(r"([a-z_][\w.-]{1,40})\s*(?:=|:)\s*[\"'`]?([^\s\"'`,;)\]]+)")
_AT_VERSION = re.compile(r"([a-z][\w./-]{1,60})@v?(\d[\w.]*)")
_FLAG = re.compile(r"(--[a-z][\w-]+)[= ]([^\s`'\",;]+)")
_NOUN_NUMBER = re.compile(r"\b(port|version|timeout|limit|python|node|java|go|ruby)\s+v?(\d[\w.]*)")
_INSTEAD = re.compile(
    r"([\w./@'\"+-]+)\s*,?\s+(?:instead of|rather than|over|not)\s+(?:using\s+|the\s+)?([\w./@'\"+-]+)"
)


def _tokens(text: str) -> list[str]:
    """Lowercase tokens that keep values whole (``v1.2.3``, ``src/app.py``, ``--flag=x``, ``KEY=v``)."""
    clean = text.lower().replace("`", " ").replace('"', " ").replace("“", " ").replace("”", " ")
    out = []
    for tok in _TOKEN.findall(clean):
        tok = tok.strip(_EDGE_PUNCT) if len(tok) > 1 else tok
        if tok and (len(tok) > 1 or tok.isalnum()):
            out.append(tok)
    return out


def _stem(word: str) -> str:
    """A crude suffix strip so "runs"/"running"/"run" and "tests"/"test" compare equal."""
    for suffix in ("ing", "ed", "es", "s"):
        if len(word) > len(suffix) + 2 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _content(tokens: Sequence[str], drop: frozenset[str] = frozenset()) -> frozenset[str]:
    return frozenset(_stem(t) for t in tokens if t not in STOP and t not in NEGATIONS and t not in drop)


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _is_value(token: str) -> bool:
    return any(c.isdigit() for c in token) or any(c in token for c in "/.=@:#_") or token.startswith("-")


def _polarity(tokens: Sequence[str]) -> int:
    return sum(t in NEGATIONS for t in tokens) % 2


def _value_rule(ta: list[str], tb: list[str]) -> Verdict | None:
    """One sentence, one short changed span that is a value (or follows a single-valued cue)."""
    ops = [op for op in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    span_a, span_b = ta[i1:i2], tb[j1:j2]
    if len(span_a) > 3 or len(span_b) > 3:
        return None
    shared = [t for t in ta[:i1] + ta[i2:] if t not in STOP]
    if len(shared) < 2 or len(shared) * 2 < len(ta) - len(span_a):
        return None
    if set(span_a) & NEGATIONS or set(span_b) & NEGATIONS:
        return None  # a polarity flip, not a value: the negation rule decides
    if any(frozenset((x, y)) in ANTONYMS for x in span_a for y in span_b):
        return None
    valued = any(map(_is_value, span_a)) and any(map(_is_value, span_b))
    joined_a, joined_b = " ".join(span_a), " ".join(span_b)
    if joined_a.startswith(joined_b) or joined_b.startswith(joined_a):
        return None  # ``lint`` / ``lint:fix``: a variant of the same thing, not another value
    cued = i1 > 0 and ta[i1 - 1] in _VALUE_CUES
    if not (valued or cued):
        return None
    return Verdict("contradiction", 0.85 if valued else 0.75, single_valued=True, reason="value")


def _assignments(text: str) -> dict[str, str]:
    low = text.lower().replace("`", " ")
    out: dict[str, str] = {}
    for pattern in (_ASSIGN, _AT_VERSION, _FLAG, _NOUN_NUMBER):
        for key, value in pattern.findall(low):
            out.setdefault(key.strip(_EDGE_PUNCT), value.strip(_EDGE_PUNCT))
    return out


def _assignment_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """The same key set to different values, in texts otherwise about the same thing."""
    va, vb = _assignments(a), _assignments(b)
    clashes = [k for k in va.keys() & vb.keys() if va[k] and vb[k] and va[k] != vb[k]]
    if not clashes or any(va[k] == vb[k] for k in va.keys() & vb.keys() if k not in clashes and len(va) == 1):
        return None
    values = {_stem(v) for k in clashes for v in (va[k], vb[k])}
    if _jaccard(ca - values, cb - values) < 0.4:
        return None
    return Verdict("contradiction", 0.8, single_valued=True, reason="assignment")


def _choice(match: tuple[str, str]) -> tuple[frozenset[str], frozenset[str]]:
    return _content(_tokens(match[0])), _content(_tokens(match[1]))


def _instead_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """"X instead of Y" against a statement that picks Y (or "Y instead of X")."""
    for first, second, other_content, other_text in ((a, b, cb, b), (b, a, ca, a)):
        for match in _INSTEAD.findall(first.lower().replace("`", "")):
            chosen, rejected = _choice(match)
            if not chosen or not rejected or chosen & rejected:
                continue
            for back in _INSTEAD.findall(other_text.lower().replace("`", "")):
                c2, r2 = _choice(back)
                if c2 and r2 and c2 <= rejected and r2 <= chosen:
                    return Verdict("contradiction", 0.85, single_valued=True, reason="instead")
            first_rest = _content(_tokens(first)) - chosen - rejected
            if rejected <= other_content and not (chosen & other_content) and _jaccard(
                first_rest, other_content - rejected
            ) >= 0.25 and not _INSTEAD.search(second.lower().replace("`", "")):
                return Verdict("contradiction", 0.75, single_valued=True, reason="instead")
    return None


def _removal_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    ra, rb = bool(_REMOVAL.search(a.lower())), bool(_REMOVAL.search(b.lower()))
    if ra == rb:
        return None
    markers = frozenset({"longer", "deprecat", "remov", "anymore", "since", "any", "more"})
    if _jaccard(ca - markers, cb - markers) >= 0.5:
        return Verdict("contradiction", 0.85, reason="removal")
    return None


def _negation_rule(ta: list[str], tb: list[str], ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    if _polarity(ta) == _polarity(tb) or _jaccard(ca, cb) < 0.6 or len(ca | cb) < 3:
        return None
    return Verdict("contradiction", 0.8 if _jaccard(ca, cb) >= 0.75 else 0.72, reason="negation")


def _antonym_rule(ta: list[str], tb: list[str]) -> Verdict | None:
    sa, sb = set(ta) - set(tb), set(tb) - set(ta)
    pairs = [(x, y) for x in sa for y in sb if frozenset((x, y)) in ANTONYMS]
    if len(pairs) != 1:
        return None
    x, y = pairs[0]
    rest_a, rest_b = _content(ta, frozenset({x})), _content(tb, frozenset({y}))
    if len(rest_a | rest_b) < 2 or _jaccard(rest_a, rest_b) < 0.6:
        return None
    return Verdict("contradiction", 0.8, reason="antonym")


def classify_pair(a: str, b: str) -> Verdict:
    """The rules' verdict on one pair (symmetric up to which rule fires first)."""
    ta, tb = _tokens(a), _tokens(b)
    if not ta or not tb or ta == tb:
        return Verdict("entailment", 0.9, reason="same text") if ta and ta == tb else Verdict("neutral", 0.5)
    ca, cb = _content(ta), _content(tb)
    verdict = (
        _value_rule(ta, tb)
        or _antonym_rule(ta, tb)
        or _removal_rule(a, b, ca, cb)
        or _negation_rule(ta, tb, ca, cb)
        or _instead_rule(a, b, ca, cb)
        or _assignment_rule(a, b, ca, cb)
    )
    if verdict is not None:
        return verdict
    overlap = _jaccard(ca, cb)
    smaller = min(len(ca), len(cb))
    if overlap >= 0.7 or (smaller >= 4 and (ca <= cb or cb <= ca)):
        return Verdict("entailment", round(min(0.95, 0.5 + overlap / 2), 3), reason="overlap")
    return Verdict("neutral", round(0.9 - overlap / 2, 3), reason="no rule applies")


class RulesClassifier:
    """The default tier: no model, no network, the same answer every time."""

    name = "rules"
    model_version = VERSION

    def classify(self, pairs: Sequence[tuple[str, str]]) -> list[Verdict]:
        return [classify_pair(a, b) for a, b in pairs]

"""The ``rules`` classifier: offline, deterministic contradiction rules over two short learning texts.

Every rule is about the *shape* of two statements, never about the words of one project:

* **value** — one sentence with one short span changed, where the span is a value (a number, version,
  path, ``--flag=value`` of the same flag, ``KEY=value`` of the same key, the tool at the head of a command in
  backticks) or follows a single-valued cue ("use", "port", "default", "set to", "listens on", …): "serves
  on port 3000" / "serves on port 4000". Another subcommand of the same tool (``bun run lint`` / ``bun run
  typecheck``), other flags or a mere extension (``lint`` / ``lint:fix``) is another command, not another
  value. Single-valued: the newer-valid statement wins.
* **assignment** — both texts set the same key to different values (``key=a`` / ``key: b``,
  ``name@1.2`` / ``name@1.3``, ``--flag=x`` / ``--flag=y``, "port 80" / "port 8080") and otherwise talk
  about the same thing (and, when both name files, the same file). Single-valued.
* **instead** — one says "X instead of Y" (or "rather than Y", "prefer X over Y", "X, not Y") and the
  other recommends Y, or the reverse preference. Single-valued (one choice for one job).
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
    "should must will would can could may might just also only all any some each every do does did".split()
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
    "pinned pin requires require target targets named called branch".split()
)
_ASSIGN = re.compile(r"([a-z_][\w.-]{1,40})\s*(?:=|:)\s*[\"'`]?([^\s\"'`,;)\]]+)")
_AT_VERSION = re.compile(r"([a-z][\w./-]{1,60})@v?(\d[\w.]*)")
_FLAG = re.compile(r"(--[a-z][\w-]+)[= ]([^\s`'\",;]+)")
_NOUN_NUMBER = re.compile(r"\b(port|version|timeout|limit|python|node|java|go|ruby)\s+v?(\d[\w.]*)")
_SWAP = (  # "X instead of Y", "X rather than Y", "prefer X over Y", "X, not Y": (chosen, rejected)
    re.compile(r"([\w./@'\"+-]+)\s+(?:instead of|rather than)\s+(?:using\s+|the\s+)?([\w./@'\"+-]+)"),
    re.compile(r"\bprefer(?:s|red)?\s+([\w./@'\"+-]+)\s+(?:over|to)\s+([\w./@'\"+-]+)"),
    re.compile(r"([\w./@'\"+-]+)\s*,\s*not\s+(?:the\s+)?([\w./@'\"+-]+)"),
)
_CODE = re.compile(r"(`[^`\n]+`)")
_FILE_PATH = re.compile(r"(?<![\w/.-])(?:[\w.-]+/)*[\w-]+\.[a-z]{1,5}\b")


def _tokens(text: str) -> list[str]:
    """Lowercase tokens that keep values whole (``v1.2.3``, ``src/app.py``, ``--flag=x``, ``KEY=v``)."""
    return [tok for tok, _ in _marked_tokens(text)]


def _marked_tokens(text: str) -> list[tuple[str, tuple[int, int] | None]]:
    """:func:`_tokens` with, for a token inside a backtick code span, (span number, position in the span)."""
    out: list[tuple[str, tuple[int, int] | None]] = []
    for n, piece in enumerate(_CODE.split(text)):
        code = piece.startswith("`") and piece.endswith("`") and len(piece) > 1
        clean = piece.lower().replace("`", " ").replace('"', " ").replace("“", " ").replace("”", " ")
        position = 0
        for tok in _TOKEN.findall(clean):
            tok = tok.strip(_EDGE_PUNCT) if len(tok) > 1 else tok
            if tok and (len(tok) > 1 or tok.isalnum()):
                out.append((tok, (n, position) if code else None))
                position += 1
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


def _flags(span: Sequence[str]) -> set[str]:
    return {t.split("=", 1)[0] for t in span if t.startswith("-")}


def _keys(span: Sequence[str]) -> set[str]:
    return {t.split("=", 1)[0] for t in span if "=" in t and not t.startswith("-")}


def _value_rule(ma: list, mb: list) -> Verdict | None:
    """One sentence, one short changed span that is a value (or follows a single-valued cue)."""
    ta, tb = [t for t, _ in ma], [t for t, _ in mb]
    ops = [op for op in difflib.SequenceMatcher(a=ta, b=tb, autojunk=False).get_opcodes() if op[0] != "equal"]
    if len(ops) != 1 or ops[0][0] != "replace":
        return None
    _, i1, i2, j1, j2 = ops[0]
    span_a, span_b = ta[i1:i2], tb[j1:j2]
    if len(span_a) > 3 or len(span_b) > 3:
        return None
    rest = [t for t in ta[:i1] + ta[i2:] if t not in STOP]
    code_a, code_b = ma[i1][1], mb[j1][1]
    tool_swap = code_a is not None and code_b is not None and code_a[1] == 0 and code_b[1] == 0
    if len(rest) < (1 if tool_swap else 2) or 2 * len(rest) < len([t for t in ta if t not in STOP]) - len(span_a):
        return None
    if set(span_a) & NEGATIONS or set(span_b) & NEGATIONS:
        return None  # a polarity flip, not a value: the negation rule decides
    if any(frozenset((x, y)) in ANTONYMS for x in span_a for y in span_b):
        return None
    joined_a, joined_b = " ".join(span_a), " ".join(span_b)
    if joined_a.startswith(joined_b) or joined_b.startswith(joined_a):
        return None  # ``lint`` / ``lint:fix``: a variant of the same thing, not another value
    if _flags(span_a) != _flags(span_b) or _keys(span_a) != _keys(span_b):
        return None  # other options or other keys: another invocation or setting, not another value of one
    if tool_swap:  # inside a command, another tool for the job is another value of it
        return Verdict("contradiction", 0.8, single_valued=True, reason="value")
    numeric = any(map(_is_value, span_a)) and any(c.isdigit() for c in joined_a + joined_b)
    if code_a is not None and code_b is not None and not numeric:
        return None  # another subcommand or argument of one tool (``bun run lint`` / ``bun run typecheck``)
    valued = any(map(_is_value, span_a)) and any(map(_is_value, span_b))
    cued = i1 > 0 and ta[i1 - 1] in _VALUE_CUES
    if not (valued or cued):
        return None
    return Verdict("contradiction", 0.85 if valued else 0.75, single_valued=True, reason="value")


def _assignments(text: str) -> dict[str, str]:
    low = text.lower().replace("`", " ")
    out: dict[str, str] = {}
    for pattern in (_ASSIGN, _AT_VERSION, _FLAG, _NOUN_NUMBER):
        for key, value in pattern.findall(low):
            value = value.strip(_EDGE_PUNCT)
            if pattern is _ASSIGN and not (_is_value(value) or value in ("true", "false", "none", "null")):
                continue  # "file.css: add styles" is prose after a colon, not a setting
            out.setdefault(key.strip(_EDGE_PUNCT), value)
    return out


def _assignment_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """The same key set to different values, in texts otherwise about the same thing (and the same file)."""
    fa, fb = set(_FILE_PATH.findall(a.lower())), set(_FILE_PATH.findall(b.lower()))
    if fa and fb and not fa & fb:
        return None  # the same key in another file is another setting (dev vs test config)
    va, vb = _assignments(a), _assignments(b)
    clashes = [k for k in va.keys() & vb.keys() if va[k] != vb[k]]
    if not clashes:
        return None
    values = {_stem(v) for k in clashes for v in (va[k], vb[k])}
    rest_a, rest_b = ca - values, cb - values
    if len(rest_a ^ rest_b) > 1 and _jaccard(rest_a, rest_b) < 0.75:
        return None  # more than the value differs: another subject that happens to share a key
    return Verdict("contradiction", 0.8, single_valued=True, reason="assignment")


def _swaps(text: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    low = text.lower().replace("`", "")
    out = []
    for pattern in _SWAP:
        for chosen, rejected in pattern.findall(low):
            c, r = _content(_tokens(chosen)), _content(_tokens(rejected))
            if c and r and not c & r:
                out.append((c, r))
    return out


def _instead_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """"X instead of Y" against a statement that picks Y (or "Y instead of X")."""
    sa, sb = _swaps(a), _swaps(b)
    for (c1, r1), (c2, r2) in ((x, y) for x in sa for y in sb):
        if c2 <= r1 and r2 <= c1:
            return Verdict("contradiction", 0.85, single_valued=True, reason="instead")
    for swaps, other, mine, other_swaps in ((sa, cb, ca, sb), (sb, ca, cb, sa)):
        if other_swaps:
            continue
        for chosen, rejected in swaps:
            rest = mine - chosen - rejected
            related = len(rest & other) >= 1 and _jaccard(rest, other - rejected) >= 0.25
            if rejected <= other and not chosen & other and related:
                return Verdict("contradiction", 0.75, single_valued=True, reason="instead")
    return None


_MARKERS = frozenset({"longer", "deprecat", "deprecated", "remov", "removed", "anymore", "since", "any", "more"})


def _removal_rule(a: str, b: str, ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """"X is deprecated / no longer / removed in v3" against a statement that still uses X."""
    ra, rb = bool(_REMOVAL.search(a.lower())), bool(_REMOVAL.search(b.lower()))
    if ra == rb:
        return None
    marked, other = (ca - _MARKERS, cb) if ra else (cb - _MARKERS, ca)
    shared = marked & other
    if len(shared) >= 2 and len(shared) >= 0.5 * len(marked):
        return Verdict("contradiction", 0.85, reason="removal")
    return None


def _negation_rule(ta: list[str], tb: list[str], ca: frozenset[str], cb: frozenset[str]) -> Verdict | None:
    """The same few content words, one side negated: at most a couple of words besides the negation differ."""
    if _polarity(ta) == _polarity(tb) or len(ca & cb) < 3 or len(ca ^ cb) > 2:
        return None
    return Verdict("contradiction", 0.8, reason="negation")


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
    ma, mb = _marked_tokens(a), _marked_tokens(b)
    ta, tb = [t for t, _ in ma], [t for t, _ in mb]
    if not ta or not tb or ta == tb:
        return Verdict("entailment", 0.9, reason="same text") if ta and ta == tb else Verdict("neutral", 0.5)
    ca, cb = _content(ta), _content(tb)
    verdict = (
        _value_rule(ma, mb)
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

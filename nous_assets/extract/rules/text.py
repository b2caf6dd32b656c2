"""Text handling shared by the rule families: wrapper tags and markdown out, sentences, quotes, caps.

Every rule quotes people or picks sentences out of prose, so they all need the same notion of "the
words", "a sentence", "a cut that does not end mid-word" and "a sentence that names something" (a
file, command or API): a memory that names nothing cannot be acted on in a later session.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

I = re.IGNORECASE  # noqa: E741 - the flag every rule uses

BACKTICKED_RE = re.compile(r"`([^`]+)`")
"""A code span's text (``mix test`` of "run `mix test`"): how brief and packet lines name commands and paths."""
ANSI_RE = re.compile(r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[()][A-Z0-9]|\x1b[=>]")
_WRAPPER_TAGS = (
    "system-reminder", "command-name", "command-message", "command-args", "local-command-stdout",
    "local-command-stderr", "local-command-caveat", "task-notification", "user-prompt-submit-hook",
    "persisted-output", "bash-input", "bash-stdout", "bash-stderr", "ide_selection", "ide_opened_file",
)  # fmt: skip
_TAG_BLOCK_RE = re.compile(r"<(" + "|".join(_WRAPPER_TAGS) + r")\b[^>]*>.*?</\1>", re.S)
_LOOSE_TAG_RE = re.compile(r"</?(?:" + "|".join(_WRAPPER_TAGS) + r")\b[^>]*>")
_FENCE_RE = re.compile(r"```.*?(?:```|$)", re.S)
EMOJI_RE = re.compile("[\U0001f300-\U0001faff\u2600-\u27bf\u2b00-\u2bff\ufe0f\u200d]")
BOX_RE = re.compile(r"[\u2500-\u259f\u2190-\u21ff\u2800-\u28ff]+")
_MD_RE = re.compile(r"\*\*|__|~~|^#{1,6}\s*|^\s*>\s?|^\s*(?:[-*+]|\d+[.)])\s+", re.M)
_SENT_SPLIT_RE = re.compile(r"(?<=[.!?])\s+(?=\S)|\n+")
_WS_RE = re.compile(r"[ \t]+")

FILLER_RE = re.compile(
    r"^(?:ok(?:ay)?|k|uh+|um+|hm+|ah+|oh+|well|so|sorry|thanks?|thank you|cool|great|nice|alright|right|"
    r"yes|yeah|yep|yup|sure|no|nope|wait|hmm+|wow|lol|wth|ugh|perfect|excellent|good|done|awesome)[.!,?:)\s]*$",
    I,
)
TRIVIAL_RE = re.compile(
    r"^(?:ok(?:ay)?|k|thanks?|thank you|ty|continue|go on|keep going|next|done|yes|no|y|n|sure|cool|great|nice|"
    r"lgtm|perfect|proceed|go|continue implementation|continue until (?:all are )?done|carry on|resume|"
    r"how'?s it going|status|hi|hello|hey)[.!?\s]*$",
    I,
)
ASSISTANT_FILLER_RE = re.compile(
    r"^(?:perfect|great|excellent|good|done|ok(?:ay)?|sure|got it|you'?re (?:absolutely )?right|i see|now i see|"
    r"ah+|nice|awesome|found (?:it|the issue)|interesting|understood|all green|clean|expected|good catch|"
    r"good question|right|now|hmm|alright)\b",
    I,
)
_OPENER_RE = re.compile(
    r"^(?:perfect|great|excellent|good|done|ok(?:ay)?|you'?re (?:absolutely )?right|got it|i see|ah+|"
    r"interesting|now i see what'?s happening|now i understand|found it|confirmed)[!.,:;—–-]*\s+",
    I,
)


_NUMBERED_RE = re.compile(r"^\s*\d+(?:→|\t)(.*)$")


def unnumbered(text: str) -> str:
    """A file as the Read tool showed it (``  12→line``), without its line numbers; other text as it is."""
    numbered = [m.group(1) for line in text.splitlines() if (m := _NUMBERED_RE.match(line))]
    return "\n".join(numbered) if numbered else text


def strip_noise(text: str) -> str:
    """ANSI codes and Claude Code's wrapper tags (system reminders, command wrappers) out."""
    text = ANSI_RE.sub("", text)
    text = _TAG_BLOCK_RE.sub(" ", text)
    return _LOOSE_TAG_RE.sub(" ", text)


def clean_md(text: str) -> str:
    """Markdown and decoration out, line structure kept; code fences become ``[code]``."""
    text = _FENCE_RE.sub(" [code] ", strip_noise(text))
    text = EMOJI_RE.sub("", text)
    text = BOX_RE.sub(" ", text)
    text = _MD_RE.sub("", text)
    return "\n".join(_WS_RE.sub(" ", line).strip() for line in text.splitlines())


def one_line(text: str) -> str:
    return " ".join(text.split())


def cap(text: str, limit: int) -> str:
    """At most ``limit`` characters, cut at a word boundary with an ellipsis."""
    text = one_line(text)
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut[limit // 2 :]:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:-(") + "…"


def fit(parts: Sequence[str], limit: int) -> str:
    return cap("".join(parts), limit)


_QUOTED_RE = re.compile(r"\"[^\"\n]{3,240}\"|“[^”\n]{3,240}”|`[^`\n]{1,200}`")


def sentences(text: str) -> list[str]:
    """Split on sentence ends and newlines, never inside a short quoted or backticked span."""
    quoted: list[str] = []

    def hide(m: re.Match[str]) -> str:
        quoted.append(m.group(0))
        return f"\x00{len(quoted) - 1}\x00"

    masked = _QUOTED_RE.sub(hide, text)
    # "e.g. x", "i.e. y", "vs. z" and "file.ex" are not sentence ends
    masked = re.sub(r"\b(e\.g|i\.e|vs|etc|approx|cf)\.(?=\s)", lambda m: m.group(1) + "\x01", masked, flags=I)
    out = []
    for part in _SENT_SPLIT_RE.split(masked):
        if part and part.strip():
            part = part.replace("\x01", ".")
            out.append(re.sub(r"\x00(\d+)\x00", lambda m: quoted[int(m.group(1))], part.strip()))
    return out


def words(text: str) -> list[str]:
    return re.findall(r"[A-Za-z0-9][\w'./:-]*", text)


_LOG_LINE_RE = re.compile(
    r"^(?:[>$#❯%]|\[[\w ]*\]|\d{1,2}:\d{2}|\d{4}-\d{2}-\d{2}|at\s|File \"|[-+]{2,}|[=~^]{2,}|\s*\d+\s*[│|→])"
)


def is_prose_line(line: str) -> bool:
    """A line a person wrote (not a log line, a stack frame or code)."""
    if _LOG_LINE_RE.match(line):
        return False
    if len(words(line)) < 3:
        return False
    letters = sum(ch.isalpha() or ch.isspace() for ch in line)
    if letters < 0.7 * len(line):
        return False
    symbolic = sum(1 for w in line.split() if re.search(r"[{}()<>=;/\\\[\]@$|]", w))
    return symbolic <= max(1, len(line.split()) // 3)


def leading_prose(text: str, limit: int = 1500) -> str:
    """The user's own words at the start of a message; stops where a pasted log/code block begins."""
    kept: list[str] = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line:
            continue
        if is_prose_line(line):
            kept.append(line)
            if sum(len(k) for k in kept) > limit:
                break
        elif kept:
            break
    out = ""
    for line in kept:
        if not out:
            out = line
        elif out[-1] in ".!?:;)" or len(out.rsplit("\n", 1)[-1]) < 40:
            out += "\n" + line
        else:
            out += " " + line  # a hard-wrapped sentence
    return out


def quote(parts: Sequence[str], limit: int = 240) -> str:
    """The user's words as one line, double quotes turned single so the quote can be wrapped."""
    text = " ".join(s.strip() for s in parts if s.strip())
    return cap(text.replace('"', "'"), limit)


_CONJUNCTION_RE = re.compile(r"^(?:so|but|and|also|however|plus|then|thus|hence|now)[,:]?\s+(?=\S)", I)
_DANGLING_RE = re.compile(
    r"^(?:it|they|this|that|these|those|which|he|she)(?:'s|\s+(?:is|was|are|were|will|won'?t|can|can'?t|does|doesn'?t|"
    r"did|didn'?t|has|had|means|needs?|should|must|would|could|IS|ARE))\b",
    I,
)


def strip_opener(sentence: str) -> str:
    """'Perfect! The issue is …' -> 'The issue is …'; 'So the gitignore …' -> 'the gitignore …'."""
    text = _OPENER_RE.sub("", sentence.strip().lstrip("-—–:;,. ")).strip().lstrip("-—–:;,. ")
    return _CONJUNCTION_RE.sub("", text).strip()


def dangling(sentence: str) -> bool:
    """True when the sentence starts with a pronoun whose referent is in another sentence ("It is …")."""
    return bool(_DANGLING_RE.match(sentence.strip()))


def upper_first(text: str) -> str:
    return text[:1].upper() + text[1:] if text else text


# ---------------------------------------------------------------------------------------------------------
# what a sentence names

_PATH_RE = re.compile(
    r"(?:^|[\s`'\"(])(?:\.{0,2}/)?[\w.@-]+/[\w./@*-]*\w"
    r"|\b[\w-]+\.(?:py|ex|exs|heex|eex|ts|tsx|js|jsx|mjs|cjs|rs|go|rb|json|jsonc|toml|ya?ml|md|sql|sh|css|scss|"
    r"html|lock|ini|cfg|conf|env|prisma|proto|gradle|kts|java|kt|swift|c|h|cpp|hpp|txt|xml|vue|svelte)\b"
)
_CODE_SPAN_RE = re.compile(r"`[^`\s][^`\n]*?[^`\s]`")  # no edge spaces: "x` — y `" pairs two other spans
IDENTIFIER_RE = re.compile(
    r"\b[a-z]+_[a-z0-9_]+\b|\b[A-Z][a-z0-9]+[A-Z]\w+\b|\b[a-z]+[A-Z]\w+\b|\b[A-Z]\w+\.[a-z_]\w*|\b\w+/\d\b"
    r"|--[a-z][\w-]+|\b[A-Z][A-Z0-9]+_[A-Z0-9_]+\b|\b\w+\(\)"
)


_CLI_RE = re.compile(
    r"\b(?:npm|npx|pnpm|yarn|bun|git|mix|pip|uv|cargo|go|docker|make|gh|kubectl|terraform|poetry|bundle|rails|"
    r"pytest|jest|vitest|ruff|eslint|biome|tsc|node|python3?|deno)\s+(?:run\s+)?[a-z][\w:.-]*"
)


def names_something(text: str) -> bool:
    """True when the text names a file, command, flag, identifier or API (something to act on)."""
    return bool(
        _CODE_SPAN_RE.search(text) or _PATH_RE.search(text) or IDENTIFIER_RE.search(text) or _CLI_RE.search(text)
    )


def first_code_ref(text: str) -> str:
    """The first backticked span, path or identifier of ``text`` (a short source reference), or ''."""
    m = _CODE_SPAN_RE.search(text)
    if m:
        return cap(m.group(0).strip("`"), 80)
    m = _PATH_RE.search(text)
    if m:
        return cap(m.group(0).strip(" `'\"("), 80)
    m = IDENTIFIER_RE.search(text)
    return cap(m.group(0), 80) if m else ""


# ---------------------------------------------------------------------------------------------------------
# time and scope

_TEMPORAL_LOW_RE = re.compile(
    r"\b(?:for now|temporar(?:y|ily)|until (?:we|the|it|they|next)|for the time being|at the moment|right now|"
    r"this week|for this (?:sprint|release)|(?:in|on|with|for) (?:react|python|node|django|rails|elixir|phoenix|"
    r"go|rust|java|typescript|postgres|ios|android|v(?:ersion)?)\s*v?\d+(?:\.\d+)*|as of (?:v|version )?\d)",
    I,
)
_PROJECT_MARKER_RE = re.compile(
    r"`[^`]+`|\b[\w-]+/[\w./-]+|\b\w+\.(?:py|ex|exs|ts|tsx|js|jsx|rs|go|rb|json|toml|ya?ml|md|sql|sh|heex|css|html)\b"
    r"|\b(?:we|we'?re|we'?ll|let'?s|our|us|this (?:project|repo|codebase|app|"
    r"service|branch|test|file)|these (?:tests|files)|the (?:project|repo|app|api|server|ci|database|db|codebase|"
    r"branch|pr))\b",
    I,
)


def temporal(text: str, default: str = "medium") -> tuple[str, str]:
    """(temporal confidence, the phrase that bounds it in time)."""
    m = _TEMPORAL_LOW_RE.search(text)
    if m:
        return "low", m.group(0)
    return default, ""


# said to Claude about how to work: "you …", a standing directive, or a stated preference of the user's own
_ADDRESSED_RE = re.compile(
    r"\b(?:you|your|yourself|you'?re|you'?ve)\b"
    r"|(?:^|[.!?;:]\s+|\n)(?:please\s+)?(?:always|never|don'?t|do not|stop|avoid|make sure|remember|just|no need to|"
    r"from now on|going forward|in the future)\b"
    r"|\bi (?:prefer|like it when|hate it when|expect|'?d rather)\b",
    I,
)


def user_scope(text: str) -> str:
    """'global' for how-to-work-with-me statements — said to Claude (``you``, a standing directive, a stated
    preference) and naming nothing of this project — else 'project'. A remark about the product ("the early
    tests are going to be both cli and web") names no file, yet it is about this project only."""
    if _PROJECT_MARKER_RE.search(text) or IDENTIFIER_RE.search(text) or not _ADDRESSED_RE.search(text):
        return "project"
    return "global"


def loads(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text) if text else {}
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def short_path(path: str, cwd: str | None) -> str:
    """A path relative to the session's cwd, else its last three parts."""
    path = path.replace("\\", "/")
    if cwd:
        root = cwd.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    parts = [p for p in path.split("/") if p]
    return "/".join(parts[-3:]) if len(parts) > 3 else path


# ---------------------------------------------------------------------------------------------------------
# the informative sentence of an assistant message

DIAG_RE = re.compile(
    r"\b(?:the (?:issue|problem|cause|fix|root cause|solution|error|reason|bug) (?:is|was)|because|this means|"
    r"is caused|needs? to|requires?|doesn'?t support|does not support|must|is that|creates?|causes?|"
    r"only works|isn'?t available|is not available|expects?|is missing|was missing|instead of)\b",
    I,
)
PLAN_START_RE = re.compile(
    r"^(?:now,? )?(?:let me|let'?s|i'?ll|i will|i'?m going to|i need to|next,? |then,? |first,? |now (?:add|update|"
    r"create|write|run|fix|let|i|check|verify|look|see|test)|time to|moving on|check (?:if|whether|that))\b",
    I,
)


def key_sentence(text: str, limit: int = 170, *, mode: str = "any") -> str:
    """The informative sentence of an assistant message.

    ``mode="any"``: diagnosis > statement > plan; ``"explain"``: diagnosis only (a cause/reason) or "";
    ``"reason"``: diagnosis > statement, never a bare "let me …" plan.
    """
    found = []
    for s in sentences(clean_md(text)):
        s = re.sub(r"^(?:step \d+[:.]?|[-*•])\s*", "", s.strip(" :"), flags=I)
        if len(words(s)) < 4 or s == "[code]":
            continue
        if ASSISTANT_FILLER_RE.match(s) and len(words(s)) <= 6:
            continue
        found.append(strip_opener(s))
    if not found:
        return ""
    for s in found[:8]:
        if DIAG_RE.search(s) and not s.endswith("?") and not PLAN_START_RE.match(s):
            return cap(s, limit)
    if mode == "explain":
        return ""
    statements = [s for s in found if not s.endswith("?") and not PLAN_START_RE.match(s)]
    if statements and len(words(statements[0])) >= 5:
        return cap(statements[0], limit)
    if mode == "reason":
        return ""
    return cap(found[0], limit)

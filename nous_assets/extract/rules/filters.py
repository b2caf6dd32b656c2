"""What must not become a memory, whichever rule found it.

* generated text (summariser prompts, pasted transcripts) and pasted text read as speech: logs, review
  comments ("pr feedback: 1. Critical Bug …", "In app/x.ts around lines 76 to 82 …") are someone
  else's words, not the user's correction;
* one-off details: test counts ("87 tests, 0 failures"), commit hashes, PR/issue numbers, one-time codes —
  true once, noise in every later session; a sentence carrying one is dropped from a memory;
* rebase/merge conflict resolutions: they concern one branch at one moment;
* slips of the moment (a mistyped path or flag, a file not there, code that did not compile yet): fixing them
  teaches nothing the next session needs;
* bypasses presented as fixes (``--no-verify``, ``git push --force``, ``HUSKY=0``, ``|| true``, skipping a
  check): a check that was skipped was not fixed.

Task prompts are recognised in :mod:`~nous_assets.extract.rules.session` (they depend on position).
"""

from __future__ import annotations

import re

from nous_assets.extract.rules.text import I, sentences

_GENERATED_RE = re.compile(
    r"^(?:summarize this|your task is to create a detailed summary|this session is being continued|"
    r"caveat: the messages below|base directory for this skill|<)",
    I,
)
_TRANSCRIPT_LINE_RE = re.compile(r"^(?:user|agent|assistant|human|claude)\s*:", I | re.M)
_REVIEW_RE = re.compile(
    r"^(?:pr feedback|more (?:reviewer )?feedback|(?:code )?review(?: comments?)? for\b|reviewer feedback|"
    r"review comments?)\b"
    r"|\baround lines? \d+(?:\s*(?:to|-)\s*\d+)?\b|\bprompt for ai agents\b|\bverify each finding\b"
    r"|\bcommittable suggestion\b|\boutside diff range\b|^\s*\d+-\d+:\s|\bnitpick comments?\b"
    r"|\b(?:critical|major|minor) (?:bug|issue)s?:",
    I | re.M,
)
_COUNT_RE = re.compile(
    r"\b\d[\d,]* (?:doc)?tests?\b|\b\d+ (?:passed|failed|failures?|errors?|examples?|specs?|properties|"
    r"skipped|suites?)\b|\b\d+ (?:existing|new) (?:tests?|ones?)\b|\ball \d+\b|\(\d+ (?:existing|new)\b"
    r"|\b\d+ total\b|\b\d+ (?:pending )?todos?\b|\b\d+ files? changed\b|\b\d+ insertions?\b"
    r"|\b\d+\s*[-–]\s*\d+\s*(?:minutes|mins|hours|hrs|days)\b",  # an estimate ("15-20 minutes of work")
    I,
)
_HASH_RE = re.compile(r"(?<![\w./-])(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w/-]|\.\w)")
_NUMBER_REF_RE = re.compile(
    r"(?:\bPRs?|\bpull request|\bissue|\bticket|\bMR)\s*#?\d+\b|(?<![\w&])#\d{2,}\b|\bpr \d{2,}\b", I
)
_CODE_NUMBER_RE = re.compile(r"(?<![\w.:/-])\d{6,}(?![\w:/-]|\.\w)")
_CONFLICT_RE = re.compile(
    r"\b(?:merge|rebase) conflicts?\b|\bconflict (?:markers?|resolution)\b|\bresolv(?:e|ed|ing) (?:the )?conflicts?\b"
    r"|\bconflicts? in\b|\bcould not apply [0-9a-f]{7}|\bafter the rebase\b|<<<<<<<|>>>>>>>",
    I,
)
BYPASS_RE = re.compile(
    r"--no-verify\b|\bgit push\b[^|;&]*(?:--force(?!-with-lease)\b|\s-f\b)|\bHUSKY=0\b|\bLEFTHOOK=0\b|\bSKIP=\S"
    r"|\|\|\s*(?:true|:)\s*(?:$|[;&)])|--skip-(?:hooks?|checks?|tests?|verify|ci)\b|--no-(?:hooks|checks)\b"
    r"|\bskip(?:ping)? (?:the )?(?:pre-commit |commit |git )?(?:hooks?|checks?|verification)\b"
    r"|\bdisable (?:the )?(?:pre-commit )?hooks?\b",
    I,
)


def generated_text(raw: str) -> bool:
    """Text a tool or model generated (summariser prompts, transcripts pasted as a whole)."""
    return bool(_GENERATED_RE.match(raw)) or len(_TRANSCRIPT_LINE_RE.findall(raw)) >= 2


_LOG_RE = re.compile(  # what consoles and logs print, not what people write
    r"\b(?:Uncaught|Unhandled|Traceback|Exception|TypeError|ReferenceError|ContextError)\b"
    r"|\.(?:js|jsx|ts|tsx|py|rs|go|rb|java):\d+|\bat [\w.$<>]+ \("
    r"|(?:^|\s)(?:Warning|Error|ERROR|WARN|INFO|DEBUG)[:\]]\s|\[\w+\] |\b0x[0-9a-f]{6,}\b",
    re.M,
)


def pasted_text(raw: str, prose: str) -> bool:
    """A message that is mostly someone else's text: review comments, console or log output (a warning the
    browser printed, a stack trace), or a paste with no words of one's own."""
    if _REVIEW_RE.search(raw[:3000]) or len(_LOG_RE.findall(prose[:3000])) >= 2:
        return True
    return not prose.strip() and len(raw) > 1500  # nothing of the user's own before the paste


def own_words(raw: str, prose: str) -> str:
    """``prose`` up to the colon that introduces a log pasted after it: "the worker crashes: <log>" is the user's,
    "warnings in the console: Keys should be unique so that …" and the stack trace under it are the browser's."""
    pasted = len(_LOG_RE.findall(raw[:5000])) - len(_LOG_RE.findall(prose[:3000])) >= 3
    cut = prose.find(": ")
    return prose[: cut + 1] if pasted and cut > 0 else prose


def one_off(text: str) -> bool:
    """True when the text carries a detail that is only true once (a count, hash, PR number, code)."""
    return bool(
        _COUNT_RE.search(text) or _HASH_RE.search(text) or _NUMBER_REF_RE.search(text) or _CODE_NUMBER_RE.search(text)
    )


# errors that say something else was happening at that moment, not something about the project
_TRANSIENT_RE = re.compile(
    r"index\.lock|\.lock': File exists|another git process|Could not resolve host|Temporary failure in name "
    r"resolution|Connection (?:refused|reset|timed out)|ETIMEDOUT|ECONNRESET|ECONNREFUSED|rate limit|\b429\b|"
    r"\b50[234]\b (?:Bad Gateway|Service Unavailable|Gateway Time-?out)|No space left on device|"
    r"Resource temporarily unavailable|Text file busy|database is locked",
    I,
)


# errors of the moment's own making: a mistyped path or flag, a file not there, code being written that did not
# compile yet. The next session will not hit them again; an error of the project's setup (a missing tool, a
# dependency, a version, a config) it will.
_SLIP_RE = re.compile(
    r"pathspec '.*' did not match|No such file or directory|is not a working tree|not a git repository"
    r"|Unknown JSON field|unknown (?:shorthand )?(?:flag|option|field|argument)|unrecognized (?:option|argument)"
    r"|invalid (?:option|argument)|unexpected argument|accepts \d+ arg|did you mean"
    r"|\berror\[E\d{4}\]|mismatched closing delimiter|unclosed delimiter|\bSyntaxError\b|\bIndentationError\b"
    r"|\bNameError\b|is not defined\b|cannot find (?:type|value|function|macro|struct|trait|module|name)"
    r"|expected .{1,40}, found|unexpected (?:token|EOF|end of)|\bTS\d{4}\b|has no attribute"
    r"|undefined (?:variable|name|method|function|reference)|Unresolved reference|parse error",
    I,
)


def slip(error: str) -> bool:
    """True when a failure is a slip of the session's own: a path, flag or field it got wrong, or code it was still
    writing (a compile or syntax error). Fixing it teaches nothing the next session needs."""
    return bool(_SLIP_RE.search(error))


def transient(text: str) -> bool:
    """True when an error only says the machine was busy or offline at that moment (a lock file, the network)."""
    return bool(_TRANSIENT_RE.search(text))


def conflict(text: str) -> bool:
    return bool(_CONFLICT_RE.search(text))


def bypass(text: str) -> bool:
    """True when the text runs or recommends skipping a check instead of passing it."""
    return bool(BYPASS_RE.search(text))


def scrub(text: str) -> str:
    """The text without its sentences that carry one-off details ('' when nothing else is left)."""
    kept = [s for s in sentences(text) if not one_off(s) and not conflict(s)]
    return " ".join(kept)

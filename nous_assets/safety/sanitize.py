"""What any memory text becomes before it reaches a session: sanitised (:func:`sanitize`) and redacted (:func:`clean`).

Memory text comes from transcripts, i.e. from whatever a user, a tool output or a web page once put
there, and it is injected into a new session's context. :func:`sanitize` therefore removes what
could act as instructions or fake conversation structure (002 §15, extended):

* control and invisible format characters (zero-width spaces/joiners, BOM, bidi overrides), which
  can hide or reorder text; they are removed *first* so "ig\u200bnore previous instructions" is caught;
* HTML comments (hidden text) and fake tool-call blocks (``<function_calls>``, ``<invoke>``,
  ``<tool_use>``, ``<tool_result>``, ``<function_results>`` … with their content);
* role and chat-template markers: ``<system>``, ``</assistant>``, ``<user>``, ``<system-reminder>``,
  ``<|im_start|>``, ``[INST]``, ``<<SYS>>``, and "System:"/"Human:"/"Assistant:" at the start of a line;
* the instruction phrases of 002 §15 ("ignore (all) previous instructions", "disregard previous",
  "you are now", "new instructions:", "IMPORTANT: you must", "override/forget previous",
  "act as if you", "pretend you are", "from now on, you") — replaced by ``[filtered]`` so a reader
  sees that something was taken out;
* an unbalanced code fence (an odd ``` or ~~~ would swallow the rest of the packet), and finally
  every run of whitespace becomes one space (a memory is one bullet line, so it cannot open a heading).

Every way out uses these: packets, MCP answers, pulled packets (``nous pull`` re-checks what a server sends).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from nous_assets.capture.redact import redact

FILTERED = "[filtered]"
MAX_PASSES = 16

_HTML_COMMENT = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_TOOL_NAMES = r"function_calls|function_results|invoke|tool_use|tool_call|tool_calls|tool_result|parameter"
_TOOL_BLOCK = re.compile(rf"<\s*(?:[\w-]+:)?({_TOOL_NAMES})\b[^>]*>.*?<\s*/\s*(?:[\w-]+:)?\1\s*>", re.I | re.S)
_TOOL_TAG = re.compile(rf"<\s*/?\s*(?:[\w-]+:)?(?:{_TOOL_NAMES})\b[^<>]*>", re.I)
_ROLE_TAG = re.compile(
    r"<\s*/?\s*(?:system|assistant|user|human|developer|tool|function|instructions?|"
    r"system[-_ ]?(?:prompt|message|instructions?|reminder)|im_start|im_end)\b[^<>]*>",
    re.I,
)
_TEMPLATE_TOKEN = re.compile(r"<\|[^|<>]{1,40}\|>|\[/?INST\]|<</?SYS>>", re.I)
_ROLE_PREFIX = re.compile(r"^[ \t]*(?:system|assistant|human)[ \t]*:", re.I | re.M)
_INSTRUCTION = re.compile(
    r"ignore\s+(?:all\s+)?(?:of\s+)?(?:the\s+|your\s+)?(?:previous|prior|above|earlier)"
    r"(?:\s+(?:instructions?|prompts?|messages?|context|rules))?"
    r"|disregard\s+(?:all\s+)?(?:the\s+|your\s+)?(?:previous|prior|above)(?:\s+(?:instructions?|prompts?|messages?))?"
    r"|you\s+are\s+now\b"
    r"|new\s+instructions?\s*:"
    r"|important\s*:\s*you\s+must"
    r"|override\s+(?:all\s+)?(?:the\s+)?previous(?:\s+instructions?)?"
    r"|forget\s+(?:all\s+)?(?:the\s+|your\s+)?previous(?:\s+instructions?)?"
    r"|act\s+as\s+(?:if|though)\s+you"
    r"|pretend\s+(?:that\s+)?you\s+are"
    r"|from\s+now\s+on\s*,?\s*you\b",
    re.I,
)
_FENCE = re.compile(r"```|~~~")


def _strip_invisible(text: str) -> str:
    out = []
    for ch in text:
        category = unicodedata.category(ch)
        if ch in "\t\n\r":
            out.append(ch)
        elif category in ("Cc", "Cf", "Cs", "Co", "Cn") or category in ("Zl", "Zp"):
            out.append(" " if category in ("Zl", "Zp") else "")
        else:
            out.append(ch)
    return "".join(out)


def _balance_fences(text: str) -> str:
    fences = list(_FENCE.finditer(text))
    if len(fences) % 2 == 0:
        return text
    last = fences[-1]
    return text[: last.start()] + " " + text[last.end() :]


def _pass(value: str) -> str:
    """One cleaning pass; every removal leaves a space, so pieces around it cannot join into a new marker."""
    value = _HTML_COMMENT.sub(" ", value)
    value = _TOOL_BLOCK.sub(f" {FILTERED} ", value)
    value = _TOOL_TAG.sub(" ", value)
    value = _ROLE_TAG.sub(" ", value)
    value = _TEMPLATE_TOKEN.sub(" ", value)
    value = _ROLE_PREFIX.sub(f"{FILTERED} ", value)
    value = _INSTRUCTION.sub(FILTERED, value)
    value = _balance_fences(value)
    return " ".join(value.split())


def sanitize(text: Any) -> str:
    """Injection-safe, single-line version of ``text`` (see the module docstring for what goes).

    Passes repeat until nothing changes (nested markers such as ``< <system>system>`` peel one layer
    per pass), which also makes ``sanitize`` idempotent. Pathological nesting beyond the pass limit
    gets its angle brackets neutralised instead.
    """
    value = _strip_invisible("" if text is None else str(text))
    for _ in range(MAX_PASSES):
        cleaned = _pass(value)
        if cleaned == value:
            return cleaned
        value = cleaned
    return value.replace("<", "‹").replace(">", "›")


def clean(text: Any) -> str:
    """Sanitised and redacted: what any memory text must become before it is injected."""
    return redact(sanitize(text))

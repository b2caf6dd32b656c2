"""Redact secrets and credentials from transcript text before anything is persisted.

Why: Claude Code transcripts routinely hold pasted ``.env`` files, ``curl`` commands with bearer tokens,
connection strings in tool output and keys the user typed by mistake. Nous keeps memories on disk and
injects them into later sessions, so a credential that slips through is copied into the store, its backups
and future prompts. Every string is therefore scrubbed at capture time, before it is written anywhere.

How it is tuned:

* Provider tokens with a fixed prefix and shape (``sk-ant-``, ``ghp_``, ``AKIA``...) favour recall: they are
  redacted wherever they appear, unless the value is an obvious placeholder (``xxxx``, ``EXAMPLE``...).
* Generic ``NAME=value`` assignments (shell, YAML, JSON, code, CLI flags) favour precision, because code and
  prose are full of ``password`` and ``token``: the value must be 8+ characters and look like a secret (a
  digit or a symbol, or random-looking base64), not a placeholder or a reference (``your-key-here``,
  ``${VAR}``, ``os.environ[...]``), not a word or identifier (``send_message``, ``hashedPassword``), and
  not an expression (``token == Literal``, ``get_token()``).
* Only the secret is replaced (``password=[REDACTED:password]``, ``postgres://user:[REDACTED:url_password]@host``)
  so a memory still says *what* was configured without saying the secret.
* ``<private>...</private>`` is the user's opt-out marker: the whole block goes, content and tags (an
  unclosed tag hides the rest of the string; a tag in backticks is a mention and is kept).
* Markers (``[REDACTED:<kind>]``) are never matched again, so :func:`redact` is idempotent.

Use :func:`redact_json` on parsed transcript records (it also blanks values under secret-named keys);
:func:`redact_text` works on any string, including a raw JSONL line, but patterns stop at backslashes so
JSON escapes (``\\n``, ``\\"``) are never swallowed.

This module is the engine (run the rules, splice markers, walk JSON, memoise short strings); the rules
themselves, with the checks that vet each candidate value, are the catalogue in
:mod:`nous_assets.capture.secret_rules`.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from nous_assets.capture.secret_rules import RULES, Rule, is_placeholder, secret_key_kind
from nous_assets.capture.secret_tokens import Span, find_secret_tokens

__all__ = ["MARKER_PREFIX", "REDACTOR_VERSION", "RedactionResult", "marker", "redact", "redact_json", "redact_text"]

# Bumped whenever the rules change what is found; `nous redact --rescan` records it with each change it makes.
REDACTOR_VERSION = "4"
MARKER_PREFIX = "[REDACTED:"
_MARKER_RE = re.compile(r"\[REDACTED:[a-z0-9_]+\]")
# A pass can expose one more match per glued repetition ("…dump.sqlmysql -p…" six times over took six passes);
# a pass that changes nothing ends the loop, so the bound only stops a pathological text.
MAX_PASSES = 32


def marker(kind: str) -> str:
    """The replacement text for one redaction of ``kind``."""
    return f"{MARKER_PREFIX}{kind}]"


@dataclass(frozen=True)
class RedactionResult:
    """Redacted text plus how many redactions of each kind were made (for audit logs and metrics)."""

    text: str
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return sum(self.counts.values())


_GATE_BELOW = 1024  # shorter texts are checked for triggers first, to skip most regex calls
_CACHE_BELOW = 256  # short strings repeat a lot in transcript records (cwd, ids, branch, model...)


def _apply(rule: Rule, text: str, subject: str, pattern: re.Pattern[str], counts: dict[str, int]) -> str:
    """Run one rule over ``subject`` (``text`` or its lower-case twin) and splice markers into ``text``."""
    pieces: list[str] = []
    last = 0
    for m in pattern.finditer(subject):
        alt = next(a for name, a in rule.alts if name is None or m.start(name) != -1)
        start = m.start() - alt.back
        if start < last or (alt.not_after and start > 0 and text[start - 1] in alt.not_after):
            continue
        group = next((g for g in alt.groups if m.start(g) != -1), None)
        if alt.groups and group is None:
            continue
        s, e = m.span(group) if group is not None else (start, m.end())
        secret = text[s:e]
        if MARKER_PREFIX in secret:
            # Judge only what is left besides earlier markers; a bare marker is never redacted again.
            secret = _MARKER_RE.sub("", secret)
            if not secret.strip():
                continue
        if alt.check is not None and not alt.check(secret, m):
            continue
        if _cuts_marker(text, s, e):
            continue
        kind = alt.kind_of(m) if alt.kind_of is not None else alt.kind
        counts[kind] = counts.get(kind, 0) + 1
        pieces.append(text[last:s])
        pieces.append(marker(kind))
        last = e
    if not pieces:
        return text
    pieces.append(text[last:])
    return "".join(pieces)


def _cuts_marker(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` begins or ends inside an earlier marker (``https://[REDACTED:x]@``)."""
    for mk in _MARKER_RE.finditer(text, max(0, start - 64), end + 64):
        if mk.start() < start < mk.end() or mk.start() < end < mk.end():
            return True
    return False


def _run_rules(text: str, counts: dict[str, int], gate: bool | None = None) -> str:
    """Apply every rule in order; ``gate`` (default: for short texts) skips rules whose triggers are absent."""
    low = text.lower()
    if gate is None:
        gate = len(text) < _GATE_BELOW
    for rule in RULES:
        if gate:
            subject = text if rule.pattern_ci is None else low
            for trigger in rule.triggers:
                if trigger in subject:
                    break
            else:
                continue
        if rule.pattern_ci is None:
            new = _apply(rule, text, text, rule.pattern, counts)
        elif len(low) == len(text):
            new = _apply(rule, text, low, rule.pattern, counts)
        else:  # lowering changed offsets (e.g. "İ"): match case-insensitively on the text itself
            new = _apply(rule, text, text, rule.pattern_ci, counts)
        if new is not text:
            text = new
            low = text.lower()
    return _splice(text, find_secret_tokens(text), counts)


def _splice(text: str, spans: list[Span], counts: dict[str, int]) -> str:
    """Replace each ``(start, end, kind)`` span (ordered, non-overlapping) with its marker."""
    if not spans:
        return text
    pieces: list[str] = []
    last = 0
    for start, end, kind in spans:
        if start < last or _cuts_marker(text, start, end):
            continue
        counts[kind] = counts.get(kind, 0) + 1
        pieces.append(text[last:start])
        pieces.append(marker(kind))
        last = end
    pieces.append(text[last:])
    return "".join(pieces)


@lru_cache(maxsize=16384)
def _run_rules_cached(text: str) -> tuple[str, tuple[tuple[str, int], ...]]:
    counts: dict[str, int] = {}
    return _run_rules(text, counts), tuple(counts.items())


def _redact_once(text: str, counts: dict[str, int]) -> str:
    if len(text) >= _CACHE_BELOW:
        return _run_rules(text, counts)
    out, found = _run_rules_cached(text)
    for kind, n in found:
        counts[kind] = counts.get(kind, 0) + n
    return out


def _redact_into(text: str, counts: dict[str, int]) -> str:
    """Redact ``text`` to a fixed point, adding to ``counts``; nothing under 8 characters can hold a secret.

    One pass can expose a new match (a redacted assignment glued to a token leaves the token followed by a
    marker, which a ``--token VALUE`` rule then sees), so passes repeat until nothing changes.
    """
    if len(text) < 8:
        return text
    for _ in range(MAX_PASSES):
        out = _redact_once(text, counts)
        if out == text:
            break
        text = out
    return text


def redact_text(text: str) -> RedactionResult:
    """Replace every secret in ``text`` with ``[REDACTED:<kind>]`` and count the redactions by kind."""
    counts: dict[str, int] = {}
    return RedactionResult(_redact_into(text, counts), counts)


def redact(text: str) -> str:
    """Just the redacted text of :func:`redact_text`."""
    return _redact_into(text, {})


def redact_json(obj: Any) -> tuple[Any, dict[str, int]]:
    """Redact a parsed JSON value (e.g. one transcript record): a new object and the total counts.

    Every string (keys included) goes through :func:`redact_text`; a non-empty, non-placeholder string
    under a secret-named key (``api_key``, ``password``, ``clientSecret``, ``Authorization``...) is replaced
    whole, since its name already says what it is. The input is not modified.
    """
    counts: dict[str, int] = {}
    return _walk(obj, counts), counts


def _walk(obj: Any, counts: dict[str, int]) -> Any:
    if isinstance(obj, str):
        return _redact_into(obj, counts)
    if isinstance(obj, dict):
        out: dict[Any, Any] = {}
        for key, value in obj.items():
            if isinstance(key, str):
                kind = secret_key_kind(key)
                key = _redact_into(key, counts)
                if isinstance(value, str):
                    if kind is not None and _blankable(value):
                        counts[kind] = counts.get(kind, 0) + 1
                        out[key] = marker(kind)
                    else:
                        out[key] = _redact_into(value, counts)
                    continue
            out[key] = _walk(value, counts)
        return out
    if isinstance(obj, list):
        return [_walk(item, counts) for item in obj]
    if isinstance(obj, tuple):
        return tuple(_walk(item, counts) for item in obj)
    return obj


def _blankable(value: str) -> bool:
    """A value under a secret-named key is blanked unless it is empty, a placeholder or already a marker."""
    stripped = value.strip()
    if not stripped or is_placeholder(stripped):
        return False
    return bool(_MARKER_RE.sub("", stripped).strip())

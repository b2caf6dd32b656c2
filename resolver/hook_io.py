"""Claude Code hook input and output (standard library only; nothing here raises).

Input is the event JSON on stdin (``session_id``, ``transcript_path``, ``cwd``, ``hook_event_name`` and the
event's own fields). Output for SessionStart and UserPromptSubmit is
``{"hookSpecificOutput": {"hookEventName": ..., "additionalContext": ...}}``.

Claude Code does not inject an ``additionalContext`` over 10,000 characters: it saves it to a file and
gives the model a ~2 KB preview, silently. Every context is therefore capped at :data:`MAX_CONTEXT_CHARS`,
cut at a line boundary with a visible marker.
"""

from __future__ import annotations

import time

MAX_CONTEXT_CHARS = 9_500
MAX_PAYLOAD_BYTES = 4 * 1024 * 1024
TRUNCATION_MARKER = "\n[nous: context truncated to fit the hook size limit]"


def now_iso(epoch: float | None = None) -> str:
    """Canonical UTC text, as the pipeline writes it (``2025-01-31T12:00:00.000000Z``)."""
    epoch = time.time() if epoch is None else epoch
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(epoch)) + f".{int(epoch % 1 * 1_000_000):06d}Z"


class _ScanContext:
    """What ``_json.make_scanner`` reads from a decoder: the settings of ``json.loads`` with no hooks."""

    strict = True
    object_hook = None
    object_pairs_hook = None
    parse_float = float
    parse_int = int

    @staticmethod
    def parse_constant(name: str) -> float:
        return {"-Infinity": float("-inf"), "Infinity": float("inf"), "NaN": float("nan")}[name]


_scanner = None
_WHITESPACE = " \t\n\r"


def loads(text: str):
    """``json.loads(text)`` through the C scanner ``json`` itself uses, without importing ``json``: its
    decoder and encoder compile regular expressions at import, a few milliseconds of the hook's start-up.
    Raises ``ValueError`` on anything that is not one JSON document. Falls back to ``json`` where ``_json``
    is missing (another interpreter)."""
    global _scanner
    if not isinstance(text, str):
        raise ValueError("not text")
    if _scanner is None:
        try:
            import _json

            _scanner = _json.make_scanner(_ScanContext())
        except (ImportError, AttributeError):
            import json

            _scanner = False
            return json.loads(text)
    elif _scanner is False:
        import json

        return json.loads(text)
    start = len(text) - len(text.lstrip(_WHITESPACE))
    try:
        value, end = _scanner(text, start)
    except StopIteration as exc:
        raise ValueError(f"not JSON at {exc.value}") from None
    except SystemError:  # a malformed value inside: _json reports it through json.decoder, which is not imported
        raise ValueError("not JSON") from None
    if text[end:].strip(_WHITESPACE):
        raise ValueError(f"extra data at {end}")
    return value


def json_string(text: str) -> str:
    """``json.dumps(text, ensure_ascii=False)`` for a string, without importing ``json``."""
    try:
        from _json import encode_basestring
    except ImportError:
        import json

        return json.dumps(text, ensure_ascii=False)
    return encode_basestring(text)


def read_payload(stream) -> dict:
    """The hook's JSON object from ``stream`` (drained to the end); ``{}`` for anything else."""
    try:
        if stream is None or stream.isatty():
            return {}
        source = getattr(stream, "buffer", stream)
        raw = source.read()  # read to EOF: Claude Code must never block on a full pipe
        if len(raw) > MAX_PAYLOAD_BYTES:
            return {}
        if isinstance(raw, bytes):
            raw = raw.decode("utf-8", errors="replace")
        if not raw or not raw.strip():
            return {}
        payload = loads(raw)
    except Exception:  # noqa: BLE001 - garbage in, nothing out
        return {}
    return payload if isinstance(payload, dict) else {}


def payload_str(payload: dict, key: str, default: str = "") -> str:
    """A string field of the payload, or ``default`` when missing or not a string."""
    value = payload.get(key) if isinstance(payload, dict) else None
    return value if isinstance(value, str) else default


def cap_context(text: str, limit: int = MAX_CONTEXT_CHARS) -> str:
    """``text`` if it fits in ``limit`` characters, else cut at the last line break that fits, plus a marker."""
    if not isinstance(text, str):
        return ""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(TRUNCATION_MARKER))
    head = text[:room]
    cut = head.rfind("\n")
    if cut >= room // 2:  # a line boundary that keeps most of the text; else cut mid-line
        head = head[:cut]
    return (head.rstrip() + TRUNCATION_MARKER)[:limit]


def _output(event: str, context: str) -> str:
    """``json.dumps({"hookSpecificOutput": {...}}, ensure_ascii=False)``, spelled out (see :func:`loads`)."""
    return (f'{{"hookSpecificOutput": {{"hookEventName": {json_string(event)}, '
            f'"additionalContext": {json_string(cap_context(context))}}}}}')  # fmt: skip


def session_start_output(context: str) -> str:
    """SessionStart hook JSON that adds ``context`` (capped) to the model's context."""
    return _output("SessionStart", context)


def user_prompt_submit_output(context: str) -> str:
    """UserPromptSubmit hook JSON that adds ``context`` (capped) next to the user's prompt."""
    return _output("UserPromptSubmit", context)

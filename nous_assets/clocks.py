"""Vector clocks per the spec's contract: ``{"<session_id>": <positive int>, ...}``.

Canonical form is a JSON object with lexicographically sorted keys, no duplicates, positive
integer values and at most 64 keys. Two learnings whose clocks are incomparable are concurrent
and therefore candidates for contradiction checks.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import StrEnum

MAX_KEYS = 64


class ClockError(ValueError):
    """A vector clock violates the canonical contract."""


class Order(StrEnum):
    BEFORE = "before"
    AFTER = "after"
    EQUAL = "equal"
    CONCURRENT = "concurrent"


def validate(clock: Mapping[str, int]) -> dict[str, int]:
    """Check keys and values; return a plain sorted dict. Raises :class:`ClockError`."""
    if not isinstance(clock, Mapping):
        raise ClockError(f"vector clock must be an object of session_id -> counter, got {type(clock).__name__}")
    if len(clock) > MAX_KEYS:
        raise ClockError(f"vector clock has {len(clock)} keys; at most {MAX_KEYS} are allowed")
    out: dict[str, int] = {}
    for key in sorted(clock):
        value = clock[key]
        if not isinstance(key, str) or not key:
            raise ClockError(f"vector clock key {key!r} must be a non-empty session id string")
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise ClockError(f"vector clock value for {key!r} must be a positive integer, got {value!r}")
        out[key] = value
    return out


def _reject_duplicates(pairs: list[tuple[str, object]]) -> dict[str, object]:
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        raise ClockError(f"vector clock has duplicate keys: {dupes}")
    return dict(pairs)


def parse(text: str | None) -> dict[str, int]:
    """Parse canonical clock JSON; NULL/missing is ``{}``. Non-canonical text is rejected."""
    if text is None or text == "":
        return {}
    try:
        raw = json.loads(text, object_pairs_hook=_reject_duplicates)
    except json.JSONDecodeError as exc:
        raise ClockError(f"vector clock is not valid JSON: {exc.msg}") from None
    clock = validate(raw)
    if list(raw) != sorted(raw):
        raise ClockError("vector clock keys are not in canonical (sorted) order")
    return clock


def dumps(clock: Mapping[str, int]) -> str:
    """Canonical serialisation: sorted keys, compact separators."""
    return json.dumps(validate(clock), sort_keys=True, separators=(",", ":"))


def merge(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """Component-wise max."""
    out = dict(a)
    for key, value in b.items():
        if value > out.get(key, 0):
            out[key] = value
    return dict(sorted(out.items()))


def increment(clock: Mapping[str, int], session_id: str) -> dict[str, int]:
    """A local extraction bumps only its own session's counter."""
    out = dict(clock)
    out[session_id] = out.get(session_id, 0) + 1
    return dict(sorted(out.items()))


def compare(a: Mapping[str, int], b: Mapping[str, int]) -> Order:
    """Causal order of ``a`` relative to ``b`` (missing keys count as 0)."""
    a_le_b = all(v <= b.get(k, 0) for k, v in a.items())
    b_le_a = all(v <= a.get(k, 0) for k, v in b.items())
    if a_le_b and b_le_a:
        return Order.EQUAL
    if a_le_b:
        return Order.BEFORE
    if b_le_a:
        return Order.AFTER
    return Order.CONCURRENT


def comparable(a: Mapping[str, int], b: Mapping[str, int]) -> bool:
    return compare(a, b) is not Order.CONCURRENT


def bound(clock: Mapping[str, int], current_session: str, recent_peers: Iterable[str]) -> dict[str, int]:
    """Keep the current session plus the 63 most recently observed peers (``recent_peers`` newest first)."""
    keep = [current_session] if current_session in clock else []
    for peer in recent_peers:
        if len(keep) >= MAX_KEYS:
            break
        if peer in clock and peer not in keep:
            keep.append(peer)
    return {k: clock[k] for k in sorted(keep)}

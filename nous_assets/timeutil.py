"""Timestamps as canonical UTC ISO-8601 text, so SQL string comparison orders them correctly."""

from __future__ import annotations

from datetime import UTC, datetime

ISO_FORMAT = "%Y-%m-%dT%H:%M:%S.%fZ"


def now_iso() -> str:
    return datetime.now(UTC).strftime(ISO_FORMAT)


def to_iso(value: datetime) -> str:
    if value.tzinfo is None:
        value = value.replace(tzinfo=UTC)
    return value.astimezone(UTC).strftime(ISO_FORMAT)


def parse_time(value: str | datetime) -> datetime:
    """Parse ISO-8601 text (date, naive = UTC, offsets, trailing Z) into an aware UTC datetime.

    Raises ValueError with the offending text when it is not a timestamp.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"not a timestamp: {value!r}")
    text = value.strip()
    if text.endswith(("Z", "z")):
        text = text[:-1] + "+00:00"
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise ValueError(f"not an ISO-8601 timestamp: {value!r}") from None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def normalize_time(value: str | datetime | None) -> str | None:
    """Canonical text for a timestamp; None stays None."""
    return None if value is None else to_iso(parse_time(value))

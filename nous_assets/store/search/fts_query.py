"""The words of a full-text query, as both backends' memory search reads them (FTS5 and PostgreSQL ``tsquery``)."""

from __future__ import annotations


def query_words(text: str) -> list[str]:
    """The words of a full-text query (letters and digits), lowercased: any of them may match."""
    return sorted({w.lower() for w in "".join(c if c.isalnum() else " " for c in text).split()})

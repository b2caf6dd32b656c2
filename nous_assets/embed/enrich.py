"""The text that gets embedded for a memory (spec CX3: embedding enrichment) and its cache key.

Structured metadata goes in front of the content so the vector carries the memory's context::

    [learning/preference · python] concepts: packaging, uv
    Always use uv for Python packaging.

Concepts are sorted (they are a set) so the same memory always yields the same text, and capped at
:data:`MAX_CONCEPTS` so a long concept list cannot push the content past MiniLM's 256-token window.
:func:`content_hash` of that text, the model and the dimensions is the cache key stored in
``vector_meta.content_hash``: it changes when content, type/kind/domain or concepts change.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from typing import Any

__all__ = ["MAX_CONCEPTS", "content_hash", "enrich", "header"]

MAX_CONCEPTS = 16


def _get(row: Mapping[str, Any] | Any, key: str) -> Any:
    """``row[key]`` for sqlite Rows and dicts, ``row.key`` for objects; None when absent."""
    try:
        return row[key]
    except (KeyError, IndexError, TypeError):
        return getattr(row, key, None)


def _field(row: Mapping[str, Any] | Any, key: str) -> str | None:
    value = _get(row, key)
    if value is None:
        return None
    return " ".join(str(value).split()) or None


def header(memory_row: Mapping[str, Any] | Any, concepts: Iterable[str] = ()) -> str:
    """``[type/kind · domain] concepts: a, b`` (parts that are missing are left out)."""
    label = _field(memory_row, "type") or "learning"
    kind = _field(memory_row, "kind")
    if kind:
        label += f"/{kind}"
    domain = _field(memory_row, "domain")
    if domain:
        label += f" · {domain}"
    head = f"[{label}]"
    words = sorted({" ".join(c.split()) for c in concepts if c and c.strip()})[:MAX_CONCEPTS]
    if words:
        head += " concepts: " + ", ".join(words)
    return head


def enrich(memory_row: Mapping[str, Any] | Any, concepts: Iterable[str] = ()) -> str:
    """Header line + content: the exact text handed to the embedding model.

    ``memory_row`` is a ``memories`` row (sqlite Row, dict or object with ``content``, ``type``,
    ``kind``, ``domain``); ``concepts`` the memory's concept phrases.
    """
    content = _get(memory_row, "content") or ""
    return f"{header(memory_row, concepts)}\n{str(content).strip()}"


def content_hash(text: str, model: str, dimensions: int) -> str:
    """sha256 over model, dimensions and text: equal hashes mean an existing vector can be reused."""
    digest = hashlib.sha256()
    digest.update(f"{model}\x1f{int(dimensions)}\x1f".encode())
    digest.update(text.encode("utf-8", "surrogatepass"))
    return digest.hexdigest()

"""Builders for valid learning events (used by store tests, property tests and the benchmark)."""

from __future__ import annotations

from typing import Any

from nous_assets.store.log.events import LearningEvent


def extracted(
    lid: str,
    content: str = "use uv for python packaging",
    *,
    key: str | None = None,
    concepts: list[str] | None = None,
    edges: list[dict[str, Any]] | None = None,
    session: str = "s1",
    project: str = "p1",
    **kw: Any,
) -> LearningEvent:
    payload = {
        "content": content,
        "extractor_version": "test-1",
        "concepts": ["python", "packaging"] if concepts is None else concepts,
        "edges": edges or [],
    }
    payload.update(kw.pop("payload_extra", {}))
    return LearningEvent(
        "LearningExtracted",
        lid,
        payload,
        session,
        project,
        kw.pop("source", "historical_backfill"),
        key or f"x:{lid}",
        **kw,
    )


def lifecycle(
    kind: str, lid: str, payload: dict[str, Any], *, key: str, session: str = "s1", project: str = "p1", **kw: Any
) -> LearningEvent:
    return LearningEvent(kind, lid, payload, session, project, kw.pop("source", "user_review"), key, **kw)

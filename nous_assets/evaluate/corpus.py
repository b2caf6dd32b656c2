"""Synthetic cortex.db corpora for latency benchmarks (real event store, projector and cache builder)."""

from __future__ import annotations

import random
from pathlib import Path

from nous_assets.ids import idempotency_key, learning_id_for
from nous_assets.store.db import Connection, open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

TOPICS = {
    "python": ["pytest", "uv", "ruff", "mypy", "pydantic", "fastapi", "asyncio", "sqlite"],
    "javascript": ["vite", "react", "eslint", "vitest", "node", "typescript", "pnpm", "webpack"],
    "rust": ["cargo", "clippy", "tokio", "serde", "borrow checker", "lifetimes", "rustfmt", "criterion"],
    "elixir": ["mix", "phoenix", "ecto", "liveview", "credo", "dialyzer", "oban", "exunit"],
    "ops": ["docker", "compose", "kubernetes", "terraform", "github actions", "nginx", "postgres", "redis"],
}
TEMPLATES = [
    ("preference", "learning", "Always run {a} before committing; the {b} config lives in the repo root."),
    ("correction", "learning", "Don't use {a} for {b} here — the user corrected this; use {c} instead."),
    ("error_fix", "learning", "`{a}` failed with a {b} error; fixed by pinning {c} and re-running."),
    ("command", "knowledge", "Test command that worked in this project: `{a} test` with {b} enabled."),
    ("decision", "learning", "Decision: move {a} to {b} so {c} stays fast."),
    ("fact", "knowledge", "The {a} service talks to {b} through {c} in this project."),
]


def project_cwd(i: int) -> str:
    return f"/bench/work/project-{i:03d}"


def build_corpus(path: Path, memories: int, *, projects: int = 100, seed: int = 1) -> Connection:
    """``memories`` learnings spread over ``projects`` projects (encoded like Claude Code's folders)."""
    from resolver.project import project_id_from_cwd

    rng = random.Random(seed)
    conn = open_db(path, create=True)
    store = SqliteEventStore(conn)
    events = []
    for i in range(memories):
        p = i % projects
        topic = list(TOPICS)[p % len(TOPICS)]
        words = rng.sample(TOPICS[topic], 3)
        kind, mtype, template = rng.choice(TEMPLATES)
        project_id = project_id_from_cwd(project_cwd(p))
        session = f"bench-session-{p}-{i // 50}"
        key = idempotency_key(project_id, session, i, "bench-1")
        payload = {
            "content": template.format(a=words[0], b=words[1], c=words[2]),
            "extractor_version": "bench-1",
            "concepts": [topic, *words],
            "edges": [],
            "type": mtype,
            "kind": kind,
            "domain": topic,
            "scope": "global" if rng.random() < 0.03 else "project",
            "temporal_confidence": "medium",
        }
        events.append(
            LearningEvent(
                "LearningExtracted",
                learning_id_for(key),
                payload,
                session,
                project_id,
                "historical_backfill",
                key,
                valid_from="2026-01-01",
            )
        )
        if len(events) == 5000:
            store.append_many(events)
            events = []
    store.append_many(events)
    project(conn)
    return conn

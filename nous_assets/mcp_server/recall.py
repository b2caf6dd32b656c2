"""``recall``: memories and transcript excerpts for a question, within a character budget.

The same retrieval as ``nous search`` (:func:`~nous_assets.retrieve.search.retrieve` with episodes and the
score breakdown), shaped for Claude to read: each result with its day, project, source in the transcript
and what its score is made of, best first, as many as the budget holds.
"""

from __future__ import annotations

from typing import Any

from nous_assets.mcp_server import inputs, render
from nous_assets.mcp_server.lines import TranscriptLines
from nous_assets.retrieve.excerpt_shape import FACTOR as ANNOUNCES
from nous_assets.retrieve.observations import member_ids
from nous_assets.retrieve.query import Query
from nous_assets.retrieve.scoring import DIMENSIONS
from nous_assets.retrieve.search import Result, retrieve
from nous_assets.retrieve.status_rank import shown_status
from nous_assets.settings import RECALL_BUDGET_RANGE, Settings
from nous_assets.store.db import Connection
from nous_assets.store.reads import project_timeline

RECALL_K = 20  # results retrieved; the budget decides how many are sent
MIN_BUDGET, MAX_BUDGET = RECALL_BUDGET_RANGE
MEMORY_CHARS = 600  # a memory is one sentence or two; longer ones are cut
EPISODE_CHARS = 900  # an excerpt: enough of the turn to recognise it


def score_breakdown(result: Result) -> dict[str, float]:
    """The weighted share of each dimension that contributed (zeros left out), the rank among all candidates
    and the contradiction factor when one applied."""
    b = result.breakdown
    out = {d: round(b[f"w_{d}"], 4) for d in DIMENSIONS if b.get(f"w_{d}", 0.0) > 0.0}
    if b.get("contradiction", 1.0) != 1.0:
        out["contradiction_factor"] = round(b["contradiction"], 3)
    if b.get(ANNOUNCES, 1.0) != 1.0:
        out["announcement_factor"] = round(b[ANNOUNCES], 3)  # a chunk that only announces what comes next
    if "rank" in b:
        out["rank"] = int(b["rank"])
    return out


def _item(
    conn: Connection, result: Result, guard: render.Guard, projects: dict[int, str], lines: TranscriptLines
) -> tuple[dict[str, Any], bool]:
    if result.is_episode:
        text, withheld = guard.text(result.content, EPISODE_CHARS)
        head = {"episode": result.id, "role": result.kind}  # a transcript chunk: what was said, by whom
        if status := shown_status(result):
            head["status"] = status  # a claim made here was later refuted or superseded
        source = render.chunk_source(conn, result.id, result.source_session, lines)
    else:
        text, withheld = guard.text(result.content, MEMORY_CHARS, memory_id=result.id)
        head = {"memory": result.id, "kind": result.kind, "status": result.status}  # how far the evidence backs it
        if result.scope == "global":
            head["scope"] = "global"  # found in any project: how this user works everywhere
        source = render.memory_source(result.provenance_json, result.source_session, lines)
        if result.valid_until:
            head["valid_until"] = render.day(result.valid_until)
        if members := member_ids(conn, result):
            head["members"] = members  # an observation: the memories it was formed from (`explain` shows how)
    item = {
        **head,
        "date": render.day(result.valid_from or result.created_at),
        "project": projects.get(result.id, result.project_id) if result.is_episode else result.project_id,
        "text": text,
        "score": round(result.score, 4),
        "score_breakdown": score_breakdown(result),
        "source": source,
    }
    return item, withheld


def recall(
    conn: Connection,
    settings: Settings,
    embedder: Any,
    *,
    query: str,
    project: str | None = None,
    as_at: str | None = None,
    budget: int | None = None,
) -> dict[str, Any]:
    """The answer to ``query``: ``results`` (memories and ``episode`` excerpts, best first) within ``budget``
    characters of compact JSON, and how many were ``left_out`` for the budget or ``withheld`` by the guard.

    ``project`` limits the search to one project (plus global memories); ``as_at`` asks what was valid at
    that time. Raises :class:`~nous_assets.mcp_server.inputs.InputError` for an argument to fix.
    """
    text = inputs.text(query, "query", max_chars=inputs.MAX_QUERY_CHARS)
    project_id = inputs.project(conn, project)
    when = inputs.instant(as_at, "as_at")
    limit = inputs.bounded(
        settings.thresholds.recall_budget_chars if budget is None else budget, "budget", MIN_BUDGET, MAX_BUDGET
    )
    found = retrieve(
        conn, Query.from_text(text, project_id=project_id, as_at=when), settings,
        embedder=embedder, k=RECALL_K, explain=True, include_episodes=True,
    )  # fmt: skip
    guard = render.Guard(conn)
    projects = project_timeline.session_projects(conn, [r.id for r in found if r.is_episode])
    lines = TranscriptLines.of(settings.project_glob)
    items, withheld = [], 0
    for result in found:
        item, held = _item(conn, result, guard, projects, lines)
        items.append(item)
        withheld += held
    answer: dict[str, Any] = {"note": render.NOTE, "query": text, "project": project_id, "as_at": when}
    answer = {k: v for k, v in answer.items() if v is not None}
    tail = {"left_out": 0, "withheld": withheld}
    kept, left_out = render.fit(items, limit, used=render.size({**answer, "results": [], **tail}) + 8)
    return {**answer, "results": kept, "left_out": left_out, "withheld": withheld}

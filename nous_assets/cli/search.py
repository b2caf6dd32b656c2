"""Finding and rating memories: ``nous search`` and ``nous feedback``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from nous_assets.cli.common import PROJECT_HELP, AddCommand, canonical, open_store, project_arg
from nous_assets.errors import NousError
from nous_assets.retrieve.status_rank import shown_status
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Policy

MAX_TEXT = 4000  # characters of one result's text shown
_JSON_FIELDS = ("memory_id", "content", "score", "type", "kind", "status", "project_id", "valid_from", "valid_until")


def _embedder(settings: Settings, args: argparse.Namespace) -> Any:
    """The configured embedder for one query, or None (``--fts-only``, or it cannot load: search goes on
    without vectors). The local float32 and bf16 vectors are looked up with the torch-free light encoder: a cold
    ``nous search`` would otherwise spend 8-12 s importing torch for a few milliseconds of work."""
    if args.fts_only:
        return None
    from nous_assets.embed.registry import get_query_embedder

    try:
        embedder = get_query_embedder(settings)
        if getattr(embedder, "precision", "float32") != "float32":  # int8 vectors: only torch computes them
            print(f"nous: loading the {embedder.model} model for the query (torch: a few seconds; "
                  "--fts-only skips vectors)", file=sys.stderr)  # fmt: skip
        return embedder
    except NousError as exc:
        print(f"nous: vectors unavailable ({exc}); searching text, concepts and graph only", file=sys.stderr)
        return None


def _episode_sources(conn, results: list) -> dict[tuple, str]:
    """``path@offset`` of each episodic result's transcript chunk (``?`` when the chunk is gone), by result key."""
    from nous_assets.store.ingest import transcript_chunks

    return {r.key: transcript_chunks.source_line(conn, r.id) or "?" for r in results if r.is_episode}


def _guarded(conn, results: list) -> dict[tuple, str]:
    """Each result's text as it may be shown: cleaned and redacted, or the withheld line when the packet guard holds
    it (Claude may run ``nous search`` too: its output is one more way out, gated like packets and MCP answers)."""
    from nous_assets.mcp_server.render import Guard

    guard = Guard(conn)
    return {r.key: guard.text(r.content, MAX_TEXT, memory_id=None if r.is_episode else r.memory_id)[0]
            for r in results}  # fmt: skip


def _print_json(results: list, sources: dict[tuple, str], texts: dict[tuple, str], members: dict[tuple, list]) -> None:
    print(
        json.dumps(
            [
                {
                    **{k: getattr(r, k) for k in _JSON_FIELDS},
                    "status": shown_status(r),
                    "content": texts[r.key],
                    "episodic": r.is_episode,
                    "breakdown": r.breakdown,
                    "source": sources.get(r.key),
                    **({"members": members[r.key]} if r.key in members else {}),
                }
                for r in results
            ],
            indent=2,
        )
    )


def _print_results(
    results: list, sources: dict[tuple, str], texts: dict[tuple, str], members: dict[tuple, list], *, explain: bool,
    now: Any, half_life: float,
) -> None:
    if not results:
        print("no matching memories")
    for r in results:
        when = (r.valid_from or r.created_at or "")[:10]
        if r.is_episode:
            later = f" · later {r.status}" if shown_status(r) else ""  # a claim in it was refuted or superseded
            print(f"[episode · {r.kind}{later} · {when}] score={r.score:.3f} project={r.project_id}  {sources[r.key]}")
        else:
            print(f"#{r.memory_id} [{r.type}/{r.kind or '-'} · {r.status} · {when}] score={r.score:.3f} "
                  f"project={r.project_id}")
        print(f"    {' '.join(texts[r.key].split())[:400]}")
        if members.get(r.key):
            print(f"    an observation of {len(members[r.key])} memories: "
                  + " ".join(f"#{i}" for i in members[r.key]) + " (MCP `explain` shows how it was formed)")
        if explain:
            from nous_assets.retrieve.explain import explain_lines

            print("\n".join(explain_lines(r, now=now, half_life_days=half_life)))


def cmd_search(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.retrieve.observations import is_observation, member_ids
    from nous_assets.retrieve.query import Query
    from nous_assets.retrieve.search import retrieve

    embedder = _embedder(settings, args)
    with open_store(settings) as conn:
        try:
            query = Query.from_text(
                args.query, project_id=canonical(conn, args.project), as_at=args.as_at,
                include_expired=args.include_expired,
            )  # fmt: skip
        except ValueError as exc:
            raise NousError(str(exc)) from None
        results = retrieve(
            conn,
            query,
            settings,
            embedder=embedder,
            k=args.k,
            explain=args.explain,
            include_episodes=not args.no_episodes,
        )
        sources = _episode_sources(conn, results)
        texts = _guarded(conn, results)
        members = {r.key: member_ids(conn, r) for r in results if is_observation(r)}
    if args.json:
        _print_json(results, sources, texts, members)
        return 0
    half_life = settings.thresholds.recency_half_life_days
    _print_results(results, sources, texts, members, explain=args.explain, now=query.now, half_life=half_life)
    return 0


def cmd_feedback(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.reinforce.outcomes import feedback_event
    from nous_assets.store.sqlite.projection import project, reinforcement_score

    with open_store(settings) as conn:
        try:
            event = feedback_event(
                conn, args.memory_id, args.signal, session_id=args.session, thresholds=settings.thresholds
            )
        except LookupError as exc:
            raise NousError(str(exc)) from None
        project(conn, policy=Policy.of(settings.thresholds))
        score = reinforcement_score(conn, args.memory_id)
    what = f"{event.event_type} (event #{event.event_id})" if event else "logged (no score change)"
    print(f"memory #{args.memory_id}: {args.signal} -> {what}; reinforcement now {score or 0.0:.2f}")
    if event is None:
        return 0
    from nous_assets.cli.rebuild import rebuild_now  # the score moved: packets rank with it at once

    return rebuild_now(settings)


def register(add: AddCommand) -> None:
    """The ``search`` and ``feedback`` subparsers."""
    p = add(
        "search",
        cmd_search,
        "Search memories (and transcript chunks as episodic evidence) with the same "
        "seven-dimension scorer the injection uses. Only results with evidence for the query (a text "
        "match, a shared concept, graph proximity or a close enough vector) are listed, best score first.",
    )
    p.add_argument("query", help="free text")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="only this project's memories (plus global ones); " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--as-at", metavar="T", help="what was valid at T (valid time)")
    p.add_argument("--include-expired", action="store_true", help="keep superseded/expired memories")
    p.add_argument(
        "--explain",
        action="store_true",
        help="show each dimension's value and weighted share (query evidence vs priors), the result's rank "
        "among all scored candidates, and the dates recency is computed from (when learned, not ingested)",
    )
    p.add_argument("-k", type=int, default=10, help="results to show (default 10)")
    p.add_argument("--no-episodes", action="store_true", help="memories only, no transcript chunks")
    p.add_argument("--fts-only", action="store_true", help="skip loading the embedding model (faster start)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p = add(
        "feedback",
        cmd_feedback,
        "Tell Nous whether an injected memory helped: useful (+0.1), corrected (-0.2) or ignored (no change).",
    )
    p.add_argument("memory_id", type=int, help="the #id shown in injected context, `nous memories` or `nous search`")
    p.add_argument("signal", choices=["useful", "corrected", "ignored"])
    p.add_argument("--session", help="session the feedback is about (makes the vote idempotent per session)")

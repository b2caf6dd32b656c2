"""``nous review``: memories held out of injection by the safety guard, listed, approved or rejected."""

from __future__ import annotations

import argparse
import json
import sys

from nous_assets.cli.common import PROJECT_HELP, AddCommand, canonical, open_store, project_arg
from nous_assets.errors import NousError
from nous_assets.settings import Settings
from nous_assets.store.memory_state import Policy


def review_line(text: str, limit: int = 0) -> str:
    """Terminal-safe one line: control characters (escape sequences) and credentials out, whitespace collapsed."""
    from nous_assets.capture.redact import redact
    from nous_assets.safety.guard import normalize

    line = " ".join(redact(normalize(text)).split())
    return line if not limit or len(line) <= limit else line[: limit - 1] + "…"


def _review_list(conn, args: argparse.Namespace) -> int:
    from nous_assets.safety.review import refresh_holds
    from nous_assets.store import holds

    refresh_holds(conn)
    statuses = (holds.HELD, holds.APPROVED) if args.all else (holds.HELD,)
    items = holds.listing(conn, statuses=statuses, project_id=canonical(conn, args.project))
    if args.json:
        print(json.dumps([
            {"memory_id": i.hold.memory_id, "status": i.hold.status, "reason": i.hold.reason,
             "findings": i.hold.findings, "project_id": i.hold.project_id, "scope": i.hold.scope,
             "kind": i.kind, "source_session": i.source_session, "learned_at": i.learned_at,
             "content": review_line(i.content)}
            for i in items
        ], indent=2))  # fmt: skip
        return 0
    if not items:
        print("nothing is held for review" + (f" in project {args.project}" if args.project else ""))
        return 0
    for i in items:
        h = i.hold
        print(f"#{h.memory_id} {h.status} · {i.kind or '-'} · project {h.project_id} · session "
              f"{review_line(i.source_session, 40)} · learned {(i.learned_at or '?')[:10]}")  # fmt: skip
        print(f"    reason:  {review_line(h.reason)}")
        print(f"    content: {review_line(i.content)}")
    held = sum(1 for i in items if i.hold.status == holds.HELD)
    print(f"{held} held memor{'y' if held == 1 else 'ies'}: `nous review approve ID` lets one be injected "
          "(as a recalled note), `nous review reject ID` archives it", file=sys.stderr)  # fmt: skip
    return 0


def cmd_review(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.safety.review import ReviewError, approve, reject

    if args.action != "list" and args.memory_id is None:
        raise NousError(f"`nous review {args.action}` needs the memory ID (see `nous review`)")
    if args.action == "list" and args.memory_id is not None:
        raise NousError("`nous review` lists held memories; use `nous review approve ID` or `reject ID`")
    if args.reason and args.action != "reject":
        raise NousError("--reason only goes with `nous review reject ID`")
    with open_store(settings) as conn:
        if args.action == "list":
            return _review_list(conn, args)
        try:
            if args.action == "approve":
                outcome = approve(conn, args.memory_id, policy=Policy.of(settings.thresholds))
            else:
                outcome = reject(conn, args.memory_id, args.reason, policy=Policy.of(settings.thresholds))
        except ReviewError as exc:
            raise NousError(str(exc)) from None
    if args.json:
        print(json.dumps({"memory_id": outcome.memory_id, "action": outcome.action, "created": outcome.created,
                          "event_id": outcome.event_id, "reason": outcome.reason}))  # fmt: skip
        return 0
    again = "" if outcome.created else " (already recorded; nothing changed)"
    if outcome.action == "approved":
        print(f"memory #{outcome.memory_id} approved{again}: from the next packet build it may be injected, "
              "still framed as a recalled note; a change to its text puts it back on hold")  # fmt: skip
    else:
        print(f"memory #{outcome.memory_id} rejected{again}: archived ({review_line(outcome.reason, 200)})")
    return 0



def register(add: AddCommand) -> None:
    """The ``review`` subparser."""
    p = add(
        "review",
        cmd_review,
        "Memories held out of injection because they would have Claude run downloaded code, force-push main, "
        "skip permissions or the sandbox, disable checks, send data off the machine, or because they carry a "
        "secret. Lists them with reason, source session, date and content; approve one to let it be injected "
        "(as a recalled note, never as an instruction) or reject it to archive it (events with source user_review).",
    )
    p.add_argument("action", nargs="?", choices=["list", "approve", "reject"], default="list",
                   help="list (default), approve ID or reject ID")  # fmt: skip
    p.add_argument("memory_id", nargs="?", type=int, metavar="ID", help="the memory's #id (from the list)")
    p.add_argument("--reason", help="reject: why (kept in the LearningArchived event)")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="list: only this project's held memories; " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--all", action="store_true", help="list: approved memories too")
    p.add_argument("--json", action="store_true", help="print JSON")

"""``nous review``: what wants a human look, with its evidence, and the answers as events.

Held memories (the packet guard), contradictions, re-learning flags, injection failures and active
interventions are listed; answers are ``user_review`` events (approve, validate, supersede, reject as a
tombstone) or an audited dismissal of an intervention; ``claude-md`` proposes a ``CLAUDE.md`` patch for what
a project keeps re-learning, written only with ``--apply``; ``map`` prints each project's topics
(:mod:`nous_assets.consolidate.topics`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nous_assets.cli.common import PROJECT_HELP, AddCommand, canonical, open_store, project_arg
from nous_assets.errors import NousError
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Policy


def review_line(text: str, limit: int = 0) -> str:
    """Terminal-safe one line: control characters (escape sequences) and credentials out, whitespace collapsed."""
    from nous_assets.capture.redact import redact
    from nous_assets.safety.guard import normalize

    line = " ".join(redact(normalize(text)).split())
    return line if not limit or len(line) <= limit else line[: limit - 1] + "…"


def _review_list(conn, args: argparse.Namespace, settings: Settings) -> int:
    from nous_assets.safety.review import refresh_holds
    from nous_assets.store.reads import holds

    sections = _sections(args)
    if "holds" not in sections:
        return _lifecycle_list(conn, args, settings, sections)
    refresh_holds(conn)
    statuses = (holds.HELD, holds.APPROVED) if args.all else (holds.HELD,)
    items = holds.listing(conn, statuses=statuses, project_id=canonical(conn, args.project))
    if args.json:
        print(json.dumps([
            {"memory_id": i.hold.memory_id, "status": i.hold.status, "reason": i.hold.reason,
             "findings": i.hold.findings, "project_id": i.hold.project_id, "scope": i.hold.scope,
             "kind": i.kind, "claim_status": i.claim, "source_session": i.source_session,
             "learned_at": i.learned_at, "content": review_line(i.content)}
            for i in items
        ], indent=2))  # fmt: skip
        return 0
    if not items:
        print("nothing is held for review" + (f" in project {args.project}" if args.project else ""))
        return _lifecycle_list(conn, args, settings, sections)
    for i in items:
        h = i.hold
        print(f"#{h.memory_id} {h.status} · {i.kind or '-'} ({i.claim}) · project {h.project_id} · session "
              f"{review_line(i.source_session, 40)} · learned {(i.learned_at or '?')[:10]}")  # fmt: skip
        print(f"    reason:  {review_line(h.reason)}")
        print(f"    content: {review_line(i.content)}")
    held = sum(1 for i in items if i.hold.status == holds.HELD)
    print(f"{held} held memor{'y' if held == 1 else 'ies'}: `nous review approve ID` lets one be injected "
          "(as a recalled note), `nous review reject ID` archives it", file=sys.stderr)  # fmt: skip
    return _lifecycle_list(conn, args, settings, sections)


SECTION_TITLES = {
    "contradictions": "Contradictions",
    "relearn": "Re-learning flags",
    "injection-failures": "Injection failures",
    "interventions": "Active interventions",
    "stale": "Stale in the checkout (not injected)",
    "remembered": "Recorded by Claude at your request (MCP remember)",
    "auto-memory": "Taken in from Claude Code's auto-memory (MEMORY.md and topic files)",
}
ANSWERS = {
    "contradictions": "`nous review supersede OLD --by NEW` keeps the later fact, `validate ID` confirms one, "
    "`reject ID` archives one",
    "relearn": "`nous review validate ID` confirms the memory as it stands, `reject ID` archives it",
    "injection-failures": "`nous review validate ID` confirms it, `reject ID` archives it",
    "interventions": "`nous review dismiss ID` ends one (its key then cools down)",
    "stale": "`nous review reject ID` archives it; it is injected again once its citation resolves",
    "remembered": "`nous review reject ID` archives one; a held one needs `nous review approve ID` to be injected",
    "auto-memory": "`nous review reject ID` archives one (it stays out even while the file still says it); edit or "
                   "remove the line in the file and the next run supersedes it",
}


def _sections(args: argparse.Namespace) -> tuple[str, ...]:
    from nous_assets.safety.review_items import SECTIONS

    if args.section == "all":
        # --json without --section keeps its older meaning: the held memories
        return ("holds",) if args.json and not args.section_given else ("holds", *SECTIONS)
    return (args.section,)


def _lifecycle_list(conn, args: argparse.Namespace, settings: Settings, sections: tuple[str, ...]) -> int:
    from nous_assets.safety.review_items import review_items
    from nous_assets.timeutil import now_iso

    wanted = tuple(s for s in sections if s != "holds")
    if not wanted:
        return 0
    found = review_items(conn, settings.thresholds, now_iso(), sections=wanted,
                         project_id=canonical(conn, args.project))  # fmt: skip
    if args.json:
        data = {name: [item.data for item in items] for name, items in found.items()}
        print(json.dumps(data[wanted[0]] if len(wanted) == 1 else data, indent=2, default=str))
        return 0
    for name, items in found.items():
        print(f"\n== {SECTION_TITLES[name]}: {len(items) or 'none'}")
        for item in items:
            print(review_line(item.title))
            for line in item.evidence:
                print(f"    {review_line(line, 400)}")
        if items:
            print(f"    answers: {ANSWERS[name]}")
    return 0


def _answer(conn, settings: Settings, args: argparse.Namespace):
    """Apply one answer; returns the outcome (a ReviewOutcome)."""
    from nous_assets.safety.review import approve, reject, supersede, validate

    policy = Policy.of(settings.thresholds)
    memory_id = _memory_id(args)
    if args.action == "approve":
        return approve(conn, memory_id, policy=policy)
    if args.action == "validate":
        return validate(conn, memory_id, policy=policy)
    if args.action == "supersede":
        if args.by is None:
            raise NousError("`nous review supersede ID --by NEWER_ID` needs --by: the memory that replaces it")
        return supersede(conn, memory_id, args.by, policy=policy)
    return reject(conn, memory_id, args.reason, policy=policy)


def _memory_id(args: argparse.Namespace) -> int:
    try:
        return int(str(args.target).lstrip("#"))
    except ValueError:
        raise NousError(f"`nous review {args.action}` takes a memory #id (a number), got {args.target!r}") from None


def _dismiss(conn, args: argparse.Namespace) -> int:
    from nous_assets.observe.reducer import UnknownIntervention, dismiss
    from nous_assets.store.sqlite import interventions
    from nous_assets.timeutil import now_iso

    now = now_iso()
    wanted = str(args.target)
    ids = [a.intervention_id for a in interventions.current(conn, now) if a.intervention_id.startswith(wanted)]
    if len(ids) != 1:
        raise NousError(f"no active intervention {wanted}" if not ids else f"{wanted} names {len(ids)} interventions; "
                        "give more of the id")  # fmt: skip
    try:
        dismiss(conn, ids[0], now, reason=args.reason)
    except UnknownIntervention as exc:
        raise NousError(str(exc)) from None
    if args.json:
        print(json.dumps({"intervention_id": ids[0], "action": "dismissed"}))
    else:
        print(f"intervention {ids[0][:12]} dismissed: left out of the rebuilt packets; its key cools down")
    return 0


def _claude_md(conn, settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.safety import claude_md
    from nous_assets.store.reads.observations import project_checkout

    project_id = canonical(conn, args.project)
    memory = args.md_target == "memory"
    name = "MEMORY.md" if memory else "CLAUDE.md"
    if project_id is None:
        raise NousError(f"`nous review claude-md` needs --project PROJECT (the project whose {name} to extend)")
    if args.path:
        path = Path(args.path).expanduser()
    else:
        checkout = project_checkout(conn, project_id)
        if checkout is None:
            raise NousError(f"the checkout of project {project_id} is not known; give --path PATH/TO/{name}")
        path = _memory_index(settings, Path(checkout)) if memory else Path(checkout) / "CLAUDE.md"
    if path.is_dir():
        path = path / name
    try:
        current = claude_md.read_existing(path)
    except (OSError, UnicodeDecodeError) as exc:
        raise NousError(f"cannot read {path}: {exc}") from None
    existing = current.text
    found = claude_md.suggestions(conn, project_id, existing, min_sessions=settings.thresholds.claude_md_min_sessions)
    if memory:  # only what Claude Code will load: MEMORY.md past its cap is never read
        found, left = claude_md.within_memory_cap(existing, found)
        if left:
            print(f"{left} more suggestion(s) would take MEMORY.md past what Claude Code loads (200 lines or "
                  "25,000 bytes); not proposed", file=sys.stderr)  # fmt: skip
    new = claude_md.patched(existing, [s.bullet for s in found])
    if not found:
        print(f"nothing to suggest for {path}: no memory of project {project_id} recurs in "
              f"{settings.thresholds.claude_md_min_sessions}+ sessions that the file does not already say")  # fmt: skip
        return 0
    print(claude_md.unified_diff(path, existing, new), end="")
    if not args.apply:
        print(f"{len(found)} suggested line(s) for {path}; nothing written (add --apply to write them)",
              file=sys.stderr)  # fmt: skip
        return 0
    if memory and not args.path:
        current.target.parent.mkdir(parents=True, exist_ok=True)  # Claude Code's own folder, as it would create it
    if not current.target.parent.is_dir():
        raise NousError(f"{current.target.parent} does not exist; give --path PATH/TO/{name}")
    try:
        backup = claude_md.write_preserving(current, new)
    except claude_md.ReadOnlyError as exc:
        raise NousError(str(exc)) from None
    except OSError as exc:
        raise NousError(f"cannot write {current.target}: {exc.strerror or exc}") from None
    kept = f" (the old text is in {backup})" if backup else ""
    print(f"{len(found)} line(s) added to {current.target}{kept}", file=sys.stderr)
    return 0


def _memory_index(settings: Settings, checkout) -> Path:
    """The project's auto-memory ``MEMORY.md`` as Claude Code resolves it (its folder, ``autoMemoryDirectory``)."""
    import os

    from nous_assets.capture.native_memory import auto_memory

    status = auto_memory(checkout, config_dir=settings.claude_config_dir, env=os.environ)
    if not status.enabled or status.index is None:
        raise NousError(f"Claude Code's auto-memory is {status.why}: it would not load MEMORY.md; "
                        "use the default target (CLAUDE.md) or --path")  # fmt: skip
    return status.index


MEMORY_ACTIONS = ("approve", "reject", "validate", "supersede")


def cmd_review(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.safety.review import ReviewError

    args.section_given = args.section is not None
    args.section = args.section or "all"
    needs_target = args.action in (*MEMORY_ACTIONS, "dismiss")
    if needs_target and args.target is None:
        what = "intervention ID" if args.action == "dismiss" else "memory ID"
        raise NousError(f"`nous review {args.action}` needs the {what} (see `nous review`)")
    if not needs_target and args.target is not None:
        raise NousError("`nous review` lists; use `nous review approve|validate|supersede|reject ID` or `dismiss ID`")
    if args.reason and args.action not in ("reject", "dismiss"):
        raise NousError("--reason only goes with `nous review reject ID` or `dismiss ID`")
    if args.by is not None and args.action != "supersede":
        raise NousError("--by only goes with `nous review supersede ID --by NEWER_ID`")
    if (args.apply or args.path or args.md_target) and args.action != "claude-md":
        raise NousError("--apply, --path and --target only go with `nous review claude-md`")
    with open_store(settings) as conn:
        if args.action == "list":
            return _review_list(conn, args, settings)
        if args.action == "dismiss":
            status = _dismiss(conn, args)
            return status or _rebuilt(settings, True)  # the packets carry active interventions as notes
        if args.action == "claude-md":
            return _claude_md(conn, settings, args)
        if args.action == "map":
            return _map(conn, args)
        try:
            outcome = _answer(conn, settings, args)
        except ReviewError as exc:
            raise NousError(str(exc)) from None
    if args.json:
        print(json.dumps({"memory_id": outcome.memory_id, "action": outcome.action, "created": outcome.created,
                          "event_id": outcome.event_id, "reason": outcome.reason}))  # fmt: skip
        return _rebuilt(settings, outcome.created)
    again = "" if outcome.created else " (already recorded; nothing changed)"
    if outcome.action == "approved":
        print(f"memory #{outcome.memory_id} approved{again}: it may be injected from the rebuilt packets on, "
              "still framed as a recalled note; a change to its text puts it back on hold")  # fmt: skip
    elif outcome.action == "validated":
        print(f"memory #{outcome.memory_id} validated{again} (LearningValidated, source user_review)")
    elif outcome.action == "superseded":
        print(f"memory #{outcome.memory_id} superseded{again}: {review_line(outcome.reason, 200)}; it stays in the "
              "history, closed, and the newer memory holds from then on")  # fmt: skip
    else:
        print(f"memory #{outcome.memory_id} rejected{again}: archived ({review_line(outcome.reason, 200)})")
    return _rebuilt(settings, outcome.created)


def _map(conn, args: argparse.Namespace) -> int:
    """The project map: each project's topics (communities of its memories) with their observations and the
    best-evidenced memories, largest topic first."""
    from nous_assets.consolidate.topics import project_map
    from nous_assets.store.reads.project_timeline import known_projects

    projects = [canonical(conn, args.project)] if args.project else known_projects(conn)
    found = {p: project_map(conn, p) for p in projects}
    if args.json:
        print(json.dumps({p: [t.as_dict() for t in topics] for p, topics in found.items()}, indent=2))
        return 0
    for project_id, topics in found.items():
        print(f"\n== {project_id}: {len(topics) or 'no'} topics")
        for topic in topics:
            print(f"  {review_line(topic.label, 100)} ({len(topic.memory_ids)} memories, "
                  f"{len(topic.observation_ids)} observations)")  # fmt: skip
            for memory_id in topic.observation_ids:
                print(f"    observation #{memory_id}: {review_line(topic.texts.get(memory_id, ''), 160)}")
            for memory_id in topic.memory_ids[:3]:
                print(f"    #{memory_id}: {review_line(topic.texts.get(memory_id, ''), 160)}")
    if not any(found.values()):
        print("    (topics form once a project has three or more related memories; `nous run` consolidates them)")
    return 0


def _rebuilt(settings: Settings, changed: bool) -> int:
    """A new answer takes effect at once: the packets are rebuilt now (:func:`nous_assets.cli.rebuild.rebuild_now`),
    not at the next transcript activity."""
    if not changed:
        return 0
    from nous_assets.cli.rebuild import rebuild_now

    return rebuild_now(settings)


def register(add: AddCommand) -> None:
    """The ``review`` subparser."""
    from nous_assets.safety.review_items import SECTIONS

    p = add(
        "review",
        cmd_review,
        "What wants a human look, each with its evidence (sessions, dates, provenance): memories held out of "
        "injection because they would have Claude run downloaded code, force-push main, skip permissions or the "
        "sandbox, disable checks, send data off the machine, or carry a secret; contradictions between current "
        "memories (NLI results); re-learning flags (rewrite, injection failure, near-miss); memories learned in "
        "several sessions but never injected; active interventions. Answers are events with source user_review: "
        "approve a held memory (injected as a recalled note, never as an instruction), validate one as it stands, "
        "supersede one by a newer one, reject one (archived, a tombstone); dismiss ends an intervention. "
        "claude-md prints a CLAUDE.md patch for what a project keeps re-learning, written only with --apply; map "
        "prints each project's topics (communities of related memories) with their observations.",
    )
    p.add_argument("action", nargs="?", default="list",
                   choices=["list", "approve", "reject", "validate", "supersede", "dismiss", "claude-md", "map"],
                   help="list (default); approve/validate/supersede/reject ID (a memory); dismiss ID (an "
                        "intervention); claude-md (a suggested CLAUDE.md patch); map (each project's topics)",
                   )  # fmt: skip
    p.add_argument("target", nargs="?", metavar="ID",
                   help="the memory's #id, or an intervention's id (a prefix will do)")  # fmt: skip
    p.add_argument("--by", type=int, metavar="NEWER_ID", help="supersede: the memory that replaces ID")
    p.add_argument("--reason", help="reject/dismiss: why (kept in the event or the audit trail)")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="list, map: only this project's; claude-md: the project; " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--all", action="store_true", help="list: approved memories too")
    p.add_argument("--section", choices=["all", "holds", *SECTIONS],
                   help="list: one section only (default all; with --json and no --section: the held memories)")
    p.add_argument("--path", metavar="FILE", help="claude-md: the file to patch (default: the project's checkout's "
                   "CLAUDE.md, or with --target memory its auto-memory MEMORY.md)")  # fmt: skip
    p.add_argument("--target", dest="md_target", choices=["claude-md", "memory"],
                   help="claude-md: which of Claude Code's memory files to extend: CLAUDE.md (default) or the "
                        "project's auto-memory MEMORY.md (only as much as Claude Code loads: 200 lines, 25,000 "
                        "bytes)")  # fmt: skip
    p.add_argument("--apply", action="store_true", help="claude-md: write the suggested lines into the file")
    p.add_argument("--json", action="store_true", help="print JSON")

"""``nous packet``, ``nous injected`` and ``nous forget``: see what Claude sees, and take a memory away.

``packet`` prints what the SessionStart hook would inject for a directory now (the resolver's own code, in this
process, logging nothing); ``--explain`` adds each line's status, evidence and rank, ``--why-not ID`` the rule
that left a memory out. ``injected`` reads the access log: what the hooks injected into a past session.
``forget`` writes tombstones after a confirmation and rebuilds the packets at once
(:func:`nous_assets.cli.rebuild.rebuild_now`, which ``nous review`` and ``nous feedback`` use too).
"""

from __future__ import annotations

import argparse
import os
import sys

from nous_assets.cli.common import EXIT_CONFIG, EXIT_ERROR, PROJECT_HELP, AddCommand, canonical, open_store, project_arg
from nous_assets.errors import NousError
from nous_assets.settings import Settings

SOURCES = ("startup", "resume", "clear", "compact", "fork")


# ---------------------------------------------------------------- nous packet


def _directory(value: str | None) -> str:
    """DIR as the hook would get it (absolute); one that is not a directory here (a deleted worktree, another
    machine's path) still names a project, as it does for the hook: said on stderr, not refused."""
    path = os.path.abspath(os.path.expanduser(value or "."))
    if os.path.exists(path) and not os.path.isdir(path):
        raise NousError(f"{value} is a file, not a directory")
    if not os.path.exists(path):
        print(f"packet: {path} does not exist here; resolving it as the hook would", file=sys.stderr)
    return path


def cmd_packet(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.retrieve.preview import hook_context

    cwd = _directory(args.dir)
    if not settings.db_path.exists():
        raise NousError(f"{settings.db_path} does not exist yet: nothing would be injected (run `nous run` first)")
    view = hook_context(settings.db_path, cwd, args.source, args.session)
    if args.why_not is not None:
        return _why_not(settings, view, args.why_not)
    if not view.text:
        print(f"nothing would be injected for {cwd} (project {view.project_id or '?'}: no packet yet)",
              file=sys.stderr)  # fmt: skip
        return 0
    if not args.explain:
        sys.stdout.write(view.text + "\n")
        return 0
    return _explain(settings, view)


def _plan(settings: Settings, conn, view):
    from nous_assets.embed.registry import get_query_embedder
    from nous_assets.retrieve.preview import plan_for

    print("packet: re-running the build's ranking for this packet…", file=sys.stderr,
          flush=True)  # fmt: skip
    return plan_for(conn, settings, view, embedder=get_query_embedder(settings))


def _explain(settings: Settings, view) -> int:
    from nous_assets.retrieve.explain import explain_lines
    from nous_assets.retrieve.preview import memory_lines, standing
    from nous_assets.store.search import memory_search
    from nous_assets.timeutil import now_iso

    with open_store(settings) as conn:
        plan = _plan(settings, conn, view)
        rows = memory_search.rows_by_id(conn, [i for i in view.memory_ids])
    found = {r.memory_id: r for r in plan.found}
    now = now_iso()
    for line, memory_id in memory_lines(view.text, view.memory_ids):
        print(line)
        if memory_id is None:
            continue
        result = found.get(memory_id) or rows.get(memory_id)
        if result is None:
            print(f"    #{memory_id}: no longer a current memory (the packet was built before it went)")
            continue
        print(f"    #{memory_id} {result.kind or '-'} · {standing(result, plan.guarded.bar)}")
        if memory_id in found:
            half_life = settings.thresholds.recency_half_life_days
            for extra in explain_lines(found[memory_id], now=now, half_life_days=half_life):
                print("    " + extra.strip())
        else:
            print("    not ranked by a build now (the packet is older than the memory's latest change)")
    return 0


def _why_not(settings: Settings, view, target: str) -> int:
    from nous_assets.retrieve.preview import why_not

    try:
        memory_id = int(str(target).lstrip("#"))
    except ValueError:
        raise NousError(f"--why-not takes a memory #id (a number), got {target!r}") from None
    with open_store(settings) as conn:
        print(why_not(conn, view, memory_id, lambda: _plan(settings, conn, view)))
    return 0


# ---------------------------------------------------------------- nous injected


def cmd_injected(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.cli.review import review_line
    from nous_assets.retrieve.packet import bullet
    from nous_assets.safety.forget import archived_reason
    from nous_assets.store.reads import access_log
    from nous_assets.store.search import memory_search

    if args.session and args.last:
        raise NousError("give --session ID or --last, not both")
    with open_store(settings) as conn:
        if args.session:
            found = access_log.sessions_like(conn, args.session)
            if not found and _spooled(settings, args.session):
                found = [args.session]
            if len(found) != 1:
                raise NousError(f"no injection recorded for session {args.session}" if not found else
                                f"{args.session} names {len(found)}+ sessions; give more of the id")  # fmt: skip
            session = found[0]
        else:
            session = access_log.last_injected_session(conn)
            if session is None:
                print("no injection recorded yet (the SessionStart hook logs each one in access_log)")
                return 0
        injections = access_log.injections(conn, session) + _spooled(settings, session)
        rows = memory_search.rows_by_id(conn, [i.memory_id for i in injections])
        gone = {i.memory_id: archived_reason(conn, i.memory_id) for i in injections if i.memory_id not in rows}
    groups: dict[tuple[str, str], list] = {}
    for i in injections:
        groups.setdefault((i.accessed_at, i.source), []).append(i)
    print(f"session {session}")
    for (at, source), items in groups.items():
        project = items[0].project_id or "?"
        print(f"{at[:19].replace('T', ' ')} UTC · {source or '?'} · project {project} · {len(items)} memories")
        for i in items:
            memory = rows.get(i.memory_id)
            if memory is None:
                print(f"  #{i.memory_id} (no longer current: {review_line(gone[i.memory_id], 120)})")
            else:
                print(f"  #{i.memory_id} {review_line(bullet(memory), 400)}")
    return 0


def _spooled(settings: Settings, session: str) -> list:
    """Injections the hook spooled while the database was busy (``access-spool.jsonl``, moved into the access log
    by the next run), so ``nous injected`` shows them already; their source says so."""
    import json

    from nous_assets.store.reads.access_log import Injection

    out = []
    for path in (settings.access_spool, settings.access_spool.with_suffix(".ingesting")):
        try:
            lines = path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            try:
                rec = json.loads(line)
                if rec.get("session_id") != session:
                    continue
                source = f"{rec.get('source') or 'hook'} (spooled)"
                out.extend(Injection(int(i), rec.get("project_id"), source, str(rec["accessed_at"]))
                           for i in rec["memory_ids"])  # fmt: skip
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
    return out


# ---------------------------------------------------------------- nous forget


def cmd_forget(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.cli.review import review_line
    from nous_assets.safety import forget

    target = " ".join(args.target).strip()
    is_id = target.lstrip("#").isdigit() and " " not in target
    with open_store(settings) as conn:
        try:
            if is_id:
                one = forget.by_id(conn, int(target.lstrip("#")))
                if one is None:
                    memory_id = int(target.lstrip("#"))
                    why = review_line(forget.archived_reason(conn, memory_id), 160)
                    print(f"memory #{memory_id} is already gone ({why}); nothing to do")
                    return 0
                targets = [one]
            else:
                targets = forget.by_query(conn, target, canonical(conn, args.project))
        except forget.ForgetError as exc:
            raise NousError(str(exc)) from None
        if not targets:
            print(f"no current memory contains {' and '.join(repr(w) for w in target.split())}"
                  + (f" in project {args.project}" if args.project else "") + "; nothing forgotten")  # fmt: skip
            return EXIT_ERROR
        if not args.yes and not args.dry_run and not sys.stdin.isatty():
            print("nous: error: `nous forget` asks before it removes anything; run it in a terminal or add --yes "
                  "(--dry-run lists what would go)", file=sys.stderr)  # fmt: skip
            return EXIT_CONFIG
        will = "would be" if args.dry_run else "will be"
        print(f"{len(targets)} memor{'y' if len(targets) == 1 else 'ies'} {will} forgotten (a tombstone each: gone "
              "from packets, search and MCP recall):")  # fmt: skip
        for t in targets:
            print(f"  #{t.memory_id} · project {t.project_id} · {review_line(t.content, 160)}")
        if args.dry_run:
            print("nothing forgotten (--dry-run)")
            return 0
        if not args.yes:
            try:
                answer = input("Forget them? [y/N] ")
            except EOFError:
                answer = ""
            if answer.strip().lower() not in ("y", "yes"):
                print("nothing forgotten")
                return 0
        outcomes = forget.forget(conn, targets, None if is_id else target)
    written = sum(o.created for o in outcomes)
    print(f"forgot {written} memor{'y' if written == 1 else 'ies'}"
          + (f" ({len(outcomes) - written} already forgotten)" if written < len(outcomes) else ""))  # fmt: skip
    from nous_assets.cli.rebuild import rebuild_now

    return rebuild_now(settings)


def register(add: AddCommand) -> None:
    """The ``packet``, ``injected`` and ``forget`` subparsers."""
    p = add(
        "packet",
        cmd_packet,
        "Print exactly what the SessionStart hook would inject for a session starting in DIR now (the resolver's own "
        "project resolution, packet choice, notes and size cap; nothing is logged as an injection).",
    )
    p.add_argument("dir", nargs="?", metavar="DIR", help="the session's directory (default: the current one)")
    p.add_argument("--source", choices=SOURCES, default="startup",
                   help="the SessionStart source to preview (default startup): resume/fork get only what the "
                        "session was not given yet, compact the rules again")  # fmt: skip
    p.add_argument("--session", metavar="ID", help="the session to preview a resume/fork for (its access log counts)")
    p.add_argument("--explain", action="store_true",
                   help="under each line: the memory's id, status, evidence (confidence against the bar, sessions) "
                        "and why it ranked (the build's score breakdown)")  # fmt: skip
    p.add_argument("--why-not", metavar="ID",
                   help="why memory ID is not in the packet (the build's own rule: evidence bar, status, guard, "
                        "stale citation, duplicate, budget, other project, forgotten, …)")  # fmt: skip
    p = add(
        "injected",
        cmd_injected,
        "What the hooks injected into a past session, from the access log: when, which source, which memories, and "
        "each memory's line as it reads now.",
    )
    p.add_argument("--session", metavar="ID", help="the session (a prefix of its id will do)")
    p.add_argument("--last", action="store_true", help="the latest session that got an injection (the default)")
    p = add(
        "forget",
        cmd_forget,
        "Forget a memory for good: by #id, or every current memory containing all the words of QUERY. Lists what "
        "goes and asks first; writes a tombstone event each (idempotent) and rebuilds the packets at once.",
    )
    p.add_argument("target", nargs="+", metavar="ID|QUERY", help="a memory #id, or words its text contains")
    p.add_argument("--project", metavar="PROJECT", type=project_arg,
                   help="QUERY: only this project's memories (and global ones); " + PROJECT_HELP)  # fmt: skip
    p.add_argument("--yes", "-y", action="store_true", help="do not ask (needed when not in a terminal)")
    p.add_argument("--dry-run", action="store_true", help="list what would be forgotten; write nothing")

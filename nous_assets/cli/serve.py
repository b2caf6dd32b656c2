"""``nous serve`` (the service API and its tokens), ``nous push`` and ``nous pull`` (its clients).

(``nous run``, the Dagster UI, lives in ``cli/run.py``.)
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nous_assets.cli.common import EXIT_ERROR, AddCommand, Progress, open_store
from nous_assets.errors import NousError
from nous_assets.settings import Settings

SERVE_HELP = (
    "Serve the Agent-Service API (ResolveContext, IngestArtifact, AppendEvent, Feedback, Backfill, Replay/Archive) "
    "over the configured backend (cortex.db, or PostgreSQL with NOUS_BACKEND=postgres), on 127.0.0.1:4317 by "
    "default or a Unix socket. Every route but /health needs a bearer token (nous serve token create); the "
    "OpenAPI schema is at /openapi.json."
)


def cmd_serve(settings: Settings, args: argparse.Namespace) -> int:
    if args.token_command:
        return args.token_handler(settings, args)
    from nous_assets.service import transport
    from nous_assets.service.app import create_app
    from nous_assets.store.backend import engine

    if args.socket and (args.host or args.port is not None):
        raise NousError("--socket and --host/--port are alternatives; give one")
    if args.port is not None and not 0 <= args.port <= 65535:
        raise NousError(f"--port {args.port} is not a TCP port (0-65535; 0 picks a free one)")
    sock = (
        transport.bind_unix(Path(args.socket))
        if args.socket
        else transport.bind_tcp(args.host or transport.DEFAULT_HOST,
                                transport.DEFAULT_PORT if args.port is None else args.port,
                                allow_remote=args.allow_remote)  # fmt: skip
    )
    try:
        app = create_app(settings)
    except BaseException:
        sock.close()
        raise
    where = str(settings.db_path)
    if not engine(settings).capabilities.local_file:
        from nous_assets.store.pg.db import redact_dsn

        where = f"PostgreSQL {redact_dsn(settings.pg_dsn or '')}"
    transport.serve(app, sock, ready=f"nous serve: listening on {transport.address(sock)} ({where}); Ctrl-C stops")
    return 0


def _service_store(settings: Settings):
    from nous_assets.service.pool import BackendPool

    return BackendPool(settings)


def cmd_token_create(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.service import tokens
    from nous_assets.store.backend import engine

    tenant = args.tenant or settings.tenant_id
    if engine(settings).capabilities.one_tenant and tenant != settings.tenant_id:
        raise NousError(
            f"this cortex.db holds tenant {settings.tenant_id!r} only; a token for {tenant!r} could never be used "
            "here (set NOUS_TENANT, or use the PostgreSQL backend for several tenants)"
        )
    pool = _service_store(settings)
    try:
        with pool.service_store() as store:
            token = tokens.create(store, client_id=args.client, tenant_id=tenant,
                                  scopes=("client", "ops") if args.ops else ("client",))  # fmt: skip
    except ValueError as exc:
        raise NousError(str(exc)) from None
    finally:
        pool.close()
    print(token)
    print(f"token {tokens.token_id_of(token)} for client {args.client!r} of tenant {tenant!r}: shown once, stored "
          "hashed; give it to the client as NOUS_SERVER_TOKEN", file=sys.stderr)  # fmt: skip
    return 0


def cmd_token_list(settings: Settings, args: argparse.Namespace) -> int:
    pool = _service_store(settings)
    try:
        with pool.service_store() as store:
            records = store.tokens()
    finally:
        pool.close()
    if args.json:
        print(json.dumps([{"token_id": r.token_id, "tenant_id": r.tenant_id, "client_id": r.client_id,
                           "scopes": list(r.scopes), "created_at": r.created_at, "revoked_at": r.revoked_at}
                          for r in records], indent=2))  # fmt: skip
        return 0
    for r in records:
        state = f"revoked {r.revoked_at[:19]}" if r.revoked_at else "live"
        print(f"{r.token_id}  tenant={r.tenant_id}  client={r.client_id}  scopes={','.join(r.scopes)}  "
              f"created {r.created_at[:19]}  {state}")  # fmt: skip
    print(f"{len(records)} token(s)", file=sys.stderr)
    return 0


def cmd_token_revoke(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.timeutil import now_iso

    if bool(args.token_id) == bool(args.client):
        raise NousError("give a TOKEN_ID or --client NAME (every live token of that client)")
    pool = _service_store(settings)
    try:
        with pool.service_store() as store:
            n = store.revoke(at=now_iso(), token_id=args.token_id, client_id=args.client, tenant_id=args.tenant)
    finally:
        pool.close()
    if n == 0:
        raise NousError("no live token matched (nous serve token list shows them)")
    print(f"revoked {n} token(s); servers stop accepting them within a few seconds")
    return 0


def _client(settings: Settings):
    from nous_assets.service.client import Client

    return Client(settings.server_url, settings.server_token)


def cmd_push(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.service import push
    from nous_assets.service.client import ServerError
    from nous_assets.store.log import push_cursor

    client = _client(settings)
    batch = args.batch or settings.thresholds.push_batch_events
    if not 1 <= batch <= 1000:
        raise NousError("--batch must be in 1..1000")
    with open_store(settings) as conn:
        if args.from_start:
            push_cursor.reset(conn, push.target(client, push.whoami(client)))
        bar = Progress("push")
        try:
            report = push.push(conn, client, batch_size=batch, max_batches=args.max_batches,
                               rejected_path=settings.data_dir / "push-rejected.jsonl",
                               progress=lambda r: bar.update(r.sent, f"{r.created:,} new"))  # fmt: skip
        except ServerError as exc:  # down, refusing, or answering outside the contract: the cursor did not move
            if bar.tty:
                sys.stderr.write("\r\x1b[K")  # clear the progress line: the error is the one line left
            print(f"nous: error: {exc}; nothing was lost: the events not acknowledged are sent by the next push",
                  file=sys.stderr)  # fmt: skip
            return EXIT_ERROR
    bar.done(f"{report.sent:,} events sent in {report.batches} batch(es): {report.created:,} new, "
             f"{report.duplicates:,} already on the server, {report.rejected:,} refused; cursor at event "
             f"#{report.cursor}" + ("" if report.finished else " (stopped by --max-batches; run again for the rest)"))
    if report.rejected:
        print(f"nous: warning: {report.rejected} event(s) refused by the server, kept with the reason in "
              f"{settings.data_dir / 'push-rejected.jsonl'}", file=sys.stderr)  # fmt: skip
    return 0


def cmd_pull(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.service import pull
    from nous_assets.service.client import ServerError

    client = _client(settings)
    bar = Progress("pull")
    try:
        pulled = pull.fetch(client, project_id=args.project, progress=bar.update)
    except ServerError as exc:  # down, refusing, or answering outside the contract: nothing was written
        if bar.tty:
            sys.stderr.write("\r\x1b[K")  # clear the progress line: the error is the one line left
        print(f"nous: error: {exc}; the local packets are unchanged (the hook keeps using them)", file=sys.stderr)
        return EXIT_ERROR
    with open_store(settings, create=True) as conn:
        report = pull.store(conn, pulled)
    bar.done(f"{report.packets:,} packet(s) of {len(report.projects)} project(s) written to {settings.db_path}")
    if report.lines_removed or report.lines_cut or report.dropped:
        print(f"nous: warning: the local re-check removed {report.lines_removed} line(s) the guard holds and cut "
              f"{report.lines_cut} line(s) past the hook's size limit; {report.dropped} packet(s) had nothing left "
              "and were not stored", file=sys.stderr)  # fmt: skip
    if not report.projects:
        print("nous: warning: the server holds no packets for this tenant" +
              (f" and project {args.project}" if args.project else ""), file=sys.stderr)  # fmt: skip
    return 0


def register(add: AddCommand) -> None:
    """The ``serve`` (with ``token create|list|revoke``), ``push`` and ``pull`` subparsers."""
    p = add("serve", cmd_serve, SERVE_HELP)
    p.add_argument("--host", help="address to listen on (default 127.0.0.1; others need --allow-remote)")
    p.add_argument("--port", type=int, help="TCP port (default 4317; 0 picks a free one)")
    p.add_argument("--socket", metavar="PATH", help="listen on a Unix socket (mode 0600) instead of TCP")
    p.add_argument("--allow-remote", action="store_true",
                   help="allow a non-loopback --host (prints a warning: put TLS in front)")  # fmt: skip
    p.set_defaults(token_command=None)
    tokens = p.add_subparsers(dest="token_group", metavar="token")
    t = tokens.add_parser("token", help="manage client tokens", description="Bearer tokens per client, stored hashed.")
    actions = t.add_subparsers(dest="token_command", metavar="ACTION")
    actions.required = True
    c = actions.add_parser("create", help="create a token (printed once on stdout)",
                           description="Create a random token for one client of one tenant; only its salted "
                           "digest is stored, so it is printed once.")  # fmt: skip
    c.add_argument("--client", required=True, help="the client's name (recorded with every write it makes)")
    c.add_argument("--tenant", help="the tenant (team or developer) it may read and write (default NOUS_TENANT)")
    c.add_argument("--ops", action="store_true", help="also allow the ops endpoints (replay, archive)")
    c.set_defaults(token_handler=cmd_token_create)
    li = actions.add_parser("list", help="list tokens (never their secret)", description="List tokens.")
    li.add_argument("--json", action="store_true")
    li.set_defaults(token_handler=cmd_token_list)
    r = actions.add_parser("revoke", help="revoke a token, or every token of a client", description="Revoke tokens.")
    r.add_argument("token_id", nargs="?", help="the token id (the 12 hex digits after nous_)")
    r.add_argument("--client", help="revoke every live token of this client")
    r.add_argument("--tenant", help="only tokens of this tenant")
    r.set_defaults(token_handler=cmd_token_revoke)

    p = add("push", cmd_push,
            "Send this machine's new events (cortex.db) to nous serve (NOUS_SERVER_URL, NOUS_SERVER_TOKEN): "
            "at-least-once with idempotency keys, resumable: a push cursor moves only after the server "
            "acknowledged a batch, so an interrupted push resends at most one batch and nothing is lost.")  # fmt: skip
    p.add_argument("--batch", type=int, help="events per request (default thresholds.push_batch_events = 200)")
    p.add_argument("--max-batches", type=int, metavar="N", help="stop after N batches (the rest: next push)")
    p.add_argument("--from-start", action="store_true",
                   help="send the whole log again (the server keeps one copy of each event)")  # fmt: skip

    p = add("pull", cmd_pull,
            "Fetch this tenant's precomputed injection packets from nous serve into the local cortex.db, so the "
            "SessionStart hook keeps reading a local file. A server that is down leaves the local packets as they "
            "are.")  # fmt: skip
    p.add_argument("--project", help="only this project's packets (default: every project of the tenant); write ids "
                   "that start with '-' as --project=-home-me-app")

"""Looking after an installation: ``nous hooks``, ``nous doctor`` and ``nous redact``."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from nous_assets.cli.common import EXIT_ERROR, AddCommand, Progress, open_store
from nous_assets.errors import NousError
from nous_assets.settings import Settings
from nous_assets.store.projection.memory_state import Policy


def cmd_hooks(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.hooks import default_settings_path, install_hooks, uninstall_hooks

    path = default_settings_path(settings, Path(args.project) if args.project else None)
    if args.action == "install":
        report = install_hooks(path, sys.executable, with_prompt_hook=args.with_prompt_hook,
                               data_dir=settings.data_dir, db_path=settings.db_path)
        changes = [f"{what} {', '.join(events)}" for what, events in
                   (("added", report.added), ("updated", report.updated), ("removed", report.removed)) if events]
        print(f"Nous hooks in {path}: {'; '.join(changes) or 'already installed'}"
              + (f" (backup: {report.backup_path})" if report.backup_path else ""))
        print(f"the hooks read {settings.db_path} (recorded in the command: no environment variable needed); "
              "check the whole chain with `nous doctor`")
    else:
        removed = uninstall_hooks(path)
        print(f"removed {removed} Nous hook entr{'y' if removed == 1 else 'ies'} from {path}")
    return 0


def cmd_doctor(settings: Settings, args: argparse.Namespace) -> int:
    import os

    from nous_assets import doctor

    checks = doctor.run_checks(doctor.make_context(settings, os.environ, fix=args.fix))
    report = doctor.as_json(checks)
    print(json.dumps(report, indent=2) if args.json else doctor.render(checks))
    return 0 if report["ok"] else EXIT_ERROR


def cmd_redact(settings: Settings, args: argparse.Namespace) -> int:
    from nous_assets.capture.rescan import rescan

    if not args.rescan:
        raise NousError("nothing to do: `nous redact --rescan` re-applies the redactor to stored data (see --help)")
    with open_store(settings) as conn:
        bars: dict[str, Progress] = {}

        def progress(stage: str, done: int, total: int) -> None:
            bars.setdefault(stage, Progress(f"rescan {stage}", total=total)).update(done)

        report = rescan(settings, conn, policy=Policy.of(settings.thresholds), dry_run=args.dry_run, progress=progress)
    if args.json:
        print(json.dumps({"run_id": report.run_id, "dry_run": report.dry_run, "changed": dict(report.changed),
                          "secrets_by_kind": dict(report.kinds), "audit_rows": len(report.audit)}, indent=2))
        return 0
    verb = "would remove" if args.dry_run else "removed"
    print(f"rescan {report.run_id}: {verb} {report.total:,} secret(s)"
          + (f" ({', '.join(f'{k} {n}' for k, n in report.kinds.most_common())})" if report.total else ""))
    width = max((len(where) for where in report.changed), default=0) + 2
    for where, n in sorted(report.changed.items()):
        done = ("to drop" if args.dry_run else "dropped") if where.endswith("_dropped") else (
            "to rewrite" if args.dry_run else "rewritten")  # fmt: skip
        print(f"  {where.removesuffix('_dropped'):<{width}}{n:>8,} {done}")
    if report.memories_rebuilt:
        print(f"  projection rebuilt: {report.memories_rebuilt:,} memories (vectors of changed ones re-embed next run)")
    if not args.dry_run and report.audit:
        print(f"  {len(report.audit):,} audit row(s) in redaction_audit (kind, location, time; never the secret)")
    return 0



def register(add: AddCommand) -> None:
    """The ``hooks``, ``doctor`` and ``redact`` subparsers."""
    p = add(
        "hooks",
        cmd_hooks,
        "Install or remove the Nous hooks (SessionStart, Stop, PreCompact) in Claude Code's "
        "settings.json (backup first, idempotent, other hooks untouched). The commands record this "
        "interpreter and the data dir, so the hooks work whatever Claude Code's environment is; "
        "re-run install after moving the venv or changing NOUS_DATA_DIR.",
    )
    p.add_argument("action", choices=["install", "uninstall"])
    where = p.add_mutually_exclusive_group()
    where.add_argument("--user", action="store_true", help="$CLAUDE_CONFIG_DIR/settings.json (default)")
    where.add_argument("--project", metavar="DIR", help="DIR/.claude/settings.json")
    p.add_argument(
        "--with-prompt-hook",
        action="store_true",
        help="also install UserPromptSubmit (only active with NOUS_ENABLE_USERPROMPTSUBMIT=true)",
    )
    p = add(
        "doctor",
        cmd_doctor,
        "Check the chain from Claude Code's hook to the pipeline: hooks installed and pointing at a working "
        "interpreter and this data dir, data dir and cortex.db readable and private, schema current, injection "
        "cache fresh, last ingest, Dagster sensor daemon running, recent hook failures. Each check prints OK, "
        "WARN or FAIL with what to do; exits 1 when something FAILs.",
    )
    p.add_argument("--json", action="store_true", help="print the checks as JSON")
    p.add_argument("--fix", action="store_true", help="make data files and directories private (0600/0700)")
    p = add(
        "redact",
        cmd_redact,
        "Re-apply the current secret redactor to everything already stored: lake partitions (rewritten "
        "atomically), transcript chunks, event payloads (the one sanctioned in-place edit of the log), "
        "injection packets and queue errors; the projection is rebuilt and every change is recorded in the "
        "redaction_audit table (kind, location, time; never the secret). Idempotent; run it while the "
        "pipeline (`nous run`) is stopped.",
    )
    p.add_argument("--rescan", action="store_true", help="scan stored data again and redact what is found")
    p.add_argument("--dry-run", action="store_true", help="only count what would be redacted; write nothing")
    p.add_argument("--json", action="store_true", help="print the report as JSON")

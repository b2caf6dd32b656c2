"""Team-mode benchmark: publishing a staging log into a PostgreSQL tenant, and team_job runs on Dagster-on-PG.

1. ``--events`` events in a staging SQLite log published to a tenant through the ``EventStore`` protocol:
   events/s, the no-op re-publish, and the projection on PostgreSQL.
2. With ``--transcripts DIR``: ``--developers`` developers each holding a copy of DIR (symlinked) run
   ``team_job`` one after the other on a real Dagster instance from ``deploy/team/dagster.yaml`` (its storage
   in the same PostgreSQL), with ``nous/since`` far back so every day is taken: seconds per run, events
   published, and the second run of a developer (nothing new).

PostgreSQL is the embedded server (127.0.0.1, deleted at the end) unless ``--dsn`` names one (a superuser,
to create the Dagster database). Prints each figure as it is measured and saves them all to
``benchmarks/results/team-<time>.json``.

    python benchmarks/bench_team.py [--events 20000] [--transcripts DIR --developers 2]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import sys
import tempfile
import time
import uuid
from dataclasses import replace
from pathlib import Path

from bench_store import EventGenerator
from results_file import save

from nous_assets.settings import load_settings, settings_to_json
from nous_assets.store.backend import postgres_backend, sqlite_backend
from nous_assets.store.db import open_db
from nous_assets.store.log.event_publish import publish_events, publish_staging

BATCH = 500
REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # tests/support: dev-only helpers shared with the tests, not in the wheel


def _timed(fn, *args, **kwargs) -> tuple[object, float]:
    t = time.perf_counter()
    out = fn(*args, **kwargs)
    return out, time.perf_counter() - t


def bench_publish(dsn: str, n: int, work: Path) -> dict:
    """Staging log of ``n`` events -> a fresh tenant; the publish after it (checkpoint: nothing to send), a full
    re-send (a lost checkpoint: every event found by its key), and the projection on PostgreSQL."""
    from nous_assets.store.pg.db import open_pg

    conn = open_db(work / "staging.db", create=True)
    staging = sqlite_backend(conn, "staging")
    events = EventGenerator("team", seed=3).take(n)
    for i in range(0, n, BATCH):
        staging.events.append_many(events[i : i + BATCH])
    tenant = f"bench-{uuid.uuid4().hex[:8]}"
    target = postgres_backend(open_pg(dsn), tenant)
    try:
        first, publish_s = _timed(publish_staging, conn, target.events, tenant)
        again, noop_s = _timed(publish_staging, conn, target.events, tenant)
        resent, resend_s = _timed(publish_events, staging.events, target.events)
        projected, project_s = _timed(target.projection.project)
        return {
            "events": n,
            "published": first.published,
            "publish_events_per_s": round(first.published / publish_s),
            "next_publish_written": again.published,
            "next_publish_s": round(noop_s, 3),
            "full_resend_written": resent.published,
            "full_resend_events_per_s": round(resent.already_present / resend_s),
            "pg_project_events_per_s": round(projected.events / project_s),
        }
    finally:
        staging.close()
        target.close()


def _instance(server_dsn: str, work: Path):
    """A DagsterInstance from deploy/team/dagster.yaml with its storage in a new database of the server."""
    import dagster as dg
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    name = f"dagster_bench_{uuid.uuid4().hex[:8]}"
    with psycopg.connect(server_dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    info = conninfo_to_dict(server_dsn)
    env = {"DAGSTER_PG_HOST": info.get("host", "127.0.0.1"), "DAGSTER_PG_PORT": str(info.get("port", 5432)),
           "DAGSTER_PG_USER": info.get("user", "postgres"), "DAGSTER_PG_PASSWORD": info.get("password") or "-",
           "DAGSTER_PG_DB": name}  # fmt: skip
    home = work / "dagster"
    home.mkdir()
    shutil.copy(REPO / "deploy" / "team" / "dagster.yaml", home / "dagster.yaml")
    saved = {k: os.environ.get(k) for k in env}
    os.environ.update(env)  # read once, while the instance is built
    try:
        return dg.DagsterInstance.from_config(str(home))
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def bench_team_job(dsn: str, transcripts: Path, developers: int, work: Path) -> dict:
    """``team_job`` for each developer (a symlinked copy of ``transcripts``), first and second run."""
    import dagster as dg

    from nous_assets.defs.team.assets import TEAM_ASSETS
    from nous_assets.defs.team.automation import team_job
    from nous_assets.defs.team.resources import SINCE_TAG, TeamResource
    from nous_assets.defs.team.resources import developers as partitions

    root = work / "transcripts"
    names = [f"dev{i}-{uuid.uuid4().hex[:6]}" for i in range(developers)]
    for name in names:
        root.mkdir(exist_ok=True)
        (root / name).symlink_to(transcripts.resolve(), target_is_directory=True)
    env = {"HOME": str(work / "home"), "NOUS_DATA_DIR": str(work / "data"), "NOUS_PARTITION_START": "2020-01-01"}
    settings = replace(load_settings(env), backend="postgres", pg_dsn=dsn)
    resource = TeamResource(transcripts_root=str(root), staging_root=str(work / "staging"),
                            settings_json=settings_to_json(settings))  # fmt: skip
    instance = _instance(dsn, work)
    instance.add_dynamic_partitions(partitions.name, names)
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def("team_job")
    runs = []
    for name in names:
        result, first_s = _timed(job.execute_in_process, partition_key=name, instance=instance,
                                 tags={SINCE_TAG: "2020-01-01"})  # fmt: skip
        meta = result.asset_materializations_for_node("team_events")[0].metadata
        extracted = result.asset_materializations_for_node("team_learning_events")[0].metadata
        _, again_s = _timed(job.execute_in_process, partition_key=name, instance=instance)
        runs.append({
            "developer": name, "days": len(extracted["days"].value), "turns": extracted["turns"].value,
            "events_published": meta["events_published"].value, "first_run_s": round(first_s, 2),
            "second_run_s": round(again_s, 2),
        })  # fmt: skip
        print("team_job", json.dumps(runs[-1]), flush=True)
    instance.dispose()
    return {"transcripts": str(transcripts), "developers": developers, "runs": runs}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=20_000)
    parser.add_argument("--transcripts", type=Path, help="a Claude Code projects tree to give every developer")
    parser.add_argument("--developers", type=int, default=2)
    parser.add_argument("--dsn", help="an existing PostgreSQL superuser DSN (default: start the embedded one)")
    args = parser.parse_args()
    results: dict = {"machine": platform.machine(), "python": platform.python_version(), "cpus": os.cpu_count()}
    server = None
    with tempfile.TemporaryDirectory(prefix="nous-bench-team-") as tmp, contextlib.ExitStack() as stack:
        dsn = args.dsn
        if dsn is None:
            from tests.support import embedded_pg as embedded

            server, start_s = _timed(embedded.start)
            stack.callback(server.stop)
            dsn = server.dsn()
            results["embedded_start_s"] = round(start_s, 2)
        work = Path(tmp)
        results["publish"] = bench_publish(dsn, args.events, work)
        print("publish", json.dumps(results["publish"]), flush=True)
        if args.transcripts:
            results["team_job"] = bench_team_job(dsn, args.transcripts, args.developers, work)
    save(results, "team")


if __name__ == "__main__":
    main()

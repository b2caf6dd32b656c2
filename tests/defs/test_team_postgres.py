"""Team mode on a real Dagster instance whose run, event-log and schedule storage is dagster-postgres on the
embedded PostgreSQL (the contract suite's session server), configured by ``deploy/team/dagster.yaml`` itself:
every developer's partition is materialized, its events land in the team's tenant of the Nous backend, and the
tenant's working database projects them (once) and runs the laptop's lifecycle over them."""

from __future__ import annotations

import shutil
import uuid
from dataclasses import replace
from pathlib import Path

import dagster as dg
import pytest
from firstrun import History, recent_days

from nous_assets.defs.team.assets import TEAM_ASSETS
from nous_assets.defs.team.automation import busy_developers, team_job, team_watch
from nous_assets.defs.team.resources import DEVELOPER_TAG, LLM_POOL, TeamResource, developers
from nous_assets.settings import load_settings, settings_to_json
from nous_assets.store.db import open_db
from nous_assets.store.sqlite.projection import get_checkpoint
from nous_assets.team.packets import mirror_dir

REPO = Path(__file__).resolve().parents[2]
TEAM_YAML = REPO / "deploy" / "team" / "dagster.yaml"

pytest.importorskip("dagster_postgres", reason="team mode needs the team extra (dagster-postgres)")
psycopg = pytest.importorskip("psycopg", reason="team mode needs the team extra (psycopg)")


@pytest.fixture(scope="module")
def team_instance(pg_server, tmp_path_factory):
    """A DagsterInstance from the team dagster.yaml, its storage in a fresh database of the embedded server."""
    dbname = f"dagster_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(pg_server.dsn(), autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{dbname}"')
    home = tmp_path_factory.mktemp("dagster-team")
    shutil.copy(TEAM_YAML, home / "dagster.yaml")
    env = {
        "DAGSTER_PG_HOST": "127.0.0.1",
        "DAGSTER_PG_PORT": str(pg_server.port),
        "DAGSTER_PG_USER": "postgres",
        "DAGSTER_PG_PASSWORD": "unused-the-test-server-trusts-local-connections",
        "DAGSTER_PG_DB": dbname,
    }
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        instance = dg.DagsterInstance.from_config(str(home))
    try:
        yield instance, dbname
    finally:
        instance.dispose()


@pytest.fixture
def team(tmp_path: Path, nous_env: dict[str, str], pg_server) -> tuple[TeamResource, list[str]]:
    """Two developers' transcripts and the team resource of a fresh team tenant on the shared server."""
    root = tmp_path / "transcripts"
    names = [f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"]
    for offset, name in enumerate(names):
        history = History(root / name, recent_days(2))
        for n, day in enumerate(history.days):
            history.write_day(day, n + 3 * offset)
    team_tenant = f"team-{uuid.uuid4().hex[:6]}"
    settings = replace(load_settings(), backend="postgres", pg_dsn=pg_server.dsn(), tenant_id=team_tenant)
    resource = TeamResource(
        transcripts_root=str(root), staging_root=str(tmp_path / "staging"), settings_json=settings_to_json(settings)
    )
    return resource, names


def _pg_rows(pg_server, table: str, tenant: str) -> int:
    with psycopg.connect(pg_server.dsn()) as conn:
        return conn.execute(f"SELECT count(*) FROM {table} WHERE tenant_id = %s", (tenant,)).fetchone()[0]


def _pg_keys(pg_server, tenant: str) -> set[str]:
    with psycopg.connect(pg_server.dsn()) as conn:
        rows = conn.execute("SELECT idempotency_key FROM learning_events WHERE tenant_id = %s", (tenant,)).fetchall()
    return {r[0] for r in rows}


def _working_db(resource: TeamResource, tenant: str) -> Path:
    """The tenant's working cortex.db, where its log is projected and its packets are built."""
    return mirror_dir(Path(resource.staging_root), tenant) / "cortex.db"


def _sqlite_projected(db: Path) -> dict[str, int]:
    """Per event (by key) of a cortex.db: 1 if its projection has taken it (id at or below the checkpoint), else 0."""
    conn = open_db(db)
    try:
        done = get_checkpoint(conn)
        return {k: int(i <= done) for k, i in conn.execute("SELECT idempotency_key, event_id FROM learning_events")}
    finally:
        conn.close()


def _pg_projected(pg_server, tenant: str) -> dict[str, int]:
    """The same for the tenant's log in PostgreSQL and its projection checkpoint there."""
    with psycopg.connect(pg_server.dsn()) as conn:
        row = conn.execute("SELECT last_event_id FROM projection_checkpoints WHERE tenant_id = %s "
                           "AND projector_name = 'memories'", (tenant,)).fetchone()  # fmt: skip
        rows = conn.execute("SELECT idempotency_key, event_id FROM learning_events WHERE tenant_id = %s", (tenant,))
        return {k: int(i <= (row[0] if row else 0)) for k, i in rows.fetchall()}


def _sqlite_count(db: Path, table: str) -> int:
    conn = open_db(db)
    try:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        conn.close()


def _keys(db: Path) -> set[str]:
    conn = open_db(db)
    try:
        return {r[0] for r in conn.execute("SELECT idempotency_key FROM learning_events")}
    finally:
        conn.close()


def test_team_yaml_gives_postgres_storage_a_run_queue_with_per_developer_limits_and_an_llm_pool(team_instance):
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage, PostgresScheduleStorage

    instance, _ = team_instance
    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.schedule_storage, PostgresScheduleStorage)
    assert type(instance.run_coordinator).__name__ == "QueuedRunCoordinator"
    config = instance.get_concurrency_config()
    assert config.pool_config.default_pool_limit >= 1
    assert TEAM_ASSETS[0].op.pool == LLM_POOL  # the extraction step is the pool's
    limits = {entry["key"]: entry for entry in config.run_queue_config.tag_concurrency_limits}
    assert limits[DEVELOPER_TAG] == {"key": DEVELOPER_TAG, "value": {"applyLimitPerUniqueValue": True}, "limit": 1}


def test_the_run_queue_holds_a_second_run_of_one_developer_but_not_another_developers(team_instance):
    """Dagster's own dequeue check (the daemon's) over runs stored in PostgreSQL."""
    from dagster._utils.tags import TagConcurrencyLimitsCounter

    instance, _ = team_instance
    tag = f"dev-{uuid.uuid4().hex[:6]}"
    running = dg.DagsterRun(job_name="team_job", run_id=str(uuid.uuid4()), status=dg.DagsterRunStatus.STARTED,
                            tags={DEVELOPER_TAG: tag})  # fmt: skip
    instance.add_run(running)
    stored = instance.get_run_by_id(running.run_id)
    assert stored is not None and stored.tags[DEVELOPER_TAG] == tag
    limits = instance.get_concurrency_config().run_queue_config.tag_concurrency_limits
    counter = TagConcurrencyLimitsCounter(limits, [stored])
    same = dg.DagsterRun(job_name="team_job", run_id=str(uuid.uuid4()), tags={DEVELOPER_TAG: tag})
    other = dg.DagsterRun(job_name="team_job", run_id=str(uuid.uuid4()), tags={DEVELOPER_TAG: f"{tag}-other"})
    assert counter.is_blocked(same)
    assert not counter.is_blocked(other)
    assert tag in busy_developers(instance)


def test_every_developers_partition_lands_in_the_teams_postgres_tenant(team_instance, team, pg_server):
    instance, dbname = team_instance
    resource, (alice, bob) = team
    tenant = resource.base_settings().tenant_id
    instance.add_dynamic_partitions(developers.name, [alice, bob])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )

    result = job.execute_in_process(partition_key=alice, instance=instance)
    assert result.success
    run = instance.get_run_by_id(result.run_id)
    assert run.tags[DEVELOPER_TAG] == alice  # every partitioned run is tagged for the per-developer limit
    with psycopg.connect(pg_server.dsn(dbname)) as conn:  # the run itself is stored in PostgreSQL
        assert conn.execute("SELECT count(*) FROM runs WHERE run_id = %s", (result.run_id,)).fetchone()[0] == 1
    assert LLM_POOL in instance.event_log_storage.get_concurrency_keys()  # the step took a pool slot

    working = _working_db(resource, tenant)
    staged = _keys(working)  # the developer's events are written into the tenant's working database ...
    assert staged, "the developer's transcripts gave no learnings"
    assert not _keys(resource.developer_settings(alice).db_path)  # ... not into its staging one
    assert _pg_keys(pg_server, tenant) == staged
    assert _sqlite_count(working, "memories") > 0  # projected in the tenant's working database
    assert _pg_rows(pg_server, "memories", tenant) == 0  # and not again in PostgreSQL
    assert _pg_rows(pg_server, "learning_events", alice) == 0  # a developer is not a tenant of their own
    published = result.asset_materializations_for_node("team_events")[0].metadata
    derived = _packets_of(result)["events_published_to_tenant"].value  # the tenant's steps' (consolidation, …)
    assert published["events_published"].value + derived == len(staged) and published["tenant_id"].value == tenant

    again = job.execute_in_process(partition_key=alice, instance=instance)  # idempotent
    assert again.asset_materializations_for_node("team_events")[0].metadata["events_published"].value == 0
    assert _pg_keys(pg_server, tenant) == staged

    memories = _sqlite_count(working, "memories")
    assert job.execute_in_process(partition_key=bob, instance=instance).success
    bob_keys = _keys(working) - staged
    assert bob_keys, "bob's sessions taught something of their own"
    assert _pg_keys(pg_server, tenant) == staged | bob_keys  # one shared log: alice's and bob's learnings
    assert _sqlite_count(working, "memories") > memories


def test_the_team_sensor_adds_developers_and_requests_tagged_runs(team_instance, team):
    instance, _ = team_instance
    resource, names = team
    result = team_watch(dg.build_sensor_context(instance=instance, resources={"team": resource}))
    added = [key for request in result.dynamic_partitions_requests for key in request.partition_keys]
    assert sorted(added) == sorted(names)
    assert sorted(r.partition_key for r in result.run_requests) == sorted(names)
    assert all(r.tags[DEVELOPER_TAG] == r.partition_key for r in result.run_requests)


def test_the_sensor_retries_a_developer_whose_queue_holds_items_waiting(team_instance, team):
    from nous_assets.defs.assets.capture import SOURCE_TAG
    from nous_assets.store.sqlite import queue

    instance, _ = team_instance
    resource, names = team
    idle = f"dan-{uuid.uuid4().hex[:6]}"  # no new lines, but an item that failed and waits for a retry
    (Path(resource.transcripts_root) / idle).mkdir()
    with resource.staging(idle) as (_, conn):
        queue.enqueue(conn, source="fs_watch", project_id="p", session_id="s", transcript_path="/t/s.jsonl",
                      file_inode=None, file_offset=0, payload={"date": "2026-01-02"}, idempotency_key="k1")  # fmt: skip
    requests = {r.partition_key: r for r in team_watch(
        dg.build_sensor_context(instance=instance, resources={"team": resource})).run_requests}  # fmt: skip
    assert requests[idle].run_key.startswith(f"team-retry:{idle}:")
    assert requests[idle].tags[SOURCE_TAG] == "fs_reconcile"
    assert all(requests[n].run_key.startswith(f"team:{n}:") for n in names)  # new lines: a watch run


def test_history_before_the_window_comes_only_with_the_since_tag(team_instance, team, pg_server):
    from datetime import UTC, datetime, timedelta

    from nous_assets.defs.team.resources import SINCE_TAG

    instance, _ = team_instance
    resource, _ = team
    eve = f"eve-{uuid.uuid4().hex[:6]}"
    today = datetime.now(UTC).date()
    old, recent = (today - timedelta(days=200)).isoformat(), today.isoformat()
    history = History(Path(resource.transcripts_root) / eve, [old, recent])
    history.write_day(old, 1)
    history.write_day(recent, 2)
    instance.add_dynamic_partitions(developers.name, [eve])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )

    def days_of(result) -> list[str]:
        return result.asset_materializations_for_node("team_learning_events")[0].metadata["days"].value

    tenant = resource.base_settings().tenant_id
    first = job.execute_in_process(partition_key=eve, instance=instance)
    assert days_of(first) == [recent]  # the first run records the 90-day window as the developer's floor
    in_window = _pg_rows(pg_server, "learning_events", tenant)
    assert in_window > 0

    assert days_of(job.execute_in_process(partition_key=eve, instance=instance)) == []  # bounded: nothing new
    older = job.execute_in_process(partition_key=eve, instance=instance, tags={SINCE_TAG: old})
    assert days_of(older) == [old]
    assert _pg_rows(pg_server, "learning_events", tenant) > in_window
    with pytest.raises(Exception, match="must be a day"):
        job.execute_in_process(partition_key=eve, instance=instance, tags={SINCE_TAG: "last year"})


def _tenant_packets(pg_server, tenant: str) -> list[tuple]:
    with psycopg.connect(pg_server.dsn()) as conn:
        return conn.execute(
            "SELECT cache_key, project_id, packet_text, memory_ids_json, built_from_event_id, created_at "
            "FROM injection_cache WHERE tenant_id = %s ORDER BY cache_key",
            (tenant,),
        ).fetchall()


def _tenant_ids(pg_server, tenant: str) -> tuple[dict[int, str], set[int]]:
    """({memory id: content}, event ids) of one tenant: a memory's id is the id of the tenant's event that
    extracted it (the tenant's log is not projected in PostgreSQL: its working database does that)."""
    with psycopg.connect(pg_server.dsn()) as conn:
        memories = dict(conn.execute("SELECT event_id, payload_json::json->>'content' FROM learning_events WHERE "
                                     "tenant_id = %s AND event_type = 'LearningExtracted'", (tenant,)))  # fmt: skip
        events = {r[0] for r in conn.execute("SELECT event_id FROM learning_events WHERE tenant_id = %s", (tenant,))}
    return memories, events


def _packets_of(result) -> dict:
    return result.asset_materializations_for_node("team_packets")[0].metadata


def test_team_packets_name_the_tenants_memories_and_a_rerun_writes_nothing(team_instance, team, pg_server):
    import json
    import sys

    from firstrun import PROJECT

    sys.path.insert(0, str(REPO / "tests" / "store"))
    from eventgen import extracted

    from nous_assets.store.backend import open_backend

    instance, _ = team_instance
    resource, (alice, _bob) = team
    settings = resource.developer_settings(alice)
    tenant = settings.tenant_id  # read from the settings: a tenant may hold several developers
    with open_backend(settings, tenant_id=f"elsewhere-{uuid.uuid4().hex[:8]}") as other:  # ids differ from the mirror's
        other.events.append(extracted("L-elsewhere", key=f"elsewhere:{uuid.uuid4().hex}"))
    instance.add_dynamic_partitions(developers.name, [alice])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )
    first = job.execute_in_process(partition_key=alice, instance=instance)
    assert first.success
    packets = _tenant_packets(pg_server, tenant)
    memories, events = _tenant_ids(pg_server, tenant)
    assert {p[1] for p in packets} >= {PROJECT}
    named = {i for p in packets for i in json.loads(p[3])}
    assert named and named <= set(memories)  # the tenant's memory ids, not the mirror's
    assert all(p[4] in events for p in packets)  # built_from_event_id: an event of the tenant
    project_packet = next(p for p in packets if p[1] == PROJECT)
    assert all(memories[i] in project_packet[2] or memories[i][:40] in project_packet[2]
               for i in json.loads(project_packet[3]))  # fmt: skip
    meta = _packets_of(first)
    # the developer's run wrote its events there, the tenant's steps wrote theirs (consolidation) there too
    assert meta["events_already_mirrored"].value + meta["events_published_to_tenant"].value == len(events)
    assert meta["events_mirrored"].value == 0 and meta["projects_written"].value >= 1

    again = job.execute_in_process(partition_key=alice, instance=instance)  # nothing new: nothing written
    meta = _packets_of(again)
    assert (meta["events_mirrored"].value, meta["projects_written"].value, meta["packets_written"].value) == (0, 0, 0)
    assert _tenant_packets(pg_server, tenant) == packets  # same rows, same created_at

    # another writer of the tenant (a developer sharing it, a push): the mirror takes the whole log
    learned = "Never deploy the widget service on Fridays without the release checklist."
    with open_backend(settings, tenant_id=tenant) as shared:
        new = shared.events.append(extracted(f"L-{uuid.uuid4().hex[:8]}", learned, project=PROJECT,
                                             key=f"other-writer:{uuid.uuid4().hex}", concepts=["deploy"],
                                             payload_extra={"kind": "preference", "status": "stated"}))  # fmt: skip
    third = job.execute_in_process(partition_key=alice, instance=instance)
    meta = _packets_of(third)
    assert meta["events_mirrored"].value == 1 and meta["projects_written"].value >= 1
    rebuilt = next(p for p in _tenant_packets(pg_server, tenant) if p[0] == project_packet[0])
    assert learned in rebuilt[2] and new.event.event_id in json.loads(rebuilt[3])
    assert rebuilt[4] == new.event.event_id  # built from the tenant's newest event


def test_nous_pull_brings_the_team_packets_to_the_resolver(team_instance, team, pg_server, nous_env, monkeypatch,
                                                            capsys):  # fmt: skip
    """End to end: a developer's partition, ``nous serve`` on the tenant, ``nous pull``, the SessionStart hook."""
    import sys

    from firstrun import PROJECT

    sys.path.insert(0, str(REPO / "tests" / "service"))
    from servekit import running, service_settings, session_start_context

    from nous_assets.cli.main import main
    from nous_assets.service import tokens

    instance, _ = team_instance
    resource, (alice, _bob) = team
    tenant = resource.developer_settings(alice).tenant_id
    instance.add_dynamic_partitions(developers.name, [alice])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )
    assert job.execute_in_process(partition_key=alice, instance=instance).success
    project_packet = next(p for p in _tenant_packets(pg_server, tenant) if p[1] == PROJECT)
    first_line = next(line for line in project_packet[2].splitlines() if line.startswith("- "))

    server_settings = service_settings(Path(nous_env["HOME"]).parent / "server", "postgres", tenant, pg_server.dsn())
    with running(server_settings) as (url, _port, pool):
        with pool.service_store() as store:
            token = tokens.create(store, client_id="alice-laptop", tenant_id=tenant, scopes=("client",))
        monkeypatch.setenv("NOUS_SERVER_URL", url)
        monkeypatch.setenv("NOUS_SERVER_TOKEN", token)
        assert main(["pull"]) == 0
    assert "packet(s)" in capsys.readouterr().err

    local = load_settings()
    context = session_start_context(local.data_dir, "/home/dev/widget", "sess-team")
    assert first_line in context  # the team's packet for the project, printed for the project's cwd


def test_a_team_run_projects_each_event_once_where_the_packets_are_built(team_instance, team, pg_server):
    """Counted per event, after alice's run, bob's and alice's again: each event of the tenant's log is
    projected once, in the tenant's working database (where extraction compares each learning with the team's
    memories and the packets are built), never in PostgreSQL nor in a developer's staging database, and no
    re-run projects it again."""
    from collections import Counter

    instance, _ = team_instance
    resource, (alice, bob) = team
    tenant = resource.base_settings().tenant_id
    instance.add_dynamic_partitions(developers.name, [alice, bob])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )
    runs = [job.execute_in_process(partition_key=d, instance=instance) for d in (alice, bob, alice)]
    assert all(r.success for r in runs)

    log = _pg_keys(pg_server, tenant)
    in_pg, in_working = _pg_projected(pg_server, tenant), _sqlite_projected(_working_db(resource, tenant))
    assert log and set(in_pg) == log and set(in_working) == log  # one log, all of it in the working database
    tenant_side = Counter(in_pg) + Counter(in_working)
    assert {key: tenant_side[key] for key in log} == dict.fromkeys(log, 1)  # once each ...
    assert sum(in_pg.values()) == 0  # ... never in PostgreSQL
    projected = [
        r.asset_materializations_for_node(node)[0].metadata["events_projected"].value
        for r in runs
        for node in ("team_learning_events", "team_packets")
    ]
    assert sum(projected) == len(log) and projected[-2:] == [0, 0]  # no event projected twice across runs

    for developer in (alice, bob):
        assert _sqlite_projected(resource.developer_settings(developer).db_path) == {}  # staging: none


def test_a_tenants_interventions_are_written_and_reach_its_packets(team_instance, team, pg_server):
    """The tenant's working database runs the laptop's lifecycle: a correction the team's log holds from two
    sessions becomes an active intervention there, and the packet of its project, published to the tenant,
    carries it under Notes."""
    import sys

    sys.path.insert(0, str(REPO / "tests" / "observe"))
    from observe_history import learn, relearn

    from nous_assets.store.backend import open_backend

    instance, _ = team_instance
    resource, (alice, _bob) = team
    settings = resource.developer_settings(alice)
    tenant = settings.tenant_id
    shop = f"-home-dev-shop-{uuid.uuid4().hex[:6]}"
    with open_backend(settings, tenant_id=tenant) as shared:  # another writer of the tenant (a `nous push`)
        learn(shared.events, f"fix-{shop}", "User correction: run the linter from the repo root", project_id=shop,
              session="a", day="2026-03-01")  # fmt: skip
        relearn(shared.events, f"fix-{shop}", session="b", day="2026-03-05", project_id=shop)
    instance.add_dynamic_partitions(developers.name, [alice])
    job = dg.Definitions(assets=TEAM_ASSETS, jobs=[team_job], resources={"team": resource}).resolve_job_def(
        team_job.name
    )
    result = job.execute_in_process(partition_key=alice, instance=instance)
    assert result.success
    assert _packets_of(result)["interventions_active"].value >= 1

    working = open_db(_working_db(resource, tenant))
    try:
        reasons = [r[0] for r in working.execute(
            "SELECT reason_codes_json FROM intervention_candidates WHERE target_project_id = ?", (shop,))]  # fmt: skip
        active = working.execute("SELECT count(*) FROM active_interventions").fetchone()[0]
    finally:
        working.close()
    assert any("repeated_correction" in r for r in reasons) and active >= 1
    packets = [p for p in _tenant_packets(pg_server, tenant) if p[1] == shop]
    assert packets and all("### Notes" in p[2] and "linter from the repo root" in p[2] for p in packets)

"""The team-mode deployment files agree with the code: Helm values (deploy/k8s/values.yaml), the code-location
Dockerfile, and the instance config (deploy/team/dagster.yaml). No cluster is needed: what the chart would
render is checked with Dagster's own instance-config validation, names against the modules and settings."""

from __future__ import annotations

import importlib
import re
import tomllib
from pathlib import Path

import dagster as dg
import pytest
import yaml
from dagster._core.instance.config import dagster_instance_config

from nous_assets.defs.team.resources import DEVELOPER_TAG, LLM_POOL, TEAM_ENV_VARS
from nous_assets.settings import load_settings

REPO = Path(__file__).resolve().parents[2]
VALUES = REPO / "deploy" / "k8s" / "values.yaml"
DOCKERFILE = REPO / "deploy" / "k8s" / "Dockerfile"
TEAM_YAML = REPO / "deploy" / "team" / "dagster.yaml"
WORKSPACE = REPO / "deploy" / "team" / "workspace.yaml"


@pytest.fixture(scope="module")
def values() -> dict:
    return yaml.safe_load(VALUES.read_text())


@pytest.fixture(scope="module")
def team_yaml() -> dict:
    return yaml.safe_load(TEAM_YAML.read_text())


def _pins() -> dict[str, str]:
    pins = {}
    for line in (REPO / "constraints.txt").read_text().splitlines():
        name, sep, version = line.partition("==")
        if sep:
            pins[name.strip().lower()] = version.strip()
    return pins


def _deployment(values: dict) -> dict:
    (deployment,) = values["dagster-user-deployments"]["deployments"]
    return deployment


def _grpc_module(args: list[str]) -> str:
    flag = next(i for i, a in enumerate(args) if a in ("-m", "--module-name"))
    return args[flag + 1]


def _names_read_by_nous() -> set[str]:
    """Environment variables Nous reads: settings.py, the shared paths, and the team code location."""
    sources = [REPO / "nous_assets" / "settings.py", REPO / "resolver" / "paths.py"]
    names = {n for path in sources for n in re.findall(r"\bNOUS_[A-Z0-9_]+\b", path.read_text())}
    return names | set(TEAM_ENV_VARS)


def test_values_have_the_chart_parts_a_team_needs(values):
    for key in ("dagsterWebserver", "dagsterDaemon", "dagster-user-deployments", "runLauncher", "postgresql"):
        assert key in values, key
    assert values["dagster-user-deployments"]["enabled"] is True
    assert values["dagsterDaemon"]["enabled"] is True
    assert values["runLauncher"]["type"] == "K8sRunLauncher" and "k8sRunLauncher" in values["runLauncher"]["config"]
    assert values["dagsterDaemon"]["runCoordinator"]["type"] == "QueuedRunCoordinator"


def test_the_code_location_is_the_team_definitions_module(values):
    deployment = _deployment(values)
    module = _grpc_module(deployment["dagsterApiGrpcArgs"])
    assert module == _grpc_module(["-m", yaml.safe_load(WORKSPACE.read_text())["load_from"][0]["python_module"]
                                   ["module_name"]])  # fmt: skip
    defs = importlib.import_module(module).defs
    assert isinstance(defs, dg.Definitions)
    assert defs.resolve_job_def("team_job") is not None
    assert deployment["image"]["repository"] and deployment["image"]["tag"]
    assert deployment["port"] == 3030
    assert deployment["includeConfigInLaunchedRuns"]["enabled"] is True  # run pods see the env and volumes


def test_images_and_libraries_match_the_pinned_dagster(values):
    pins = _pins()
    for part in ("dagsterWebserver", "dagsterDaemon"):
        assert str(values[part]["image"]["tag"]) == pins["dagster"], part
    text = DOCKERFILE.read_text()
    assert re.search(r"dagster-k8s==" + re.escape(pins["dagster-postgres"]), text)  # same library release
    assert "-c constraints.txt" in text and '".[team]"' in text
    team_extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["team"]
    assert any(dep.startswith("dagster-postgres") for dep in team_extra)
    python = re.search(r"^FROM python:(\d+\.\d+)", text, re.MULTILINE)
    assert python and tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"] == (
        f">={python.group(1)}"
    )


def test_environment_names_are_the_ones_nous_reads_and_secrets_are_not_literal(values):
    deployment = _deployment(values)
    env = deployment["env"]
    unknown = {name for name in env if name.startswith("NOUS_")} - _names_read_by_nous()
    assert not unknown, f"values.yaml sets variables Nous never reads: {sorted(unknown)}"
    assert set(TEAM_ENV_VARS) <= set(env)
    assert not [n for n in env if re.search(r"PASSWORD|API_KEY|DSN|TOKEN|SECRET", n)]  # from envSecrets only
    assert deployment["envSecrets"] and values["postgresql"]["postgresqlPassword"] == ""
    secret_env = {"NOUS_PG_DSN": "postgresql://nous@db.internal/nous", "NOUS_OPENAI_API_KEY": "k"}
    settings = load_settings({**env, **secret_env, "HOME": "/home/nous"})
    assert settings.backend == "postgres" and settings.extractor == env["NOUS_EXTRACTOR"]
    mounts = {m["mountPath"] for m in deployment["volumeMounts"]}
    for name in TEAM_ENV_VARS:
        assert any(env[name].startswith(m) for m in mounts), f"{name} is not on the mounted volume"


def _rendered_instance(values: dict) -> dict:
    """The instance settings the chart renders from the values (storage, coordinator, launcher, extras)."""
    pg = values["postgresql"]
    db = {"username": pg["postgresqlUsername"], "password": {"env": "DAGSTER_PG_PASSWORD"},
          "hostname": pg["postgresqlHost"], "db_name": pg["postgresqlDatabase"], "port": pg["service"]["port"],
          "scheme": pg["postgresqlScheme"]}  # fmt: skip
    monitoring = values["dagsterDaemon"]["runMonitoring"]
    return {
        "storage": {"postgres": {"postgres_db": db}},
        "run_coordinator": {"module": "dagster.core.run_coordinator", "class": "QueuedRunCoordinator"},
        "run_launcher": {"module": "dagster_k8s", "class": "K8sRunLauncher", "config": {"load_incluster_config": True}},
        "run_monitoring": {"enabled": monitoring["enabled"],
                           "start_timeout_seconds": monitoring["startTimeoutSeconds"],
                           "free_slots_after_run_end_seconds": monitoring["freeSlotsAfterRunEndSeconds"]},
        **values["additionalInstanceConfig"],
    }  # fmt: skip


def test_the_instance_the_chart_renders_is_valid_and_carries_the_team_policy(values, team_yaml, tmp_path):
    rendered = _rendered_instance(values)
    assert values["dagsterDaemon"]["runCoordinator"]["config"]["queuedRunCoordinator"] == {}  # limits in one place
    (tmp_path / "dagster.yaml").write_text(yaml.safe_dump(rendered))
    config, _ = dagster_instance_config(str(tmp_path))  # Dagster's own schema and conflict checks
    assert config["concurrency"] == team_yaml["concurrency"]  # the same queue limits and pools as the VM setup
    assert rendered["storage"]["postgres"]["postgres_db"]["scheme"] == team_yaml["run_storage"]["config"][
        "postgres_db"]["scheme"]  # fmt: skip
    monitoring = {k: v for k, v in team_yaml["run_monitoring"].items()}
    assert rendered["run_monitoring"] == monitoring


def test_team_yaml_is_a_valid_instance_with_credentials_only_from_the_environment(team_yaml, tmp_path):
    (tmp_path / "dagster.yaml").write_text(TEAM_YAML.read_text())
    config, _ = dagster_instance_config(str(tmp_path))
    for part, module in (("run_storage", "dagster_postgres.run_storage"), ("event_log_storage", "dagster_postgres"
                         ".event_log"), ("schedule_storage", "dagster_postgres.schedule_storage")):  # fmt: skip
        assert config[part]["module"] == module
        db = team_yaml[part]["config"]["postgres_db"]
        for field in ("hostname", "port", "username", "password", "db_name"):
            assert set(db[field]) == {"env"}, f"{part}.{field} must come from an environment variable"
    limits = {e["key"]: e["limit"] for e in config["concurrency"]["runs"]["tag_concurrency_limits"]}
    assert limits[DEVELOPER_TAG] == 1
    assert config["concurrency"]["pools"]["default_limit"] >= 1
    assert LLM_POOL in TEAM_YAML.read_text()  # the comment that says how to change the pool's own limit

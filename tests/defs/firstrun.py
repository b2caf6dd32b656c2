"""Claude Code history written like real transcripts, and the few things the Dagster daemon does with the
sensor's run requests (queue a run, start it), for tests that evaluate the sensor against a real instance."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from pathlib import Path

import dagster as dg
from dagster._core.remote_origin import InProcessCodeLocationOrigin, RemoteJobOrigin, RemoteRepositoryOrigin
from dagster._core.types.loadable_target_origin import LoadableTargetOrigin

from nous_assets.definitions import defs
from nous_assets.defs.resources import NousResource
from nous_assets.defs.runs import covered_days
from nous_assets.defs.sensors import transcript_reconcile, transcript_watch

PROJECT = "-home-dev-widget"
TOOLS = ["ruff", "mypy", "pytest", "black", "isort", "bandit", "vulture", "pylint", "coverage"]
AREAS = ["billing", "search", "auth", "export", "import", "reports", "settings", "alerts", "audit"]


def _record(kind: str, session: str, ts: str, **extra) -> dict:
    """A Claude Code JSONL record with the envelope fields real transcripts carry."""
    return {
        "parentUuid": None,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/widget",
        "sessionId": session,
        "version": "2.1.38",
        "gitBranch": "main",
        "type": kind,
        "uuid": str(uuid.uuid4()),
        "timestamp": ts,
        **extra,
    }


def user_line(session: str, ts: str, text: str) -> str:
    return json.dumps(_record("user", session, ts, message={"role": "user", "content": text}))


def assistant_line(session: str, ts: str, text: str) -> str:
    message = {
        "model": "claude-opus-4-6",
        "id": f"msg_{uuid.uuid4().hex[:24]}",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 3, "output_tokens": 20},
    }
    return json.dumps(_record("assistant", session, ts, message=message, requestId=f"req_{uuid.uuid4().hex[:20]}"))


def exchange(session: str, day: str, n: int, minute: int = 0) -> list[str]:
    """A user preference and the assistant's answer, at ``day`` 10:``minute``."""
    tool, area = TOOLS[n % len(TOOLS)], AREAS[(n * 5 + minute) % len(AREAS)]
    ts = f"{day}T10:{minute:02d}:00.000Z"
    ts2 = f"{day}T10:{minute:02d}:30.000Z"
    return [
        user_line(session, ts, f"From now on always run {tool} before committing any change to the {area} module."),
        assistant_line(session, ts2, f"Understood: I will run {tool} before every commit that touches {area}."),
    ]


@dataclass
class History:
    """Session files under a Claude-style projects tree, one per day of ``days``."""

    root: Path
    days: list[str]
    files: dict[str, Path] = field(default_factory=dict)  # day -> its session file

    @property
    def glob(self) -> str:
        return str(self.root / "**" / "*.jsonl")

    def write_day(self, day: str, n: int) -> Path:
        folder = self.root / PROJECT
        folder.mkdir(parents=True, exist_ok=True)
        session = str(uuid.uuid4())
        path = folder / f"{session}.jsonl"
        path.write_text("\n".join(exchange(session, day, n) + exchange(session, day, n + 1, minute=20)) + "\n")
        self.files[day] = path
        return path

    def append(self, day: str, n: int, minute: int) -> None:
        """The session of ``day`` gains an exchange dated ``day``."""
        path = self.files[day]
        session = path.stem
        with path.open("a") as fh:
            fh.write("\n".join(exchange(session, day, n, minute=minute)) + "\n")


def recent_days(count: int, today: date | None = None) -> list[str]:
    today = today or datetime.now(UTC).date()
    return [(today - timedelta(days=count - 1 - i)).isoformat() for i in range(count)]


# ------------------------------------------------------------------------------ what the daemon would do


def watch(instance: dg.DagsterInstance) -> dg.SensorResult:
    """One sensor tick that scans (no cursor: the last scan is long ago)."""
    return transcript_watch(dg.build_sensor_context(instance=instance, resources={"nous": NousResource()}))


def reconcile(instance: dg.DagsterInstance):
    """The hourly reconcile schedule, evaluated now."""
    context = dg.build_schedule_context(
        instance=instance, resources={"nous": NousResource()}, scheduled_execution_time=datetime.now(UTC)
    )
    return transcript_reconcile(context)


_ORIGIN = RemoteJobOrigin(
    repository_origin=RemoteRepositoryOrigin(
        code_location_origin=InProcessCodeLocationOrigin(
            loadable_target_origin=LoadableTargetOrigin(module_name="nous_assets.definitions")
        ),
        repository_name="__repository__",
    ),
    job_name="ingest_job",
)


def submit(instance: dg.DagsterInstance, tags: dict[str, str], status=dg.DagsterRunStatus.QUEUED) -> str:
    """What the daemon does with a run request under the QueuedRunCoordinator: a queued run with its tags."""
    run = dg.DagsterRun(
        job_name="ingest_job", run_id=str(uuid.uuid4()), status=status, tags=tags, remote_job_origin=_ORIGIN
    )
    instance.add_run(run)
    return run.run_id


def request_tags(request: dg.RunRequest, **extra: str) -> dict[str, str]:
    """The tags a run launched for ``request`` carries."""
    return {**request.tags, "dagster/partition": request.partition_key, **extra}


def dequeue(instance: dg.DagsterInstance, run_id: str) -> dg.ExecuteInProcessResult:
    """The queued run starts: the same run id executes ingest_job for its day in this process."""
    run = instance.get_run_by_id(run_id)
    instance.delete_run(run_id)
    job = defs.resolve_job_def("ingest_job")
    return job.execute_in_process(
        instance=instance, partition_key=run.tags["dagster/partition"], run_id=run_id, tags=dict(run.tags)
    )


def runs_per_day(instance: dg.DagsterInstance) -> dict[str, int]:
    """How many runs of ingest_job (any status) cover each day."""
    counts: dict[str, int] = {}
    for run in instance.get_runs(filters=dg.RunsFilter(job_name="ingest_job")):
        for day in covered_days(run.tags):
            counts[day] = counts.get(day, 0) + 1
    return counts

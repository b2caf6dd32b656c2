"""End-to-end extraction paths: secrets never persisted, bad LLM output dead-lettered, corrections weaken
related memories, legacy import, and re-extraction with compensating events."""

from __future__ import annotations

import base64
import json
import random
import string
import uuid
from pathlib import Path

import polars as pl
import pytest

from nous_assets.capture.legacy import migrate_legacy
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.worker import DrainStats, build_events
from nous_assets.ids import idempotency_key, learning_id_for, learning_index
from nous_assets.store.sqlite import queue
from nous_assets.store.sqlite.events import SqliteEventStore

pytestmark = pytest.mark.slow

RNG = random.Random(42)
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(RNG.choice(alphabet) for _ in range(n))


def fake_secrets() -> dict[str, str]:
    """22 kinds of realistically shaped (fake) credentials, assembled at run time."""
    jwt = (
        ".".join(
            base64.urlsafe_b64encode(json.dumps(p).encode()).decode().rstrip("=")
            for p in ({"alg": "HS256", "typ": "JWT"}, {"sub": rand(10), "iat": 1700000000})
        )
        + "."
        + rand(43)
    )
    pem_body = "\n".join(rand(64, ALNUM + "+/") for _ in range(4))
    return {
        "anthropic": "sk-ant-api03-" + rand(90, ALNUM + "-_") + "AA",
        "openai": "sk-proj-" + rand(60),
        "aws_key_id": "AKIA" + rand(16, string.ascii_uppercase + string.digits),
        "aws_secret": rand(40, ALNUM + "+/"),
        "github": "ghp_" + rand(36),
        "github_pat": "github_pat_" + rand(22) + "_" + rand(59),
        "gitlab": "glpat-" + rand(20, ALNUM + "-_"),
        "slack": "xoxb-" + rand(11, string.digits) + "-" + rand(12, string.digits) + "-" + rand(24),
        "stripe": "sk_live_" + rand(24),
        "google": "AIza" + rand(35, ALNUM + "-_"),
        "npm": "npm_" + rand(36),
        "pypi": "pypi-AgEIcHlwaS5vcmc" + rand(60, ALNUM + "-_"),
        "sendgrid": "SG." + rand(22, ALNUM + "-_") + "." + rand(43, ALNUM + "-_"),
        "digitalocean": "dop_v1_" + rand(64, "0123456789abcdef"),
        "huggingface": "hf_" + rand(34),
        "jwt": jwt,
        "pem": f"-----BEGIN RSA PRIVATE KEY-----\n{pem_body}\n-----END RSA PRIVATE KEY-----",
        "url_password": "Pw" + rand(14),
        "postgres_password": "pg" + rand(16),
        "assignment_password": "Zq" + rand(18),
        "bearer": rand(40),
        "twilio": "SK" + rand(32, "0123456789abcdef"),
    }


def _record(kind: str, content, ts: str, session: str, parent: str | None = None, **extra) -> dict:
    return {
        "parentUuid": parent,
        "isSidechain": False,
        "userType": "external",
        "cwd": "/home/dev/app",
        "sessionId": session,
        "version": "2.1.39",
        "gitBranch": "main",
        "type": kind,
        "message": {
            "role": "user" if kind == "user" else "assistant",
            "content": content,
            **({"id": "msg_" + rand(10), "model": "claude-opus-4-6"} if kind == "assistant" else {}),
        },
        "uuid": str(uuid.uuid4()),
        "timestamp": ts,
        **extra,
    }


def test_secrets_never_reach_cortex_db_or_the_lake(tmp_path, pipeline_factory):
    s = fake_secrets()
    session = str(uuid.uuid4())
    user_text = (
        f"Always use this key for the integration tests: export ANTHROPIC_API_KEY={s['anthropic']} and never "
        f"commit it. Our DB is postgres://app:{s['postgres_password']}@db.internal:5432/app . "
        f"<private>my stripe key {s['stripe']} is secret</private> also OPENAI_API_KEY={s['openai']}"
    )
    env_dump = "\n".join(
        [
            f"AWS_ACCESS_KEY_ID={s['aws_key_id']}",
            f"AWS_SECRET_ACCESS_KEY={s['aws_secret']}",
            f"GITHUB_TOKEN={s['github']}",
            f"GH_PAT={s['github_pat']}",
            f"GITLAB_TOKEN={s['gitlab']}",
            f"SLACK_BOT_TOKEN={s['slack']}",
            f"GOOGLE_API_KEY={s['google']}",
            f"NPM_TOKEN={s['npm']}",
            f"PYPI_TOKEN={s['pypi']}",
            f"SENDGRID_API_KEY={s['sendgrid']}",
            f"DO_TOKEN={s['digitalocean']}",
            f"HF_TOKEN={s['huggingface']}",
            f"SESSION_JWT={s['jwt']}",
            f"TWILIO_API_KEY={s['twilio']}",
            f"DATABASE_PASSWORD={s['assignment_password']}",
            f"REDIS_URL=redis://default:{s['url_password']}@cache:6379/0",
        ]
    )
    lines = [
        _record("user", user_text, "2026-03-01T10:00:00.000Z", session),
        _record(
            "assistant",
            [
                {"type": "thinking", "thinking": f"the key {s['openai']} is in env", "signature": "x"},
                {
                    "type": "tool_use",
                    "id": "toolu_1",
                    "name": "Bash",
                    "input": {"command": f"curl -H 'Authorization: Bearer {s['bearer']}' https://api"},
                },
            ],
            "2026-03-01T10:00:01.000Z",
            session,
        ),
        _record(
            "user",
            [{"type": "tool_result", "tool_use_id": "toolu_1", "content": env_dump}],
            "2026-03-01T10:00:02.000Z",
            session,
        ),
        _record("user", f"Write the deploy key to ~/.ssh/id_rsa:\n{s['pem']}", "2026-03-01T10:00:03.000Z", session),
    ]
    projects = tmp_path / "home" / ".claude" / "projects" / "-home-dev-app"
    projects.mkdir(parents=True)
    (projects / f"{session}.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    pipe = pipeline_factory(str(projects.parent / "**" / "*.jsonl"))
    pipe.run(["2026-03-01"])
    assert pipe.count("SELECT count(*) FROM memories") >= 1  # the rule was still learned, without the key

    stored = b""
    for path in Path(pipe.env["NOUS_DATA_DIR"]).rglob("*"):
        if path.is_file() and "cortex.db" in path.name:
            stored += path.read_bytes()
    lake_text = ""
    for path in Path(pipe.env["NOUS_DATA_DIR"], "lake").rglob("*.parquet"):
        frame = pl.read_parquet(path)
        lake_text += json.dumps(frame.to_dicts(), default=str)
    assert lake_text and stored
    leaked = [
        name
        for name, secret in s.items()
        if secret.encode() in stored
        or secret in lake_text
        or any(line.encode() in stored or line in lake_text for line in secret.splitlines()[1:2])
    ]
    assert leaked == []
    assert "[REDACTED:" in lake_text


def _claude_stub(tmp_path: Path, output: str) -> Path:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    stub = bin_dir / "claude"
    stub.write_text(f"#!/bin/sh\ncat > /dev/null\nprintf '%s' '{output}'\n")
    stub.chmod(0o755)
    return bin_dir


def test_malformed_llm_output_is_dead_lettered_and_never_written(
    tmp_path, shared_corpus, pipeline_factory, monkeypatch
):
    projects = tmp_path / "home" / ".claude" / "projects" / "spotter"
    projects.mkdir(parents=True)
    (projects / "short.jsonl").write_bytes((shared_corpus / "spotter" / "short.jsonl").read_bytes())
    config = tmp_path / "home" / ".claude" / "nous" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"extractor": "claude", "thresholds": {"queue_backoff_base_seconds": 0}}))
    bin_dir = _claude_stub(tmp_path, '{"learnings": [{"content": "x"}]} trailing garbage')
    pipe = pipeline_factory(str(projects.parent / "**" / "*.jsonl"))
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path('/usr/bin')}:{Path('/bin')}")
    pipe.run(["2026-02-10"])
    conn = pipe.conn()
    items = queue.items(conn)
    cursor = conn.execute("SELECT count(*) FROM ingest_cursors").fetchone()[0]
    conn.close()
    assert items and all(i.status == "dead_letter" and i.retry_count == 3 for i in items)
    assert all("ExtractionSchemaError" in (i.last_error or "") for i in items)
    assert pipe.count("SELECT count(*) FROM learning_events") == 0
    assert cursor == 0  # failed work never advances the cursor


def test_correction_in_a_later_session_weakens_the_related_memory(tmp_path, pipeline_factory):
    projects = tmp_path / "home" / ".claude" / "projects" / "-home-dev-app"
    projects.mkdir(parents=True)
    s1, s2 = str(uuid.uuid4()), str(uuid.uuid4())
    first = [
        _record(
            "user",
            "Always mock the payments gateway client in the billing tests with unittest.mock.",
            "2026-03-01T10:00:00.000Z",
            s1,
        ),
        _record(
            "assistant",
            [{"type": "text", "text": "Understood, I will mock the payments gateway client."}],
            "2026-03-01T10:00:05.000Z",
            s1,
        ),
    ]
    second = [
        _record(
            "assistant",
            [{"type": "text", "text": "I'll mock the payments gateway client in billing tests."}],
            "2026-03-05T09:00:00.000Z",
            s2,
        ),
        _record(
            "user",
            "No, that's wrong: don't mock the payments gateway client in the billing tests, use the "
            "sandbox gateway instead.",
            "2026-03-05T09:00:10.000Z",
            s2,
        ),
        _record(
            "assistant",
            [{"type": "text", "text": "You're right, switching the billing tests to the sandbox gateway."}],
            "2026-03-05T09:00:20.000Z",
            s2,
        ),
    ]
    (projects / f"{s1}.jsonl").write_text("\n".join(json.dumps(r) for r in first) + "\n")
    (projects / f"{s2}.jsonl").write_text("\n".join(json.dumps(r) for r in second) + "\n")
    pipe = pipeline_factory(str(projects.parent / "**" / "*.jsonl"))
    pipe.run(["2026-03-01"])
    before = pipe.count("SELECT reinforcement_score * 1000 FROM memories WHERE content LIKE '%mock the payments%'")
    pipe.run(["2026-03-05"])
    assert (
        pipe.count(
            "SELECT count(*) FROM learning_events WHERE event_type = 'LearningWeakened' "
            "AND json_extract(payload_json, '$.reason') = 'user_correction_historical'"
        )
        == 1
    )
    after = pipe.count("SELECT reinforcement_score * 1000 FROM memories WHERE content LIKE '%Always mock%'")
    assert after < before


def test_legacy_import_is_idempotent_and_quarantines_bad_lines(tmp_path, conn):
    engram = tmp_path / "engram.jsonl"
    engram.write_text(
        "\n".join(
            [
                json.dumps(
                    {
                        "content": "Prefer ripgrep over grep for code search",
                        "timestamp": "2025-06-01T10:00:00Z",
                        "project": "/home/dev/app",
                    }
                ),
                "{broken json",
                json.dumps({"learning": "Run the linter before pushing", "session_id": "old-1"}),
                json.dumps({"nothing": "here"}),
                json.dumps({"content": "token=ghp_" + rand(36) + " was leaked once"}),
            ]
        )
        + "\n"
    )
    report = migrate_legacy(conn, [engram])
    assert report.imported == 3 and len(report.quarantined) == 2
    assert {q["line"] for q in report.quarantined} == {2, 4}
    events = list(SqliteEventStore(conn).replay(0))
    assert all(e.schema_version == 1 and e.payload["extractor_version"] == "legacy-v1" for e in events)
    assert {e.project_id for e in events} == {"-home-dev-app", "legacy-migration"}
    assert not any("ghp_" in e.payload["content"] for e in events)
    again = migrate_legacy(conn, [engram])
    assert again.imported == 0 and again.already_present == 3


def test_reextraction_supersedes_instead_of_duplicating(conn, store):
    from nous_assets.capture.parser import Turn

    turn = Turn(
        uuid="u1",
        uuids=("u1",),
        parent_uuid=None,
        session_id="s",
        project_id="p",
        role="user",
        kind="message",
        timestamp="2026-03-01T10:00:00.000000Z",
        text="always use uv",
        thinking="",
        tool_uses=(),
        tool_results=(),
        message_id=None,
        request_id=None,
        model=None,
        is_sidechain=False,
        agent_id=None,
        is_meta=False,
        is_compact_summary=False,
        cwd=None,
        git_branch=None,
        version=None,
        source_path="/x.jsonl",
        byte_start=0,
        byte_end=10,
        line_offsets=(0,),
    )
    batch = SessionBatch("p", "s", "2026-03-01", (turn,))
    record = {
        "content": "Always use uv for Python packaging",
        "type": "learning",
        "kind": "preference",
        "domain": "python",
        "scope": "global",
        "concepts": ["uv", "python", "packaging"],
        "edges": [],
        "valid_from": None,
        "valid_until": None,
        "temporal_confidence": "high",
        "anchor_uuid": "u1",
        "provenance": {"session_id": "s", "source_path": "/x.jsonl", "uuids": ["u1"], "line_offsets": [0]},
    }
    for version, reextract in (("v1", False), ("v2", False), ("v2", True), ("v2", True)):
        events, processed = build_events(
            conn,
            batch,
            [record],
            extractor_version=version,
            source="historical_backfill",
            reextract=reextract,
            stats=DrainStats(),
        )
        results = store.append_many(events)
        for index, _key in processed:
            queue.mark_processed(conn, "p", "s", index, results[0].event.event_id, version)
    kinds = [e.event_type for e in store.replay(0)]
    assert kinds == ["LearningExtracted", "LearningExtracted", "LearningSuperseded"]
    index = learning_index("u1", "preference")
    old = learning_id_for(idempotency_key("p", "s", index, "v1"))
    superseded = [e for e in store.replay(0) if e.event_type == "LearningSuperseded"][0]
    assert superseded.learning_id == old
    assert superseded.payload["superseded_by"] == learning_id_for(idempotency_key("p", "s", index, "v2"))


def test_error_messages_quoting_model_output_are_redacted(tmp_path, shared_corpus, pipeline_factory, monkeypatch):
    """A failing item's error quotes the model's reply; the queue (and the Dagster log) never keep a secret."""
    projects = tmp_path / "home" / ".claude" / "projects" / "spotter"
    projects.mkdir(parents=True)
    (projects / "short.jsonl").write_bytes((shared_corpus / "spotter" / "short.jsonl").read_bytes())
    config = tmp_path / "home" / ".claude" / "nous" / "config.json"
    config.parent.mkdir(parents=True)
    config.write_text(json.dumps({"extractor": "claude", "thresholds": {"queue_backoff_base_seconds": 0}}))
    rng = random.Random(3)
    token = "ghp_" + "".join(rng.choice(string.ascii_letters + string.digits) for _ in range(36))
    bin_dir = _claude_stub(tmp_path, f"Sure! I used the token {token} to look around.")
    pipe = pipeline_factory(str(projects.parent / "**" / "*.jsonl"))
    monkeypatch.setenv("PATH", f"{bin_dir}:{Path('/usr/bin')}:{Path('/bin')}")
    pipe.run(["2026-02-10"])
    conn = pipe.conn()
    items = queue.items(conn)
    conn.close()
    assert items and all("not a JSON object" in (i.last_error or "") for i in items)
    assert all(token not in (i.last_error or "") and "[REDACTED:github_token]" in i.last_error for i in items)

"""The `nous` command end to end: help, init, status, memories (bi-temporal), replay --verify, errors."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.cli import build_parser, main
from nous_assets.store.db import LATEST_VERSION, MIGRATIONS, open_db
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore

NOUS = [sys.executable, "-m", "nous_assets.cli"]


def _run(args, env):
    return subprocess.run(
        NOUS + args, env={**env, "PATH": "/usr/bin:/bin"}, capture_output=True, text=True, timeout=120
    )


def test_every_command_has_help():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    for name, p in sub.choices.items():
        assert p.description, name
    assert "CLAUDE_CONFIG_DIR" in parser.format_help()


def test_help_runs_as_a_process(nous_env):
    out = _run(["--help"], nous_env)
    assert out.returncode == 0 and "status" in out.stdout and "replay" in out.stdout


def test_init_is_idempotent_and_status_reports_counts(nous_env, capsys):
    assert main(["init"]) == 0
    assert f"applied migrations {[version for version, _, _ in MIGRATIONS]}" in capsys.readouterr().out
    assert main(["init"]) == 0
    assert "already up to date" in capsys.readouterr().out
    assert main(["status", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["schema_version"] == LATEST_VERSION and report["counts"]["learning_events"] == 0
    assert report["db_path"] == str(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    assert main(["status"]) == 0
    text = capsys.readouterr().out
    assert f"schema version:  {LATEST_VERSION}" in text and "learning_events" in text


def test_status_before_init_says_so(nous_env, capsys):
    assert main(["status"]) == 0
    assert "not initialised" in capsys.readouterr().out


def test_commands_on_missing_database_fail_cleanly(nous_env, capsys):
    assert main(["memories"]) == 1
    assert "run `nous init` first" in capsys.readouterr().err


def test_malformed_config_is_one_clear_line_not_a_traceback(nous_env):
    cfg = Path(nous_env["CLAUDE_CONFIG_DIR"]) / "nous" / "config.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text('{"thresholds": {"archive_below": "x"}}')
    out = _run(["status"], nous_env)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert str(cfg) in out.stderr and "thresholds.archive_below" in out.stderr


def test_config_shows_settings_but_never_the_api_key(nous_env, monkeypatch, capsys):
    monkeypatch.setenv("NOUS_OPENAI_API_KEY", "sk-test-0123456789abcdefSECRET")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    shown = json.loads(out)
    assert shown["openai_api_key"] == "(set)" and "SECRET" not in out and "0123456789" not in out
    assert shown["data_dir"] == nous_env["NOUS_DATA_DIR"]


def test_newer_schema_is_refused(nous_env, capsys):
    assert main(["init"]) == 0
    db = Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db"
    import sqlite3

    raw = sqlite3.connect(db)
    raw.execute("PRAGMA user_version = 99")
    raw.close()
    capsys.readouterr()
    assert main(["memories"]) == 1
    assert "newer than this build" in capsys.readouterr().err


def test_corrupt_database_file_is_reported(nous_env, capsys):
    db = Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db"
    db.parent.mkdir(parents=True)
    db.write_bytes(b"this is not sqlite" * 100)
    assert main(["memories"]) == 1
    assert "not a usable SQLite database" in capsys.readouterr().err


@pytest.fixture
def populated(nous_env):
    assert main(["init"]) == 0
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    store = SqliteEventStore(conn)

    def ev(kind, lid, payload, key, tx, **kw):
        return LearningEvent(kind, lid, payload, "s1", "proj", "user_review", key, transaction_time=tx, **kw)

    store.append_many(
        [
            ev(
                "LearningExtracted",
                "old",
                {"content": "deploys use fabric", "extractor_version": "t", "concepts": ["deploy"], "edges": []},
                "k1",
                "2026-01-01T00:00:00Z",
                valid_from="2025-06-01",
            ),
            ev(
                "LearningExtracted",
                "new",
                {"content": "deploys use ansible", "extractor_version": "t", "concepts": ["deploy"], "edges": []},
                "k2",
                "2026-03-01T00:00:00Z",
                valid_from="2026-03-01",
            ),
            ev(
                "LearningSuperseded",
                "old",
                {"superseded_by": "new"},
                "k3",
                "2026-03-01T00:00:01Z",
                valid_until="2026-03-01",
            ),
        ]
    )
    conn.close()
    return nous_env


def test_memories_as_of_and_as_at(populated, capsys):
    assert main(["project"]) == 0
    capsys.readouterr()

    def listed(*args):
        assert main(["memories", "--json", *args]) == 0
        return sorted(m["learning_id"] for m in json.loads(capsys.readouterr().out))

    assert listed() == ["new", "old"]
    assert listed("--as-at", "2026-06-01") == ["new"]
    assert listed("--as-at", "2025-12-01") == ["old"]
    assert listed("--as-of", "2026-02-01") == ["old"]
    assert listed("--as-of", "2026-02-01", "--as-at", "2026-06-01") == ["old"]  # not yet known to be superseded
    assert main(["memories"]) == 0
    statuses = re.findall(r"^#\d+ \[\w+/[\w-]+ · (\w+)\] score=", capsys.readouterr().out, re.M)
    assert sorted(statuses) == ["observed", "superseded"]  # each line says how far its evidence backs it
    assert main(["memories", "--as-at", "yesterday-ish"]) == 1
    assert "not an ISO-8601 timestamp" in capsys.readouterr().err


def test_replay_verify_reports_ok_then_detects_tampering(populated, capsys):
    assert main(["project"]) == 0
    assert main(["replay", "--verify"]) == 0
    assert "OK: the live projection equals a full replay" in capsys.readouterr().out
    conn = open_db(Path(populated["NOUS_DATA_DIR"]) / "cortex.db")
    conn.execute("UPDATE memories SET reinforcement_score = 9 WHERE learning_id = 'new'")
    conn.close()
    assert main(["replay", "--verify"]) == 1
    out = capsys.readouterr().out
    assert "MISMATCH" in out and "reinforcement_score: live=9.0 replay=0.5" in out
    assert main(["replay"]) == 0  # full rebuild repairs the projection
    assert main(["replay", "--verify"]) == 0


def test_project_option_takes_an_id_or_the_projects_directory(populated, capsys, tmp_path, monkeypatch):
    from nous_assets.cli import project_arg
    from resolver.project import project_id_from_cwd

    assert main(["project"]) == 0
    capsys.readouterr()
    assert main(["memories", "--json", "--project", "proj"]) == 0
    assert len(json.loads(capsys.readouterr().out)) == 2
    app = tmp_path / "app"
    app.mkdir()
    monkeypatch.chdir(app)
    assert main(["memories", "--json", "--project", "."]) == 0  # another project: nothing of "proj"
    assert json.loads(capsys.readouterr().out) == []
    slug = project_id_from_cwd(str(app))
    assert slug.startswith("-") and project_arg(".") == slug and project_arg("proj") == "proj"
    assert main(["memories", "--json", f"--project={slug}"]) == 0
    assert json.loads(capsys.readouterr().out) == []

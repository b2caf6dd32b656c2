"""Installing Nous's hooks into Claude Code's settings.json: merge, idempotence, round trip, refusal."""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nous_assets.errors import ConfigError
from nous_assets.hooks import (
    LAUNCHER,
    MARKER,
    SESSION_START_MATCHER,
    command_parts,
    default_settings_path,
    install_hooks,
    installed_hooks,
    is_ours,
    resolver_command,
    resolver_version,
    uninstall_hooks,
)
from resolver.paths import parse_options

PYTHON = "/opt/venvs/nous/bin/python"
RUN = f"-I -S {LAUNCHER}"  # what follows the interpreter in every command we write (the path has no space here)

ORIGINAL = {
    "model": "sonnet",
    "permissions": {"allow": ["Bash(git status)"], "deny": []},
    "env": {"FOO": "bar"},
    "hooks": {
        "SessionStart": [
            {"matcher": "startup", "hooks": [{"type": "command", "command": "echo hello", "timeout": 3}]},
        ],
        "PreToolUse": [
            {"matcher": "Bash", "hooks": [{"type": "command", "command": "/usr/local/bin/guard.sh"}]},
        ],
        "Stop": [{"hooks": [{"type": "command", "command": "say done"}]}],
    },
}


@pytest.fixture
def settings(tmp_path: Path) -> Path:
    path = tmp_path / "claude" / "settings.json"
    path.parent.mkdir()
    path.write_text(json.dumps(ORIGINAL, indent=2))
    return path


def ours(data: dict) -> dict[str, list[dict]]:
    """event -> our entries (with their group's matcher)."""
    found: dict[str, list[dict]] = {}
    for event, groups in data.get("hooks", {}).items():
        for group in groups:
            for entry in group.get("hooks", []):
                if is_ours(entry):
                    found.setdefault(event, []).append({**entry, "matcher": group.get("matcher")})
    return found


def others(data: dict) -> dict[str, list]:
    """event -> every entry that is not ours, with its matcher, in order."""
    found = {
        event: [(g.get("matcher"), e) for g in groups for e in g.get("hooks", []) if not is_ours(e)]
        for event, groups in data.get("hooks", {}).items()
    }
    return {event: entries for event, entries in found.items() if entries}


def test_install_merges_and_is_idempotent(settings: Path) -> None:
    report = install_hooks(settings, PYTHON)
    assert sorted(report.added) == ["PreCompact", "SessionStart", "Stop"]
    assert report.backup_path is not None and json.loads(report.backup_path.read_text()) == ORIGINAL
    assert report.backup_path.name.startswith("settings.json.bak-")

    data = json.loads(settings.read_text())
    assert {k: v for k, v in data.items() if k != "hooks"} == {k: v for k, v in ORIGINAL.items() if k != "hooks"}
    assert others(data) == others(ORIGINAL)
    installed = ours(data)
    assert installed == {
        "SessionStart": [
            {
                "type": "command",
                "command": f"{PYTHON} {RUN} session-start",
                "timeout": 5,
                "matcher": "startup|resume|clear|compact|fork",
            }
        ],
        "Stop": [{"type": "command", "command": f"{PYTHON} {RUN} stop", "timeout": 2, "matcher": None}],
        "PreCompact": [{"type": "command", "command": f"{PYTHON} {RUN} pre-compact", "timeout": 2, "matcher": None}],
    }
    for entries in installed.values():
        assert all(isinstance(e["timeout"], int) and 1 <= e["timeout"] <= 10 for e in entries)  # seconds, not ms

    again = install_hooks(settings, PYTHON)
    assert not again.changed and sorted(again.unchanged) == ["PreCompact", "SessionStart", "Stop"]
    assert again.backup_path is None
    assert json.loads(settings.read_text()) == data
    assert len(list(settings.parent.glob("settings.json.bak-*"))) == 1


def test_reinstall_updates_a_moved_interpreter_in_place(settings: Path) -> None:
    install_hooks(settings, PYTHON)
    report = install_hooks(settings, "/new/venv/bin/python", with_prompt_hook=True)
    assert sorted(report.updated) == ["PreCompact", "SessionStart", "Stop"] and report.added == ["UserPromptSubmit"]
    installed = ours(json.loads(settings.read_text()))
    assert {e["command"] for entries in installed.values() for e in entries} == {
        f"/new/venv/bin/python {RUN} {hook}" for hook in ("session-start", "stop", "pre-compact", "user-prompt-submit")
    }
    assert all(len(entries) == 1 for entries in installed.values())
    assert installed["UserPromptSubmit"][0]["timeout"] == 2

    report = install_hooks(settings, "/new/venv/bin/python")  # without the flag: our prompt hook goes
    assert report.removed == ["UserPromptSubmit"]
    assert "UserPromptSubmit" not in json.loads(settings.read_text())["hooks"]


def test_our_entry_sharing_a_group_with_another_hook(settings: Path) -> None:
    data = copy.deepcopy(ORIGINAL)
    data["hooks"]["Stop"][0]["hooks"].append({"type": "command", "command": "/old/python -m resolver stop"})
    settings.write_text(json.dumps(data))
    report = install_hooks(settings, PYTHON)
    assert "Stop" in report.updated
    stop_groups = json.loads(settings.read_text())["hooks"]["Stop"]
    assert stop_groups == [
        {
            "hooks": [
                {"type": "command", "command": "say done"},
                {"type": "command", "command": f"{PYTHON} {RUN} stop", "timeout": 2},
            ]
        }
    ]
    assert uninstall_hooks(settings) == 3
    assert json.loads(settings.read_text())["hooks"]["Stop"] == ORIGINAL["hooks"]["Stop"]


def test_uninstall_restores_the_original(settings: Path) -> None:
    install_hooks(settings, PYTHON, with_prompt_hook=True)
    assert uninstall_hooks(settings) == 4
    assert json.loads(settings.read_text()) == ORIGINAL
    assert uninstall_hooks(settings) == 0


def test_install_into_a_missing_file_and_back(tmp_path: Path) -> None:
    path = tmp_path / "project" / ".claude" / "settings.json"
    report = install_hooks(path, PYTHON)
    assert report.backup_path is None and len(report.added) == 3
    assert set(json.loads(path.read_text())["hooks"]) == {"SessionStart", "Stop", "PreCompact"}
    assert not list(path.parent.glob(".settings.json.tmp-*"))
    assert uninstall_hooks(path) == 3
    assert json.loads(path.read_text()) == {}
    assert uninstall_hooks(tmp_path / "nowhere.json") == 0


@pytest.mark.parametrize(
    "content",
    ["{not json", "[1, 2]", '{"hooks": []}', '{"hooks": {"Stop": {"hooks": []}}}'],
    ids=["invalid-json", "not-object", "hooks-not-object", "event-not-list"],
)
def test_malformed_settings_are_refused_untouched(tmp_path: Path, content: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(ConfigError, match=str(path)):
        install_hooks(path, PYTHON)
    with pytest.raises(ConfigError, match=str(path)):
        uninstall_hooks(path)
    assert path.read_text() == content
    assert list(tmp_path.iterdir()) == [path]


def test_commands_and_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert resolver_command(PYTHON, "stop") == f"{PYTHON} {RUN} stop" and MARKER not in resolver_command(PYTHON, "stop")
    assert resolver_command("/My Apps/py/bin/python", "stop") == f"'/My Apps/py/bin/python' {RUN} stop"
    assert default_settings_path(SimpleNamespace(claude_config_dir=tmp_path / "cc")) == tmp_path / "cc/settings.json"
    assert default_settings_path(None, tmp_path / "proj") == (tmp_path / "proj").resolve() / ".claude/settings.json"
    assert resolver_command("sh", "stop").startswith("/")  # a bare name is found on PATH
    assert resolver_version(sys.executable) is not None and resolver_version(str(tmp_path / "nope")) is None
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "env-cc"))
    assert default_settings_path() == tmp_path / "env-cc" / "settings.json"


# ##### RECORDED DATA DIR


def test_install_records_the_data_dir_and_reinstall_rewrites_it(settings: Path, tmp_path: Path) -> None:
    data = tmp_path / "my data"  # a space: the command must quote it
    install_hooks(settings, PYTHON, data_dir=data, db_path=data / "cortex.db")
    commands = {e["command"] for entries in ours(json.loads(settings.read_text())).values() for e in entries}
    assert commands == {
        f"{PYTHON} {RUN} {hook} --data-dir '{data}'" for hook in ("session-start", "stop", "pre-compact")
    }
    for command in commands:
        interpreter, hook, recorded = command_parts(command)
        assert interpreter == PYTHON and hook in {"session-start", "stop", "pre-compact"}
        assert recorded == {"data_dir": str(data)}  # the default database under it is implied

    elsewhere = tmp_path / "db" / "other.db"
    report = install_hooks(settings, PYTHON, data_dir=tmp_path / "second", db_path=elsewhere)
    assert sorted(report.updated) == ["PreCompact", "SessionStart", "Stop"]
    found = installed_hooks(settings)
    assert {event: len(entries) for event, entries in found.items()} == {"SessionStart": 1, "Stop": 1, "PreCompact": 1}
    for entries in found.values():
        assert command_parts(entries[0][1]["command"])[2] == {
            "data_dir": str(tmp_path / "second"),
            "db_path": str(elsewhere),
        }
    assert uninstall_hooks(settings) == 3
    assert json.loads(settings.read_text()) == ORIGINAL
    assert installed_hooks(settings) == {}


def test_an_old_install_without_fork_is_moved_to_the_new_matcher(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    old = {"hooks": {"SessionStart": [{"matcher": "startup|resume|clear|compact", "hooks": [
        {"type": "command", "command": f"{PYTHON} -I -m resolver session-start", "timeout": 5}]}]}}  # fmt: skip
    path.write_text(json.dumps(old))
    report = install_hooks(path, PYTHON, data_dir=tmp_path / "d")
    assert "SessionStart" in report.updated
    groups = json.loads(path.read_text())["hooks"]["SessionStart"]
    assert [g["matcher"] for g in groups] == ["startup|resume|clear|compact|fork"]
    assert "fork" in SESSION_START_MATCHER.split("|")
    ((_, entry),) = installed_hooks(path)["SessionStart"]
    assert entry["command"] == f"{PYTHON} {RUN} session-start --data-dir {tmp_path / 'd'}"  # the old shape replaced


@pytest.mark.parametrize(
    "command",
    [
        "/old/py -I -m resolver stop --data-dir /d",  # the shape installs wrote before the launcher
        "/old/py -I -S /opt/nous/resolver/launch.py stop --data-dir /d",
        "'/My Apps/py' -I -S '/My Apps/nous/resolver/launch.py' stop --data-dir /d",
    ],
)
def test_both_command_shapes_are_ours_and_parse(command: str) -> None:
    assert is_ours({"command": command})
    interpreter, hook, recorded = command_parts(command)
    assert interpreter.endswith("py") and hook == "stop" and recorded == {"data_dir": "/d"}


@pytest.mark.parametrize("command", ["/x/py /home/me/myresolver/launch.py stop", "python -m resolverx stop", "echo"])
def test_other_commands_are_not_ours(command: str) -> None:
    assert not is_ours({"command": command})
    assert command_parts(command)[1] is None


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--data-dir", "/d"], {"data_dir": "/d"}),
        (["--data-dir=/d", "--db-path", "/x.db"], {"data_dir": "/d", "db_path": "/x.db"}),
        (["--future-option", "v", "--data-dir"], {}),  # unknown ignored, a value-less option dropped
        (["--db-path="], {}),
        ([], {}),
    ],
)
def test_resolver_option_parsing_never_fails(args: list[str], expected: dict) -> None:
    assert parse_options(args) == expected


def test_cli_install_records_this_data_dir_and_the_hook_needs_no_environment(
    nous_env: dict[str, str], tmp_path: Path, capsys: pytest.CaptureFixture
) -> None:
    """``nous hooks install`` under NOUS_DATA_DIR, then the installed command run the way Claude Code runs it
    (through a shell, in the project's directory) with an environment that has no NOUS_* variable at all."""
    from nous_assets.cli import main
    from nous_assets.store.db import open_db
    from resolver.project import project_id_from_cwd

    assert main(["init"]) == 0
    data_dir = Path(nous_env["NOUS_DATA_DIR"])
    project = tmp_path / "some project"
    project.mkdir()
    shadow = project / "resolver"  # a project's own resolver/ package: Claude Code runs the hook in this directory
    shadow.mkdir()
    for name in ("__init__.py", "__main__.py", "launch.py", "paths.py"):
        (shadow / name).write_text("print('SHADOWED')\n")
    conn = open_db(data_dir / "cortex.db")
    conn.execute(
        "INSERT INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, "
        "char_count, built_from_event_id, created_at) VALUES ('k', ?, 'project', '{}', '# packet for it', '[3]', 15, "
        "1, '2026-01-01T00:00:00.000000Z')",
        (project_id_from_cwd(str(project)),),
    )
    conn.close()
    assert main(["hooks", "install"]) == 0
    assert str(data_dir) in capsys.readouterr().out
    settings_file = Path(nous_env["CLAUDE_CONFIG_DIR"]) / "settings.json"
    ((_, entry),) = installed_hooks(settings_file)["SessionStart"]
    assert command_parts(entry["command"])[2] == {"data_dir": str(data_dir)}

    bare_home = tmp_path / "claude-home"
    bare_home.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_"))}
    env["HOME"] = str(bare_home)  # the default data dir would be bare_home/.local/share/nous: empty
    body = json.dumps({"session_id": "s1", "cwd": str(project), "source": "fork", "hook_event_name": "SessionStart"})
    proc = subprocess.run(entry["command"], shell=True, input=body,
                          capture_output=True, text=True, env=env, cwd=project, timeout=30)  # fmt: skip
    assert proc.returncode == 0
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == "# packet for it"
    conn = open_db(data_dir / "cortex.db")
    try:
        rows = [tuple(r) for r in conn.execute("SELECT memory_id, source FROM access_log")]
    finally:
        conn.close()
    assert rows == [(3, "session-start:fork")]
    assert not (bare_home / ".local").exists()

    # the recorded dir also wins over a stale NOUS_DATA_DIR in Claude Code's environment
    env["NOUS_DATA_DIR"] = str(tmp_path / "stale")
    proc = subprocess.run(entry["command"], shell=True, input=body.replace("s1", "s2"), capture_output=True,
                          text=True, env=env, cwd=project, timeout=30)  # fmt: skip
    assert json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] == "# packet for it"

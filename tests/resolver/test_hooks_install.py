"""Installing Nous's hooks into Claude Code's settings.json: merge, idempotence, round trip, refusal."""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from nous_assets.errors import ConfigError
from nous_assets.hooks import (
    MARKER,
    default_settings_path,
    install_hooks,
    is_ours,
    resolver_command,
    resolver_version,
    uninstall_hooks,
)

PYTHON = "/opt/venvs/nous/bin/python"

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
                "command": f"{PYTHON} -I -m resolver session-start",
                "timeout": 5,
                "matcher": "startup|resume|clear|compact",
            }
        ],
        "Stop": [{"type": "command", "command": f"{PYTHON} -I -m resolver stop", "timeout": 2, "matcher": None}],
        "PreCompact": [
            {"type": "command", "command": f"{PYTHON} -I -m resolver pre-compact", "timeout": 2, "matcher": None}
        ],
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
        f"/new/venv/bin/python -I -m resolver {hook}"
        for hook in ("session-start", "stop", "pre-compact", "user-prompt-submit")
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
                {"type": "command", "command": f"{PYTHON} -I -m resolver stop", "timeout": 2},
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
    assert MARKER in resolver_command(PYTHON, "stop")
    assert resolver_command("/My Apps/py/bin/python", "stop") == "'/My Apps/py/bin/python' -I -m resolver stop"
    assert default_settings_path(SimpleNamespace(claude_config_dir=tmp_path / "cc")) == tmp_path / "cc/settings.json"
    assert default_settings_path(None, tmp_path / "proj") == (tmp_path / "proj").resolve() / ".claude/settings.json"
    assert resolver_command("sh", "stop").startswith("/")  # a bare name is found on PATH
    assert resolver_version(sys.executable) is not None and resolver_version(str(tmp_path / "nope")) is None
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "env-cc"))
    assert default_settings_path() == tmp_path / "env-cc" / "settings.json"

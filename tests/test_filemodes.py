"""Data files and directories are private (0600/0700) after a real run, and older loose modes get tightened."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.cli import main
from nous_assets.defs.resources import NousResource  # a module-level name: Dagster resolves the annotation
from nous_assets.filemodes import loose_paths, restrict_umask, tighten

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared" / "data" / "transcripts"
SESSION = "55604662-cf2a-4331-851a-ec234028f8ca"  # spotter/short.jsonl, 2026-02-10


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def loose_umask():
    """Run as a user whose umask is the common 022 (what made every file world-readable before)."""
    previous = os.umask(0o022)
    yield
    os.umask(previous)


@pytest.mark.slow
def test_a_real_backfill_and_the_hook_create_only_private_files(
    nous_env: dict[str, str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, loose_umask, capsys
) -> None:
    if not (SHARED / "spotter" / "short.jsonl").is_file():
        pytest.skip("../shared/data/transcripts is not present")
    projects = Path(nous_env["CLAUDE_CONFIG_DIR"]) / "projects" / "-home-demo-spotter"
    projects.mkdir(parents=True)
    shutil.copyfile(SHARED / "spotter" / "short.jsonl", projects / f"{SESSION}.jsonl")
    monkeypatch.setenv("NOUS_PROJECT_GLOB", str(projects.parent / "**" / "*.jsonl"))
    monkeypatch.delenv("DAGSTER_HOME", raising=False)  # the backfill puts Dagster's storage under the data dir
    data = Path(nous_env["NOUS_DATA_DIR"])

    assert main(["backfill", "--from", "2026-02-10", "--to", "2026-02-10"]) == 0
    os.umask(0o022)  # main() restricted this process's umask; the hook must do it on its own
    hook_env = {**{k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}, "HOME": nous_env["HOME"]}
    for hook, stdin in (("stop", b"{}"), ("session-start", b"not json"), ("pre-compact", b'{"session_id": "s"}')):
        proc = subprocess.run([sys.executable, "-I", "-m", "resolver", hook, "--data-dir", str(data)], input=stdin,
                              env=hook_env, capture_output=True, timeout=30)  # fmt: skip
        assert proc.returncode == 0

    expected_files = [
        data / "cortex.db",
        next((data / "lake").rglob("*.parquet")),
        data / "dagster" / "dagster.yaml",
        next((data / "dagster").rglob("*.db")),  # Dagster's own sqlite storage
        data / "logs" / "resolver.log",
        data / "precompact.jsonl",
        data / "wake",
    ]
    for path in expected_files:
        assert mode(path) == 0o600, f"{path} is {oct(mode(path))}"
    for path in (data, data / "lake", data / "dagster", data / "logs"):
        assert mode(path) == 0o700, f"{path} is {oct(mode(path))}"
    assert loose_paths([data]) == []
    assert (data / "cortex.db-wal").exists() is False or mode(data / "cortex.db-wal") == 0o600


def test_init_tightens_what_an_older_version_left_readable(nous_env: dict[str, str], loose_umask, capsys) -> None:
    data = Path(nous_env["NOUS_DATA_DIR"])
    (data / "lake" / "transcripts").mkdir(parents=True)
    (data / "lake" / "transcripts" / "turns.parquet").write_bytes(b"x")
    (data / "precompact.jsonl").write_text("{}\n")
    os.chmod(data, 0o755)
    lake = data / "lake" / "transcripts"
    assert set(loose_paths([data])) == {data, data / "lake", lake, lake / "turns.parquet", data / "precompact.jsonl"}

    assert main(["init"]) == 0
    assert "private" in capsys.readouterr().out
    assert loose_paths([data]) == []
    assert mode(data) == 0o700 and mode(data / "cortex.db") == 0o600
    assert mode(lake / "turns.parquet") == 0o600
    assert main(["init"]) == 0
    assert "private" not in capsys.readouterr().out  # nothing left to do


def test_tighten_keeps_owner_bits_and_skips_symlinks(tmp_path: Path) -> None:
    script = tmp_path / "tool.sh"
    script.write_text("#!/bin/sh\n")
    script.chmod(0o755)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.txt"
    outside.write_text("not ours")
    outside.chmod(0o644)
    (tmp_path / "link").symlink_to(outside)
    tmp_path.chmod(0o755)
    try:
        assert tighten([tmp_path]) == 2
        assert mode(script) == 0o700 and mode(tmp_path) == 0o700
        assert mode(outside) == 0o644  # a link's target is not ours to change
    finally:
        outside.unlink()


def test_restrict_umask_only_adds_restrictions() -> None:
    previous = os.umask(0o027)
    try:
        assert restrict_umask() == 0o027
        assert os.umask(0o027) == 0o077
        os.umask(0o277)
        restrict_umask()
        assert os.umask(0o022) == 0o277  # a stricter umask stays
    finally:
        os.umask(previous)


def test_runs_dagster_launches_itself_restrict_the_umask(tmp_path: Path, loose_umask) -> None:
    """`dagster dev` started by hand does not go through the CLI: the resource sets the umask for the run."""
    import dagster as dg

    @dg.asset
    def probe(nous: NousResource) -> int:
        current = os.umask(0o022)
        os.umask(current)
        return current

    result = dg.materialize([probe], resources={"nous": NousResource(data_dir=str(tmp_path))},
                            instance=dg.DagsterInstance.ephemeral())  # fmt: skip
    assert result.output_for_node("probe") == 0o077

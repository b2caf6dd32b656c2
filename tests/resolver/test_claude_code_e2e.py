"""The real Claude Code CLI runs the hook `nous hooks install` wrote and receives the packet.

Claude Code runs its SessionStart hooks before it calls the API, so with no network (and a dummy key) it
still executes them and logs the outcome to its debug file (../shared/notes/claude-code-2026.md). The
CLI comes from the npm registry (`make setup` installs it into `.e2e/`); where npm or the platform's
binary is missing the test is skipped with that reason.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PACKET = "# Nous packet for the e2e project: run `make check` before committing"


def claude_binary() -> Path | None:
    found = sorted((REPO / ".e2e" / "node_modules" / "@anthropic-ai").glob("claude-code-*/claude"))
    return found[0] if found and os.access(found[0], os.X_OK) else None


def _wait_for(path: Path, needle: str, proc: subprocess.Popen, seconds: float) -> str:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        text = path.read_text(errors="replace") if path.exists() else ""
        if needle in text or proc.poll() is not None:
            return text
        time.sleep(0.2)
    return path.read_text(errors="replace") if path.exists() else ""


@pytest.mark.slow
@pytest.mark.skipif(claude_binary() is None, reason="Claude Code CLI not installed in .e2e/ (npm unavailable?)")
def test_real_claude_code_runs_the_installed_hook_and_gets_the_packet(nous_env: dict[str, str], tmp_path: Path):
    from nous_assets.cli import main
    from nous_assets.store.db import open_db
    from resolver.project import project_id_from_cwd

    assert main(["init"]) == 0
    project = tmp_path / "e2e project"
    project.mkdir()
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    conn.execute(
        "INSERT INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, memory_ids_json, "
        "char_count, built_from_event_id, created_at) VALUES ('k', ?, 'project', '{}', ?, '[7]', ?, 1, "
        "'2026-01-01T00:00:00.000000Z')",
        (project_id_from_cwd(str(project)), PACKET, len(PACKET)),
    )
    conn.close()
    assert main(["hooks", "install"]) == 0

    debug = tmp_path / "claude-debug.log"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_", "ANTHROPIC_"))}
    env.update(HOME=str(tmp_path / "bare-home"), CLAUDE_CONFIG_DIR=nous_env["CLAUDE_CONFIG_DIR"],
               ANTHROPIC_API_KEY="dummy", DISABLE_AUTOUPDATER="1")  # fmt: skip
    proc = subprocess.Popen([str(claude_binary()), "-p", "hi", "--debug-file", str(debug)], cwd=project, env=env,
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)  # fmt: skip
    try:
        log = _wait_for(debug, "provided additionalContext", proc, 60)
    finally:
        proc.kill()
        proc.wait(10)
    assert "SessionStart" in log and "-m resolver session-start --data-dir" in log
    assert f"provided additionalContext ({len(PACKET)} chars)" in log
    assert PACKET.replace("`", "") in log.replace("`", "")
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    try:
        rows = [tuple(r) for r in conn.execute("SELECT memory_id, source FROM access_log")]
    finally:
        conn.close()
    assert rows == [(7, "session-start:startup")]

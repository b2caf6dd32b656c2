"""``nous packet`` shows what the installed hook injects, ``nous injected`` what it did inject, and corrections
(``review reject``, ``forget``) change the next packet at once, without any ingestion.

One store for the module: a real spotter session (Claude Code 2.1.39) whose directories are moved under the test's
own folder (so the session's checkout exists here, as it would on the user's machine), backfilled by the real
assets. The hook runs as Claude Code runs it: the SessionStart command ``nous hooks install`` wrote, in a shell.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.cli.main import main

pytestmark = pytest.mark.slow

SESSION = "258c7280-ae70-4798-800f-63464d01a85d"
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def spotter(tmp_path_factory, shared_corpus, pipeline_at):
    """(pipeline, the session's checkout) after a backfill of the session moved under the test folder."""
    root = tmp_path_factory.mktemp("preview")
    checkouts = root / "checkouts"
    (checkouts / "spotter").mkdir(parents=True)
    folder = root / "home" / ".claude" / "projects" / "-home-USER-projects-spotter"
    folder.mkdir(parents=True)
    text = (shared_corpus / "spotter" / f"{SESSION}.jsonl").read_text()
    (folder / f"{SESSION}.jsonl").write_text(text.replace("/home/USER/projects/", f"{checkouts}/"))
    pipe = pipeline_at(root, str(folder.parent / "**" / "*.jsonl"))
    pipe.run()
    return pipe, checkouts / "spotter"


@pytest.fixture
def env(spotter, monkeypatch):
    """The store's environment for in-process ``nous`` commands (and for the subprocesses they start)."""
    pipe, _ = spotter
    for key in ("NOUS_DB_PATH", "NOUS_CONFIG_FILE", "NOUS_EXTRACTOR", "XDG_DATA_HOME", "DAGSTER_HOME"):
        monkeypatch.delenv(key, raising=False)
    for key, value in pipe.env.items():
        monkeypatch.setenv(key, value)
    return {**os.environ}


def _hook_command(env) -> str:
    """The SessionStart command as installed in Claude Code's settings."""
    assert main(["hooks", "install"]) == 0
    settings = json.loads((Path(env["CLAUDE_CONFIG_DIR"]) / "settings.json").read_text())
    (group,) = settings["hooks"]["SessionStart"]
    return group["hooks"][0]["command"]


def _run_hook(command: str, env, cwd: Path, session: str, source: str = "startup") -> str:
    payload = {"session_id": session, "transcript_path": str(cwd / "t.jsonl"), "cwd": str(cwd),
               "hook_event_name": "SessionStart", "source": source}  # fmt: skip
    proc = subprocess.run(command, shell=True, input=json.dumps(payload).encode(), capture_output=True, env=env,
                          cwd=str(cwd), timeout=60)  # fmt: skip
    assert proc.returncode == 0
    if not proc.stdout.strip():
        return ""
    return json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"]


def _packet(capsys, *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["packet", *args])
    out = capsys.readouterr()
    return code, out.out, out.err


def _accesses(pipe) -> int:
    return pipe.count("SELECT count(*) FROM access_log")


def _line_of(text: str, memory_id: int, ids: list[int]) -> str:
    from nous_assets.retrieve.preview import memory_lines

    return next(line for line, mid in memory_lines(text, tuple(ids)) if mid == memory_id)


def _cached_ids(pipe) -> list[int]:
    """The memories of the packet the hook picks for the checkout (its row's ids, in line order)."""
    from nous_assets.retrieve.preview import hook_context

    return list(hook_context(pipe.settings.db_path, str(pipe.root / "checkouts" / "spotter")).memory_ids)


def test_nous_packet_prints_byte_for_byte_what_the_installed_hook_injects(spotter, env, capsys):
    pipe, checkout = spotter
    command = _hook_command(env)
    assert " -m resolver" in command or "resolver" in command
    for source in ("startup", "compact"):
        before = _accesses(pipe)
        code, out, _ = _packet(capsys, str(checkout), "--source", source)
        assert code == 0
        assert _accesses(pipe) == before  # a preview is not an injection
        injected = _run_hook(command, env, checkout, f"preview-{source}", source)
        assert injected and "Nous memory for this project" in injected
        assert out == injected + "\n"  # the same text, byte for byte
        assert _accesses(pipe) > before  # the hook did log its injection
    # a resume of a session that got the packet: what is new since (here nothing), as the hook decides it
    code, out, _ = _packet(capsys, str(checkout), "--source", "resume", "--session", "preview-startup")
    resumed = _run_hook(command, env, checkout, "preview-startup", "resume")
    assert code == 0 and out == (resumed + "\n" if resumed else "")


def test_explain_and_why_not_give_the_builds_reasons(spotter, env, capsys):
    pipe, checkout = spotter
    code, out, _ = _packet(capsys, str(checkout), "--explain")
    assert code == 0
    ids = _cached_ids(pipe)
    for memory_id in ids:
        assert f"    #{memory_id} " in out
    assert "confidence" in out and "rank " in out and "evidence text=" in out
    conn = pipe.conn()
    hypothesis = conn.execute("SELECT id FROM memories WHERE status = 'hypothesis' LIMIT 1").fetchone()[0]
    refuted = conn.execute("SELECT id FROM memories WHERE status = 'refuted' LIMIT 1").fetchone()
    conn.close()
    code, out, _ = _packet(capsys, str(checkout), "--why-not", str(hypothesis))
    assert code == 0 and f"memory #{hypothesis}: its status is hypothesis" in out
    if refuted:
        _, out, _ = _packet(capsys, str(checkout), "--why-not", str(refuted[0]))
        assert "its status is refuted" in out
    _, out, _ = _packet(capsys, str(checkout), "--why-not", str(ids[0]))
    assert out.strip() == f"memory #{ids[0]} is in the packet"
    _, out, _ = _packet(capsys, str(checkout), "--why-not", "999999")
    assert out.strip() == "there is no memory #999999"


def test_nous_injected_lists_what_a_session_got(spotter, env, capsys):
    pipe, checkout = spotter
    command = _hook_command(env)
    injected = _run_hook(command, env, checkout, "injected-check-session")
    assert injected
    capsys.readouterr()
    assert main(["injected", "--session", "injected-check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("session injected-check-session\n")
    assert "session-start:startup" in out
    for memory_id in _cached_ids(pipe):
        assert f"  #{memory_id} - " in out
    assert main(["injected", "--last"]) == 0
    assert capsys.readouterr().out.startswith("session injected-check-session\n")
    assert main(["injected", "--session", "no-such-session"]) == 1


def test_reject_changes_the_next_packet_without_ingestion(spotter, env, capsys):
    pipe, checkout = spotter
    _, before, _ = _packet(capsys, str(checkout))
    ids = _cached_ids(pipe)
    victim = ids[-1]
    line = _line_of(before, victim, ids)
    extracted = pipe.count("SELECT count(*) FROM learning_events WHERE event_type = 'LearningExtracted'")
    capsys.readouterr()
    assert main(["review", "reject", str(victim), "--reason", "wrong for this repo"]) == 0
    err = capsys.readouterr().err
    assert "packets: rebuilt in" in err
    _, after, _ = _packet(capsys, str(checkout))
    assert line in before and line not in after
    assert pipe.count("SELECT count(*) FROM learning_events WHERE event_type = 'LearningExtracted'") == extracted
    command = _hook_command(env)
    assert line not in _run_hook(command, env, checkout, "after-reject")
    # the rebuild is a run of the asset graph, recorded in the project's Dagster instance
    import dagster as dg

    with dg.DagsterInstance.from_config(str(Path(env["NOUS_DATA_DIR"]) / "dagster")) as instance:
        runs = instance.get_runs(filters=dg.RunsFilter(tags={"nous/source": "user_review"}))
        assert runs and runs[0].status == dg.DagsterRunStatus.SUCCESS
    _, why, _ = _packet(capsys, str(checkout), "--why-not", str(victim))
    assert f"memory #{victim} was archived: rejected in review: wrong for this repo" in why


def test_forget_by_id_and_by_query_is_idempotent(spotter, env, capsys):
    pipe, checkout = spotter
    _, before, _ = _packet(capsys, str(checkout))
    ids = _cached_ids(pipe)
    assert len(ids) >= 2
    by_id, by_query = ids[0], ids[1]
    id_line, query_line = _line_of(before, by_id, ids), _line_of(before, by_query, ids)
    tombstones = ("SELECT count(*) FROM learning_events WHERE event_type = 'LearningArchived' "
                  "AND payload_json LIKE '%forgotten by the user%'")

    # no terminal, no --yes: one line, exit 2, nothing written
    proc = subprocess.run([sys.executable, "-m", "nous_assets.cli", "forget", str(by_id)], env=env,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, cwd=REPO, timeout=120)  # fmt: skip
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1 and "--yes" in proc.stderr
    assert pipe.count(tombstones) == 0

    capsys.readouterr()
    assert main(["forget", f"#{by_id}", "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"  #{by_id} · project" in out and "forgot 1 memory" in out
    assert pipe.count(tombstones) == 1
    _, after, _ = _packet(capsys, str(checkout))
    assert id_line not in after
    # twice: nothing more
    assert main(["forget", str(by_id), "--yes"]) == 0
    assert "already gone" in capsys.readouterr().out
    assert pipe.count(tombstones) == 1
    _, why, _ = _packet(capsys, str(checkout), "--why-not", str(by_id))
    assert f"memory #{by_id} was forgotten" in why

    # by query: the words of the memory's own text
    conn = pipe.conn()
    content = conn.execute("SELECT content FROM memories WHERE id = ?", (by_query,)).fetchone()[0]
    conn.close()
    words = [w for w in content.split() if w.isalpha() and len(w) > 4][:2]
    capsys.readouterr()
    assert main(["forget", *words, "--dry-run"]) == 0  # lists, writes nothing (what a slash command shows first)
    out = capsys.readouterr().out
    assert f"  #{by_query} · project" in out and "nothing forgotten (--dry-run)" in out
    assert pipe.count(tombstones) == 1
    assert main(["forget", *words, "--yes"]) == 0
    out = capsys.readouterr().out
    assert f"  #{by_query} · project" in out
    forgotten = pipe.count(tombstones)
    assert forgotten >= 2
    _, after, _ = _packet(capsys, str(checkout))
    assert query_line not in after
    assert main(["forget", *words, "--yes"]) == 1  # nothing current contains them any more
    assert "nothing forgotten" in capsys.readouterr().out
    assert pipe.count(tombstones) == forgotten
    assert main(["forget", "zzqx-no-memory-says-this", "--yes"]) == 1
    assert "no current memory contains 'zzqx-no-memory-says-this'" in capsys.readouterr().out
    # replay-safe: the log replayed from scratch gives the same projection, forgotten memories gone
    from nous_assets.store.projection.memory_state import Policy
    from nous_assets.store.sqlite.projection import verify

    conn = pipe.conn()
    try:
        assert verify(conn, policy=Policy.of(pipe.settings.thresholds), scratch_dir=pipe.root).ok
        assert conn.execute("SELECT count(*) FROM memories WHERE id IN (?, ?)", (by_id, by_query)).fetchone()[0] == 0
    finally:
        conn.close()


def test_feedback_rebuilds_the_packets_at_once(spotter, env, capsys):
    pipe, _ = spotter
    ids = _cached_ids(pipe)
    built = "SELECT max(built_from_event_id) FROM injection_cache WHERE project_id != '*'"
    before = pipe.count(built)
    capsys.readouterr()
    assert main(["feedback", str(ids[0]), "corrected"]) == 0
    out = capsys.readouterr()
    assert "LearningWeakened" in out.out and "packets: rebuilt in" in out.err
    assert pipe.count(built) > before  # the packets now reflect the weakening event


def test_nous_injected_shows_what_the_hook_spooled(spotter, env, capsys):
    """A hook that found the database busy spooled its access records; they show before the next run moves them."""
    pipe, _ = spotter
    spool = pipe.settings.access_spool
    record = {"memory_ids": _cached_ids(pipe)[:2], "session_id": "spooled-session-1", "project_id": "p",
              "source": "session-start:startup", "accessed_at": "2026-11-27T10:00:00.000000Z"}  # fmt: skip
    spool.write_text(json.dumps(record) + "\n")
    try:
        capsys.readouterr()
        assert main(["injected", "--session", "spooled-session-1"]) == 0
        out = capsys.readouterr().out
        assert "session-start:startup (spooled)" in out
        for memory_id in record["memory_ids"]:
            assert f"  #{memory_id} " in out
    finally:
        spool.unlink()

"""Project identity through the real pipeline and the real hook: the shared spotter worktrees are one project,
and so are a repository's real worktrees and subdirectories created here."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from resolver.project import project_id_from_cwd

pytestmark = pytest.mark.slow

SPOTTER = "/home/USER/projects/spotter"
SPOTTER_WORKTREES = [f"{SPOTTER}-worktrees/spotter-{n}" for n in ("gqc", "dov", "fum", "4te", "a0y")]


def run_hook(pipe, cwd: str, session: str) -> str:
    payload = json.dumps({"session_id": session, "cwd": cwd, "source": "startup", "hook_event_name": "SessionStart",
                          "transcript_path": "/dev/null"})  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith("NOUS_")}
    env.update(NOUS_DATA_DIR=pipe.env["NOUS_DATA_DIR"], HOME=pipe.env["HOME"])
    out = subprocess.run([sys.executable, "-I", "-m", "resolver", "session-start"], input=payload, env=env,
                         capture_output=True, text=True, timeout=30)  # fmt: skip
    assert out.returncode == 0
    return json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"] if out.stdout.strip() else ""


def test_the_five_spotter_worktrees_are_one_project_named_after_the_main_checkout(corpus_pipeline):
    pipe = corpus_pipeline
    project = project_id_from_cwd(SPOTTER)
    conn = pipe.conn()
    try:
        aliases = dict(conn.execute("SELECT alias, project_id FROM project_aliases WHERE kind = 'cwd'").fetchall())
        sessions = {
            cwd: [r[0] for r in conn.execute("SELECT session_id FROM identity_sessions WHERE start_cwd = ?", (cwd,))]
            for cwd in SPOTTER_WORKTREES
        }
        by_session = dict(conn.execute(
            "SELECT m.source_session, m.project_id FROM memories m WHERE m.scope = 'project'").fetchall())  # fmt: skip
        access = conn.execute("SELECT DISTINCT project_id FROM access_log WHERE session_id LIKE 'wt-%'").fetchall()
    finally:
        conn.close()
    assert all(sessions.values()), sessions  # each worktree had a session that started there
    for cwd in [*SPOTTER_WORKTREES, f"{SPOTTER}-worktrees/spotter-fum/assets", SPOTTER]:
        assert aliases[cwd] == project, cwd
    started = {s for ids in sessions.values() for s in ids}
    assert {by_session[s] for s in started if s in by_session} == {project}
    assert len([s for s in started if s in by_session]) >= 3  # memories of several worktrees, one project
    assert not access
    packets = {cwd: run_hook(pipe, cwd, f"wt-{i}") for i, cwd in enumerate([*SPOTTER_WORKTREES, SPOTTER])}
    conn = pipe.conn()
    try:
        logged = {r[0] for r in conn.execute("SELECT project_id FROM access_log WHERE session_id LIKE 'wt-%'")}
        ids = {r[0] for r in conn.execute("SELECT memory_id FROM access_log WHERE session_id LIKE 'wt-%'")}
        marks = ",".join("?" * len(ids))
        rows = conn.execute(
            f"SELECT source_session FROM memories WHERE id IN ({marks}) AND scope = 'project'", sorted(ids)
        ).fetchall()
        sources = {r[0] for r in rows}
    finally:
        conn.close()
    assert all(packets.values()) and logged == {project}
    assert len(sources & started) >= 2  # the packet of any worktree carries what other worktrees learned


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "init.defaultBranch=main",
                    *args], cwd=cwd, check=True, capture_output=True)  # fmt: skip


def _session(cwd: Path, branch: str, day: str, lines: list[tuple[str, str]]) -> tuple[str, list[dict]]:
    session = str(uuid.uuid4())
    records, parent = [], None
    for i, (role, text) in enumerate(lines):
        rid = str(uuid.uuid4())
        message = {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]}
        if role == "assistant":
            message.update(id=f"msg_{session[:8]}_{i}", model="claude-opus-4-6")
        records.append({"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": str(cwd),
                        "sessionId": session, "version": "2.1.39", "gitBranch": branch, "type": role,
                        "message": message, "uuid": rid, "timestamp": f"{day}T10:00:{i:02d}.000Z"})  # fmt: skip
        parent = rid
    return session, records


def test_real_worktrees_and_subdirectories_resolve_to_their_repository(tmp_path, pipeline_factory):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    main = tmp_path / "src" / "ledger"
    (main / "services" / "api").mkdir(parents=True)
    (main / "services" / "api" / "app.py").write_text("x = 1\n")
    _git(main, "init")
    _git(main, "add", ".")
    _git(main, "commit", "-m", "init")
    feature = tmp_path / "src" / "ledger-worktrees" / "fees"
    elsewhere = tmp_path / "tmp-wt" / "hotfix"
    _git(main, "worktree", "add", "-b", "fees", str(feature))
    _git(main, "worktree", "add", "-b", "hotfix", str(elsewhere))
    places = [
        (main, "main", "Don't run pytest directly in this repo: always use `make check`, it sets up the database."),
        (feature, "fees", "No, never edit migrations/0001_init.sql; add a new migration file instead."),
        (elsewhere, "hotfix", "Wrong: the config lives in settings/base.toml, not in .env. Use settings/base.toml."),
        (main / "services" / "api", "main", "Don't start the api with flask run; always use `make api`."),
    ]
    projects = tmp_path / "home" / ".claude" / "projects"
    for i, (cwd, branch, text) in enumerate(places):
        session, records = _session(cwd, branch, f"2026-03-0{i + 1}", [
            ("user", text), ("assistant", "Understood, I will do that from now on.")])  # fmt: skip
        folder = projects / project_id_from_cwd(str(cwd))
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{session}.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    pipe.run()
    project = project_id_from_cwd(str(main))
    conn = pipe.conn()
    try:
        aliases = dict(conn.execute("SELECT alias, project_id FROM project_aliases WHERE kind = 'cwd'").fetchall())
        stored = conn.execute("SELECT project_id, scope FROM memories").fetchall()
        folders = {r[0] for r in conn.execute("SELECT DISTINCT project_id FROM learning_events")}
    finally:
        conn.close()
    assert {aliases[str(cwd)] for cwd, _, _ in places} == {project}
    assert {p for p, scope in stored if scope == "project"} == {project}
    assert len([1 for _, scope in stored if scope == "project"]) >= 2
    assert len(folders) >= 2  # events keep the folders they were written with
    # the hook, in a worktree created after ingestion and in a subdirectory of another: the repository's packet
    later = tmp_path / "src" / "ledger-worktrees" / "later"
    _git(main, "worktree", "add", "-b", "later", str(later))
    (later / "services" / "api").mkdir(parents=True, exist_ok=True)
    for i, cwd in enumerate((later, later / "services" / "api", feature / "services", main)):
        assert run_hook(pipe, str(cwd), f"new-{i}"), cwd
    conn = pipe.conn()
    try:
        logged = conn.execute(
            "SELECT a.session_id, a.project_id, m.project_id, m.scope FROM access_log a JOIN memories m "
            "ON m.id = a.memory_id WHERE a.session_id LIKE 'new-%'"
        ).fetchall()
    finally:
        conn.close()
    assert {r[0] for r in logged} == {f"new-{i}" for i in range(4)}
    assert {r[1] for r in logged} == {project}
    assert all(m == project or scope == "global" for _, _, m, scope in logged)

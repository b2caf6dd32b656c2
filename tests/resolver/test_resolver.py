"""The Claude Code hook resolver, exercised as Claude Code runs it: ``python -m resolver <hook>`` in a subprocess.

Fail-open acceptance: every failure mode exits 0 with empty stdout in under 600 ms of wall-clock.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from nous_assets.store.db import open_db
from resolver import cache_read as cache
from resolver import hook_io
from resolver.__main__ import HOOK_DEADLINE_S
from resolver.fingerprint import build_fingerprint, find_git, fingerprint_key, read_branch, split_words
from resolver.project import project_id_from_cwd
from tests.resolver.cache_rows import add_packet

REPO = Path(__file__).resolve().parents[2]
FAIL_OPEN_WALL_S = HOOK_DEADLINE_S + 0.5  # the guarantee: never past the deadline (speed: benchmarks/)
BRANCH = "feature/payment-retry"
needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


# ##### FIXTURES


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    path = tmp_path / "data"
    path.mkdir()
    return path


@pytest.fixture
def db(tmp_path: Path, new_db) -> Path:
    path = tmp_path / "cortex.db"
    new_db(path).close()
    return path


@pytest.fixture
def env(tmp_path: Path, data_dir: Path, db: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "GIT_"))}
    home = tmp_path / "home"
    home.mkdir()
    return {**base, "HOME": str(home), "NOUS_DATA_DIR": str(data_dir), "NOUS_DB_PATH": str(db)}


def _git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "init.defaultBranch=main", *args],
        cwd=repo,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def git_repo(tmp_path: Path) -> Path:
    """A repository on ``feature/payment-retry`` with history and one uncommitted change."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = tmp_path / "shop-app"
    (repo / "src" / "billing").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'shop'\n")
    (repo / "src" / "billing" / "paymentGateway.py").write_text("x = 1\n")
    _git(repo, "init")
    _git(repo, "add", ".")
    _git(repo, "commit", "-m", "init")
    _git(repo, "checkout", "-b", BRANCH)
    (repo / "src" / "billing" / "retry_policy.py").write_text("y = 2\n")
    _git(repo, "add", ".")
    _git(repo, "commit", "-m", "retry")
    (repo / "src" / "billing" / "paymentGateway.py").write_text("x = 3\n")  # uncommitted
    return repo


def add_intervention(
    db: Path,
    key: str,
    text: str,
    *,
    scope: str = "global",
    project_id: str | None = None,
    priority: int = 1,
    expires: str = "2999",
) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "INSERT INTO active_interventions(intervention_id, scope, target_session_id, target_project_id, "
            "payload_text, priority, expires_at, dedupe_key, updated_at) VALUES (?, ?, NULL, ?, ?, ?, ?, ?, ?)",
            (key, scope, project_id, text, priority, f"{expires}-01-01T00:00:00.000000Z", key, "2025-01-01T00:00:00Z"),
        )
    conn.close()


def access_rows(db: Path) -> list[tuple]:
    conn = sqlite3.connect(db)
    try:
        return conn.execute("SELECT memory_id, session_id, project_id, source FROM access_log ORDER BY id").fetchall()
    finally:
        conn.close()


def payload(cwd: Path | str, *, source: str = "startup", session_id: str = "sess-1") -> bytes:
    return json.dumps(
        {
            "session_id": session_id,
            "transcript_path": f"/tmp/{session_id}.jsonl",
            "cwd": str(cwd),
            "permission_mode": "default",
            "hook_event_name": "SessionStart",
            "source": source,
        }
    ).encode()


def run_hook(command: str, stdin: bytes, env: dict[str, str], **extra_env: str) -> tuple[int, bytes, float]:
    started = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "resolver", command],
        input=stdin,
        capture_output=True,
        env={**env, **extra_env},
        cwd=REPO,
        timeout=10,
    )
    return proc.returncode, proc.stdout, time.perf_counter() - started


def context_of(stdout: bytes, event: str = "SessionStart") -> str:
    body = json.loads(stdout)
    assert set(body) == {"hookSpecificOutput"}
    assert set(body["hookSpecificOutput"]) == {"hookEventName", "additionalContext"}
    assert body["hookSpecificOutput"]["hookEventName"] == event
    return body["hookSpecificOutput"]["additionalContext"]


def resolver_log(data_dir: Path) -> str:
    path = data_dir / "logs" / "resolver.log"
    return path.read_text() if path.exists() else ""


# ##### PACKET SELECTION


@needs_git
def test_project_packet_matching_branch_is_injected_and_logged(git_repo: Path, db: Path, env: dict[str, str]) -> None:
    pid = project_id_from_cwd(str(git_repo))
    add_packet(db, "main", project_id=pid, scope="project", fingerprint={"branch": "main", "stack": ["python"]},
               text="# main packet", ids=[1, 2])  # fmt: skip
    add_packet(db, "feature", project_id=pid, scope="project",
               fingerprint={"branch": BRANCH, "stack": ["python"], "terms": ["payment", "retry"]},
               text="# Nous memory\n- payments retry with backoff", ids=[7, 8, 9])  # fmt: skip
    add_packet(db, "global", text="# global packet", ids=[100])

    rc, out, _ = run_hook("session-start", payload(git_repo), env)

    assert rc == 0
    assert json.loads(out) == {
        "hookSpecificOutput": {
            "hookEventName": "SessionStart",
            "additionalContext": "# Nous memory\n- payments retry with backoff",
        }
    }
    assert access_rows(db) == [(m, "sess-1", pid, "session-start:startup") for m in (7, 8, 9)]


@needs_git
def test_fingerprint_reads_branch_stack_and_terms_from_files(git_repo: Path) -> None:
    fp = build_fingerprint(str(git_repo / "src"))
    assert fp["project_id"] == project_id_from_cwd(str(git_repo))  # a subdirectory is its repository's project
    assert fp["branch"] == BRANCH
    assert fp["stack"] == ["python"]
    assert {"python", "payment", "retry"} <= set(fp["terms"])  # stack and branch words
    assert len(fp["terms"]) == len(set(fp["terms"]))
    assert fingerprint_key(fp) == fingerprint_key(dict(fp, terms=[]))
    assert fingerprint_key(fp) != fingerprint_key(dict(fp, branch="main"))


@needs_git
def test_worktree_and_detached_head(git_repo: Path, tmp_path: Path) -> None:
    worktree = tmp_path / "wt"
    _git(git_repo, "worktree", "add", "-b", "hotfix/login-bug", str(worktree))
    root, git_dir = find_git(str(worktree))
    assert root == str(worktree) and Path(git_dir).is_dir()
    assert build_fingerprint(str(worktree))["branch"] == "hotfix/login-bug"
    _git(git_repo, "checkout", "--detach")
    assert read_branch(str(git_repo / ".git")) is None


def test_fingerprint_without_git_uses_manifests(tmp_path: Path) -> None:
    project = tmp_path / "web"
    project.mkdir()
    for name in ("package.json", "tsconfig.json", "Dockerfile", "go.mod"):
        (project / name).write_text("{}")
    fp = build_fingerprint(str(project))
    assert fp["branch"] is None
    assert fp["stack"] == ["docker", "go", "javascript", "typescript"]
    assert split_words("fooBar-baz_qux/HTTPServer2") == ["foo", "bar", "baz", "qux", "http", "server", "2"]


def test_global_packet_when_the_project_has_none(tmp_path: Path, db: Path, env: dict[str, str]) -> None:
    add_packet(db, "other", project_id="-somewhere-else", scope="project", text="# not ours")
    add_packet(db, "global", text="# global packet", ids=[5])
    rc, out, _ = run_hook("session-start", payload(tmp_path, source="resume"), env)
    assert rc == 0
    assert context_of(out) == "# global packet"
    assert access_rows(db) == [(5, "sess-1", project_id_from_cwd(str(tmp_path)), "session-start:resume")]


def test_expired_and_corrupt_project_rows_fall_back_to_global(tmp_path: Path, db: Path, env: dict[str, str]) -> None:
    pid = project_id_from_cwd(str(tmp_path))
    add_packet(db, "expired", project_id=pid, scope="project", text="# stale", expires_at="2001-01-01T00:00:00.000000Z")
    add_packet(db, "corrupt", project_id=pid, scope="project", text="# broken", ids="[1, 2")
    add_packet(db, "global", text="# global packet", ids=[5])
    rc, out, _ = run_hook("session-start", payload(tmp_path), env)
    assert rc == 0 and context_of(out) == "# global packet"


def test_interventions_are_prepended_by_priority(tmp_path: Path, db: Path, env: dict[str, str]) -> None:
    pid = project_id_from_cwd(str(tmp_path))
    add_packet(db, "project", project_id=pid, scope="project", text="# project packet", ids=[3])
    add_intervention(db, "low", "Prefer small commits", priority=1)
    add_intervention(db, "high", "Run  make lint\nbefore pushing", scope="project", project_id=pid, priority=9)
    add_intervention(db, "expired", "Old advice", priority=99, expires="2001")
    add_intervention(db, "elsewhere", "Not this project", scope="project", project_id="-x", priority=50)
    rc, out, _ = run_hook("session-start", payload(tmp_path), env)
    assert rc == 0
    assert context_of(out) == (
        "## Interventions\n- Run make lint before pushing\n- Prefer small commits\n\n# project packet"
    )


def test_scoring_prefers_branch_then_stack_and_terms() -> None:
    fp = {"branch": "dev", "stack": ["python", "docker"], "terms": ["api", "auth"]}
    same_branch = cache.score(fp, {"branch": "dev"})
    full_overlap = cache.score(fp, {"stack": ["python", "docker"], "terms": ["api", "auth"]})
    assert same_branch == 2.0 and full_overlap == 2.0
    assert cache.score(fp, {"branch": "dev", "stack": ["python"]}) == 2.5
    assert cache.score(fp, {}) == 0.0
    assert cache.score(fp, {"branch": "other"}) < cache.score(fp, {"branch": None})  # agnostic beats foreign
    assert cache.score({"branch": None}, {"branch": "main"}) == -0.25


# ##### OUTPUT CAP


def test_a_huge_packet_is_capped_at_a_line_boundary(tmp_path: Path, db: Path, env: dict[str, str]) -> None:
    text = "\n".join(f"- memory {i}: " + "x" * 80 for i in range(600))
    assert len(text) > 50_000
    add_packet(db, "global", text=text, ids=[1])
    add_intervention(db, "i", "Mind the cap " * 100, priority=5)
    rc, out, _ = run_hook("session-start", payload(tmp_path), env)
    context = context_of(out)
    assert rc == 0
    assert len(context) <= hook_io.MAX_CONTEXT_CHARS
    assert context.endswith(hook_io.TRUNCATION_MARKER)
    assert context[: -len(hook_io.TRUNCATION_MARKER)].rsplit("\n", 1)[-1].endswith("x" * 80)  # whole lines only


@pytest.mark.parametrize("text", ["y" * 50_000, "a\n" * 25_000, "é" * 9_501, "short"])
def test_cap_context_never_exceeds_the_limit(text: str) -> None:
    capped = hook_io.cap_context(text)
    assert len(capped) <= hook_io.MAX_CONTEXT_CHARS
    assert capped == text or capped.endswith(hook_io.TRUNCATION_MARKER)
    assert len(json.loads(hook_io.session_start_output(text))["hookSpecificOutput"]["additionalContext"]) <= 9_500


# ##### FAIL OPEN


def _assert_failed_open(rc: int, out: bytes, elapsed: float) -> None:
    assert rc == 0
    assert out == b""
    assert elapsed < FAIL_OPEN_WALL_S, f"hook took {elapsed:.3f} s"


def test_missing_db_fails_open(tmp_path: Path, env: dict[str, str], data_dir: Path) -> None:
    env = {**env, "NOUS_DB_PATH": str(tmp_path / "absent" / "cortex.db")}
    _assert_failed_open(*run_hook("session-start", payload(tmp_path), env))
    assert "FileNotFoundError" in resolver_log(data_dir)
    assert not (tmp_path / "absent").exists()  # never creates a database


def test_access_records_keep_the_wal_short(db: Path) -> None:
    """Each hook is the first connection to open the database when the pipeline is idle, and the first connection
    reads the whole WAL: the hook's writer truncates it past WAL_TRUNCATE_BYTES, so it never grows for good."""
    for i in range(300):
        assert cache.log_access(db, list(range(1, 9)), f"sess-{i}", "-p", "session-start:startup") == "db"
    wal = db.with_name(db.name + "-wal")
    assert not wal.exists() or wal.stat().st_size < 2 * cache.WAL_TRUNCATE_BYTES
    assert len(access_rows(db)) == 300 * 8


def test_locked_db_fails_open(tmp_path: Path, db: Path, env: dict[str, str], data_dir: Path) -> None:
    add_packet(db, "global", text="# global packet")
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("PRAGMA locking_mode = EXCLUSIVE")  # WAL readers are locked out only in exclusive mode
        holder.execute("BEGIN EXCLUSIVE")
        holder.execute("INSERT INTO access_log(memory_id, session_id, accessed_at) VALUES (1, 'holder', 'now')")
        _assert_failed_open(*run_hook("session-start", payload(tmp_path), env))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked" in resolver_log(data_dir)


def test_write_locked_db_still_injects_and_spools_access(
    tmp_path: Path, db: Path, env: dict[str, str], data_dir: Path
) -> None:
    add_packet(db, "global", text="# global packet", ids=[4, 5])
    holder = sqlite3.connect(db, isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # in WAL mode readers go on; only the access insert is blocked
        rc, out, elapsed = run_hook("session-start", payload(tmp_path), env)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert rc == 0 and context_of(out) == "# global packet" and elapsed < FAIL_OPEN_WALL_S
    assert access_rows(db) == []
    (line,) = (data_dir / "access-spool.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert record["memory_ids"] == [4, 5] and record["session_id"] == "sess-1"
    assert record["source"] == "session-start:startup" and record["project_id"] == project_id_from_cwd(str(tmp_path))
    assert record["accessed_at"].endswith("Z")


def test_spool_is_what_the_pipeline_ingests(tmp_path: Path, db: Path, data_dir: Path, monkeypatch) -> None:
    from nous_assets.reinforce.outcomes import ingest_access_spool

    monkeypatch.setenv("NOUS_DATA_DIR", str(data_dir))
    cache._spool(json.dumps({"memory_ids": [4, 5], "session_id": "s", "project_id": "p", "source": "x",
                             "accessed_at": "2026-01-01T00:00:00.000000Z"}) + "\n")  # fmt: skip
    conn = open_db(db)
    try:
        assert ingest_access_spool(conn, Path(cache.spool_path())) == 2
    finally:
        conn.close()
    assert access_rows(db) == [(4, "s", "p", "x"), (5, "s", "p", "x")]


def _recreate_cache_without_constraints(db: Path) -> None:
    conn = open_db(db)
    try:
        conn.execute("DROP TABLE injection_cache")
        conn.execute(
            "CREATE TABLE injection_cache (cache_key TEXT PRIMARY KEY, project_id TEXT, scope TEXT, "
            "fingerprint_json TEXT, packet_text TEXT, memory_ids_json TEXT, char_count INTEGER, "
            "built_from_event_id INTEGER, created_at TEXT, expires_at TEXT)"
        )
    finally:
        conn.close()


@pytest.mark.parametrize(
    "row",
    [
        {"ids": "[1, 2"},
        {"ids": '{"not": "a list"}'},
        {"ids": '["seven"]'},
        {"fingerprint": "{branch: main"},
        {"fingerprint": "[1, 2]"},
        {"text": None},
        {"text": "   "},
    ],
    ids=["bad-ids-json", "ids-not-list", "ids-not-ints", "bad-fp-json", "fp-not-object", "null-text", "blank-text"],
)
def test_corrupt_row_fails_open(tmp_path: Path, db: Path, env: dict[str, str], row: dict) -> None:
    _recreate_cache_without_constraints(db)
    add_packet(db, "project", project_id=project_id_from_cwd(str(tmp_path)), scope="project", **row)
    _assert_failed_open(*run_hook("session-start", payload(tmp_path), env))
    assert access_rows(db) == []


@pytest.mark.parametrize(
    "stdin",
    [b"not json at all", b"\x00\xff\xfe\x80binary\x9c", b"", b"[1, 2, 3]", b'"a string"', b"{}", b'{"cwd": '],
    ids=["text", "binary", "empty", "array", "string", "empty-object", "truncated"],
)
def test_garbage_stdin_fails_open(stdin: bytes, db: Path, env: dict[str, str]) -> None:
    add_packet(db, "global", text="# global packet")
    _assert_failed_open(*run_hook("session-start", stdin, env))
    assert access_rows(db) == []


def test_slow_path_is_cut_by_the_watchdog(tmp_path: Path, db: Path, env: dict[str, str], data_dir: Path) -> None:
    add_packet(db, "global", text="# global packet")
    _assert_failed_open(*run_hook("session-start", payload(tmp_path), env, NOUS_RESOLVER_TEST_DELAY="8"))
    assert "timed out" in resolver_log(data_dir)
    assert access_rows(db) == []


def test_fifty_session_starts_at_once_all_inject(
    tmp_path: Path, db: Path, env: dict[str, str], data_dir: Path
) -> None:
    """Claude Code Desktop fires SessionStart several times in a second: 50 hooks started together on this
    machine's cores all inject (start-up queued behind the others does not eat the work's budget), each well
    within what Claude Code waits, and every access is recorded or spooled."""
    add_packet(db, "global", text="# global packet", ids=[7])
    procs = []
    for i in range(50):  # as Claude Code does: the hook's JSON is written as soon as it starts
        proc = subprocess.Popen([sys.executable, "-m", "resolver", "session-start"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, cwd=REPO)  # fmt: skip
        proc.stdin.write(payload(tmp_path, session_id=f"burst-{i}"))
        proc.stdin.close()
        procs.append((proc, time.perf_counter()))
    answers = []
    for proc, started in procs:
        out, err = proc.stdout.read(), proc.stderr.read()
        proc.wait(timeout=30)
        answers.append((proc.returncode, out, time.perf_counter() - started, err))
    assert all(rc == 0 and not err for rc, _, _, err in answers)
    injected = sum(b"# global packet" in out for _, out, _, _ in answers)
    assert injected == 50, resolver_log(data_dir)[-2000:]
    assert [context_of(out) for _, out, _, _ in answers] == ["# global packet"] * 50
    assert max(elapsed for _, _, elapsed, _ in answers) < HOOK_DEADLINE_S + 0.5
    spool = data_dir / "access-spool.jsonl"
    spooled = len(spool.read_text().splitlines()) if spool.exists() else 0
    assert len(access_rows(db)) + spooled == 50


def test_unknown_command_and_version(env: dict[str, str]) -> None:
    assert run_hook("no-such-hook", b"{}", env)[:2] == (0, b"")
    rc, out, _ = run_hook("--version", b"", env)
    assert rc == 0 and out.startswith(b"nous-resolver ")


# ##### OTHER HOOKS


def test_stop_touches_the_wake_marker(data_dir: Path, env: dict[str, str]) -> None:
    rc, out, _ = run_hook("stop", b'{"session_id": "s", "stop_hook_active": false}', env)
    assert (rc, out) == (0, b"")
    assert (data_dir / "wake").exists()


def test_pre_compact_snapshots_metadata(data_dir: Path, env: dict[str, str]) -> None:
    body = {"session_id": "s9", "transcript_path": "/t/s9.jsonl", "trigger": "auto", "custom_instructions": ""}
    rc, out, _ = run_hook("pre-compact", json.dumps(body).encode(), env)
    assert (rc, out) == (0, b"")
    (line,) = (data_dir / "precompact.jsonl").read_text().splitlines()
    record = json.loads(line)
    assert set(record) == {"ts", "session_id", "trigger", "transcript_path"}
    assert (record["session_id"], record["trigger"], record["transcript_path"]) == ("s9", "auto", "/t/s9.jsonl")
    assert record["ts"].endswith("Z")
    assert (data_dir / "wake").exists()
    assert run_hook("pre-compact", b"\xff garbage", env)[:2] == (0, b"")


def test_user_prompt_submit_is_off_by_default(tmp_path: Path, db: Path, env: dict[str, str]) -> None:
    add_packet(db, "global", text="# global packet", ids=[1])
    assert run_hook("user-prompt-submit", payload(tmp_path), env)[:2] == (0, b"")
    assert run_hook("user-prompt-submit", payload(tmp_path), env, NOUS_ENABLE_USERPROMPTSUBMIT="false")[:2] == (0, b"")
    assert access_rows(db) == []


def test_user_prompt_submit_when_enabled_injects_only_new_memories(
    tmp_path: Path, data_dir: Path, db: Path, env: dict[str, str]
) -> None:
    add_packet(db, "global", text="# global packet", ids=[1, 2])
    # the hook's whole budget is 150 ms from process start: on a loaded machine it rightly fails open (and logs
    # it); the behaviour under test is what a run within budget does, so a timed-out run is tried again
    for _ in range(5):
        rc, out, _ = run_hook("user-prompt-submit", payload(tmp_path), env, NOUS_ENABLE_USERPROMPTSUBMIT="1")
        if out or "timed out" not in resolver_log(data_dir):
            break
        (data_dir / "logs" / "resolver.log").unlink()
    assert rc == 0 and context_of(out, "UserPromptSubmit") == "# global packet"
    assert [r[3] for r in access_rows(db)] == ["user-prompt-submit:prompt"] * 2
    rc, out, _ = run_hook("user-prompt-submit", payload(tmp_path), env, NOUS_ENABLE_USERPROMPTSUBMIT="true")
    assert (rc, out) == (0, b"")  # already injected into this session


# ##### INPUT PARSING AND DEPENDENCIES


class _Stream:
    def __init__(self, data: bytes) -> None:
        self.buffer = self
        self.data = data

    def isatty(self) -> bool:
        return False

    def read(self) -> bytes:
        return self.data


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(b'{"a": 1}', {"a": 1}), (b"\xff\xfe", {}), (b"", {}), (b"null", {}), (b"[{}]", {}), (b"  \n", {})],
)
def test_read_payload_never_raises(raw: bytes, expected: dict) -> None:
    assert hook_io.read_payload(_Stream(raw)) == expected
    assert hook_io.read_payload(None) == {}
    assert hook_io.read_payload(object()) == {}


@pytest.mark.parametrize("flag", ["-S", "-I"])
def test_resolver_imports_only_the_standard_library(flag: str) -> None:
    """``-S``: no site-packages at all, so whatever loads is the resolver's doing; ``-I``: the installed package,
    judged by what the imports added (site's own .pth helpers are not the resolver's)."""
    code = (
        "import sys; before = set(sys.modules); "
        "import resolver.__main__, resolver.cache_read, resolver.fingerprint, resolver.hook_io; "
        "print(sorted(sys.modules) if sys.flags.no_site else sorted(set(sys.modules) - before))"
    )
    proc = subprocess.run([sys.executable, flag, "-c", code], cwd=REPO, capture_output=True, text=True, check=True)
    loaded = {name.split(".")[0] for name in json.loads(proc.stdout.replace("'", '"'))}
    assert "resolver" in loaded
    assert {m for m in loaded if m not in sys.stdlib_module_names} <= {"resolver", "__main__"}


def test_a_managed_worktree_that_no_longer_exists_maps_to_its_main_checkouts_project(tmp_path: Path) -> None:
    """``<dir>/worktrees/<repo>/<name>/<repo>`` (worktree managers' layout): a session starting in a worktree the
    pipeline never saw gets the main checkout's packet, as a worktree that exists gets it from its ``.git``."""
    from resolver.project import managed_worktree_main

    assert managed_worktree_main("/home/dev/Code/worktrees/app/brisk-beam/app") == "/home/dev/Code/app"
    assert managed_worktree_main("/home/dev/Code/worktrees/app/brisk-beam/app/src/x") == "/home/dev/Code/app"
    assert managed_worktree_main("/home/dev/Code/worktrees/app/brisk-beam/other") is None  # not the layout
    assert managed_worktree_main("/worktrees/app/n/app") is None

    from nous_assets.store.db import open_db
    from nous_assets.store.projection import identity
    from resolver.project import lookup

    conn = open_db(tmp_path / "cortex.db", create=True)
    try:
        with conn:
            identity.replace_aliases(conn, {("cwd", "/home/dev/Code/app"): ("-home-dev-Code-app", "main-checkout")},
                                     "2026-01-01T00:00:00Z")  # fmt: skip
        assert lookup(conn, "/home/dev/Code/worktrees/app/never-seen/app", None) == "-home-dev-Code-app"
    finally:
        conn.close()

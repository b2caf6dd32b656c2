"""Storage failures end in one clear line that says what to do, never a traceback: read-only data dir,
full disk, locked database, damaged database. Conditions are real: a read-only bind mount or file modes,
a tiny tmpfs (or a file-size limit), a lock held by another connection, bytes overwritten on disk."""

from __future__ import annotations

import errno
import os
import resource
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from nous_assets.errors import (
    CorruptDatabaseError,
    DatabaseLockedError,
    DiskFullError,
    ReadOnlyError,
    storage_error,
)

NOUS = [sys.executable, "-m", "nous_assets.cli"]
SHORT = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "transcripts" / "spotter" / "short.jsonl"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    projects = tmp_path / "home" / ".claude" / "projects" / "-home-demo-spotter"
    projects.mkdir(parents=True)
    if SHORT.is_file():
        shutil.copyfile(SHORT, projects / "55604662-cf2a-4331-851a-ec234028f8ca.jsonl")
    values = {
        **os.environ,
        "HOME": str(tmp_path / "home"),
        "CLAUDE_CONFIG_DIR": str(tmp_path / "home" / ".claude"),
        "NOUS_DATA_DIR": str(tmp_path / "data"),
        "DAGSTER_HOME": str(tmp_path / "data" / "dagster"),
    }
    for key in ("NOUS_DB_PATH", "NOUS_PROJECT_GLOB", "NOUS_CONFIG_FILE", "NOUS_EXTRACTOR", "XDG_DATA_HOME"):
        values.pop(key, None)
    (tmp_path / "data").mkdir()
    return values


def nous(args: list[str], env: dict[str, str], prefix: list[str] = (), **kw) -> subprocess.CompletedProcess:
    return subprocess.run([*prefix, *NOUS, *args], env=env, capture_output=True, text=True, timeout=600, **kw)


def one_error_line(out: subprocess.CompletedProcess) -> str:
    """The command failed with exactly one ``nous: error:`` line and no traceback."""
    assert out.returncode == 1, (out.returncode, out.stderr[-3000:])
    assert "Traceback (most recent call last)" not in out.stderr, out.stderr[-3000:]
    errors = [line for line in out.stderr.splitlines() if line.startswith("nous: error:")]
    assert len(errors) == 1, out.stderr[-3000:]
    return errors[0]


def _mount_namespace() -> list[str] | None:
    """A private mount namespace to mount in (as root, or as a user through a user namespace)."""
    for prefix in (["unshare", "--mount"], ["unshare", "--user", "--map-root-user", "--mount"]):
        if shutil.which("unshare") is None:
            return None
        try:
            ok = subprocess.run([*prefix, "true"], capture_output=True, timeout=10).returncode == 0
        except (OSError, subprocess.SubprocessError):
            ok = False
        if ok:
            return prefix
    return None


def read_only(directory: Path) -> list[str] | None:
    """A command prefix that runs nous with ``directory`` on a read-only bind mount (None: not possible)."""
    ns = _mount_namespace()
    if ns is None:
        return None
    script = 'mount --bind "$1" "$1" && mount -o remount,bind,ro "$1" "$1" && shift && exec "$@"'
    return [*ns, "sh", "-c", script, "sh", str(directory)]


def tiny_disk(directory: Path, size: str) -> list[str] | None:
    """A command prefix that runs nous with ``directory`` on a fresh tmpfs of ``size`` (None: not possible)."""
    ns = _mount_namespace()
    if ns is None:
        return None
    script = 'mount -t tmpfs -o size="$2" tmpfs "$1" && shift 2 && exec "$@"'
    return [*ns, "sh", "-c", script, "sh", str(directory), size]


def _limit_file_size(limit: int):
    def apply() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))  # writes past it fail with EFBIG

    return apply


# -- read-only data directory ---------------------------------------------------------------------
@pytest.mark.parametrize("args", [["init"], ["backfill", "--since", "2025-01-01"]], ids=["init", "backfill"])
def test_read_only_data_dir_is_one_line(env, tmp_path, args):
    data = tmp_path / "data"
    prefix = read_only(data)
    if prefix is None:
        if os.geteuid() == 0:
            pytest.skip("cannot make a read-only mount here (no mount namespace) and root ignores file modes")
        data.chmod(0o555)
        prefix = []
    try:
        line = one_error_line(nous(args, env, prefix))
    finally:
        data.chmod(0o755)
    assert str(data) in line and ("read-only" in line or "Read-only" in line or "permission denied" in line)
    assert "NOUS_DATA_DIR" in line  # says what to do
    assert not (data / "cortex.db").exists()


def test_read_only_dagster_storage_is_caught_before_dagster_starts(env, tmp_path):
    home = tmp_path / "dagster-home"
    home.mkdir()
    env = {**env, "DAGSTER_HOME": str(home)}
    prefix = read_only(home)
    if prefix is None:
        if os.geteuid() == 0:
            pytest.skip("cannot make a read-only mount here (no mount namespace) and root ignores file modes")
        home.chmod(0o555)
        prefix = []
    try:
        out = nous(["backfill", "--since", "2025-01-01"], env, prefix)
    finally:
        home.chmod(0o755)
    line = one_error_line(out)
    assert str(home) in line and "sqlalchemy" not in out.stderr.lower()


# -- full disk ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("how", ["tmpfs", "file-size limit"])
def test_full_disk_on_init_is_one_line(env, tmp_path, how):
    data = tmp_path / "data"
    if how == "tmpfs":
        prefix = tiny_disk(data, "16k")
        if prefix is None:
            pytest.skip("no mount namespace for a tmpfs here")
        out = nous(["init"], env, prefix)
    else:  # the kernel's file-size limit: writes past it fail with EFBIG, as on a full disk
        out = nous(["init"], env, preexec_fn=_limit_file_size(16 * 1024))
    line = one_error_line(out)
    assert "full" in line and str(data) in line


@pytest.mark.slow
@pytest.mark.skipif(not SHORT.is_file(), reason="shared transcripts not available")
def test_full_disk_during_a_backfill_fails_with_the_reason(env, tmp_path):
    data = tmp_path / "data"
    prefix = tiny_disk(data, "256k")
    if prefix is not None:
        out = nous(["backfill", "--since", "2025-01-01"], env, prefix)
    else:
        out = nous(["backfill", "--since", "2025-01-01"], env, preexec_fn=_limit_file_size(256 * 1024))
    assert out.returncode == 1, out.stderr[-3000:]
    assert "Traceback (most recent call last)" not in out.stderr
    # the reason is given whichever write hit the limit first: cortex.db, the lake or Dagster's storage
    # (under a file-size limit SQLite reports EFBIG as a plain I/O error: the message says the disk may be full)
    said = ("disk full while writing", "no space left writing", "the disk may be full")
    assert any(s in out.stderr for s in said), out.stderr[-3000:]


# -- locked and damaged databases ----------------------------------------------------------------------
def test_locked_database_is_one_line_after_the_configured_busy_timeout(env, tmp_path):
    assert nous(["init"], env).returncode == 0
    holder = sqlite3.connect(tmp_path / "data" / "cortex.db", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")  # another process's writer, holding the lock for good
    try:
        line = one_error_line(nous(["init"], {**env, "NOUS_DB_BUSY_TIMEOUT_MS": "200"}))
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert "locked by another process" in line and "NOUS_DB_BUSY_TIMEOUT_MS" in line


def test_busy_timeout_setting_is_validated(env):
    out = nous(["status"], {**env, "NOUS_DB_BUSY_TIMEOUT_MS": "soon"})
    assert out.returncode == 2 and "NOUS_DB_BUSY_TIMEOUT_MS" in out.stderr and "Traceback" not in out.stderr


def test_garbage_database_is_one_line_for_every_kind_of_command(env, tmp_path):
    (tmp_path / "data" / "cortex.db").write_bytes(b"definitely not SQLite " * 500)
    for args in (["status"], ["memories"], ["init"]):
        line = one_error_line(nous(args, env))
        assert "not a usable SQLite database" in line and "nous init" in line, args


def test_damaged_pages_found_by_a_query_are_one_line(env, tmp_path):
    db = tmp_path / "data" / "cortex.db"
    assert nous(["init"], env).returncode == 0
    raw = sqlite3.connect(db)
    page = raw.execute("PRAGMA page_size").fetchone()[0]
    roots = [r[0] for r in raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'memories'")]
    raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    raw.close()
    with open(db, "r+b") as fh:  # the schema page is intact, so the database opens; one table's root is garbage
        fh.seek((roots[0] - 1) * page)
        fh.write(b"\xa5" * page)
    line = one_error_line(nous(["memories"], env))
    assert "damaged or not a SQLite database" in line and "backup" in line


# -- the central mapping, on real exceptions -----------------------------------------------------------
def test_storage_error_maps_real_failures(tmp_path):
    with pytest.raises(OSError) as full, open("/dev/full", "wb") as fh:  # the kernel's always-full device
        fh.write(b"x")
    assert isinstance(storage_error(full.value), DiskFullError)
    with pytest.raises(Exception) as parquet:
        pl.DataFrame({"a": list(range(50_000))}).write_parquet("/dev/full")  # polars reports "os error 28"
    assert isinstance(storage_error(parquet.value), DiskFullError)
    assert isinstance(storage_error(OSError(errno.EROFS, "Read-only file system", "/x")), ReadOnlyError)

    import sqlalchemy

    path = tmp_path / "runs.db"
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("CREATE TABLE t(x)")
    holder.execute("BEGIN IMMEDIATE")
    engine = sqlalchemy.create_engine(f"sqlite:///{path}", connect_args={"timeout": 0.05})
    with pytest.raises(sqlalchemy.exc.OperationalError) as locked, engine.begin() as c:
        c.execute(sqlalchemy.text("INSERT INTO t VALUES (1)"))
    holder.close()
    engine.dispose()
    mapped = storage_error(locked.value)
    assert isinstance(mapped, DatabaseLockedError) and "Dagster's run storage" in str(mapped)

    bad = tmp_path / "bad.db"
    bad.write_bytes(b"x" * 4096)
    with pytest.raises(sqlite3.DatabaseError) as notadb:
        sqlite3.connect(bad).execute("SELECT * FROM sqlite_master").fetchall()
    assert isinstance(storage_error(notadb.value, bad), CorruptDatabaseError)
    assert storage_error(ValueError("unrelated")) is None

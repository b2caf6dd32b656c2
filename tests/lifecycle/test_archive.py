"""Hot and cold tiers: ``nous archive``, ``nous restore``, ``nous replay --include-archives [--verify]``.

Real cortex.db files, real zstd segment files, the real CLI in a subprocess where a process is killed.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import zstandard
from eventgen import extracted
from eventgen import lifecycle as lifecycle_event
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nous_assets.cli import main
from nous_assets.lifecycle import archive as lifecycle
from nous_assets.store.db import open_db
from nous_assets.store.log import archive as cold
from nous_assets.store.search import memory_lookup
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project, snapshot, verify

NOUS = [sys.executable, "-m", "nous_assets.cli"]
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def _history(n: int = 60) -> list:
    """Extractions recorded in 2023, 2024 and 2025, then reinforcements, contradictions and supersessions of
    them recorded later (some before the cutoff, some after), and an archival."""
    events = []
    for i in range(n):
        year = 2023 + i % 3
        events.append(
            extracted(f"L{i}", f"memory number {i} says use tool{i} for step {i % 7}", key=f"x{i}",
                      session=f"s{i % 9}", transaction_time=f"{year}-0{1 + i % 9}-11T08:00:{i % 60:02d}Z",
                      valid_from=f"{year}-0{1 + i % 9}-10")  # fmt: skip
        )
    for i in range(0, n, 4):
        events.append(lifecycle_event("LearningReinforced", f"L{i}", {"reinforcement_delta": 0.1}, key=f"r{i}",
                                      transaction_time="2025-11-02T00:00:00Z"))  # fmt: skip
    contradiction = {"contradicted_with": "L2", "contradiction_multiplier": 0.7}
    events.append(lifecycle_event("LearningContradicted", "L1", contradiction, key="c1", transaction_time="2024-12-01"))
    events.append(lifecycle_event("LearningSuperseded", "L5", {"superseded_by": "L8"}, key="sup5",
                                  transaction_time="2026-02-01T00:00:00Z"))  # fmt: skip
    events.append(lifecycle_event("LearningArchived", "L7", {"reason": "decay"}, key="a7",
                                  transaction_time="2024-06-01T00:00:00Z"))  # fmt: skip
    return events


def _stream(conn) -> bytes:
    return b"".join(cold.stream_line(r) for r in cold.live_stream(conn))


@pytest.fixture
def populated(tmp_path: Path):
    conn = open_db(tmp_path / "cortex.db", create=True)
    SqliteEventStore(conn).append_many(_history())
    project(conn)
    yield conn, tmp_path
    conn.close()


def test_archive_moves_old_events_into_year_segments_and_the_projection_stays(populated):
    conn, tmp = populated
    total = SqliteEventStore(conn).last_event_id()
    before, stream = snapshot(conn), _stream(conn)
    report = lifecycle.archive(conn, tmp / "archive", "2025-06-01T00:00:00Z")

    names = [s.archive_path for s in report.segments]
    assert names == ["cortex-archive-2023.db.zst", "cortex-archive-2024.db.zst", "cortex-archive-2025.db.zst"]
    live = conn.execute("SELECT count(*), min(transaction_time) FROM learning_events").fetchone()
    assert live[0] + report.events == total and live[1] >= "2025-06-01"
    assert cold.archived_count(conn) == report.events
    for segment in report.segments:
        data = (tmp / "archive" / segment.archive_path).read_bytes()
        assert data[:4] == ZSTD_MAGIC and len(data) == segment.compressed_bytes
        assert (tmp / "archive" / segment.archive_path).stat().st_mode & 0o077 == 0  # private
    assert (tmp / "archive").stat().st_mode & 0o077 == 0
    rows = conn.execute("SELECT event_count, stream_checksum_sha256, tier FROM archive_segments").fetchall()
    assert sum(r[0] for r in rows) == report.events and all(len(r[1]) == 64 and r[2] == "cold" for r in rows)
    assert snapshot(conn) == before  # archived events stay represented in memories
    assert _stream(conn) != stream

    again = lifecycle.archive(conn, tmp / "archive", "2025-06-01T00:00:00Z")
    assert again.events == 0 and again.segments == []  # idempotent


def test_a_later_archive_of_the_same_year_gets_its_own_segment(populated):
    conn, tmp = populated
    first = lifecycle.archive(conn, tmp / "archive", "2025-05-01T00:00:00Z")
    second = lifecycle.archive(conn, tmp / "archive", "2025-12-01T00:00:00Z")
    assert "cortex-archive-2025.db.zst" in [s.archive_path for s in first.segments]
    assert "cortex-archive-2025.2.db.zst" in [s.archive_path for s in second.segments]
    ranges = [(s.min_event_id, s.max_event_id) for s in cold.segments(conn)]
    assert len(ranges) == len(first.segments) + len(second.segments)


def test_only_projected_events_move(populated):
    conn, tmp = populated
    SqliteEventStore(conn).append(extracted("late", "recorded long ago, not projected yet", key="late",
                                      transaction_time="2023-05-05"))  # fmt: skip
    lifecycle.archive(conn, tmp / "archive", "2025-06-01")
    assert conn.execute("SELECT count(*) FROM learning_events WHERE learning_id = 'late'").fetchone()[0] == 1


def test_the_live_log_still_knows_archived_events(populated):
    conn, tmp = populated
    lifecycle.archive(conn, tmp / "archive", "2025-06-01")
    store = SqliteEventStore(conn)
    again = store.append(extracted("L0", "memory number 0 says use tool0 for step 0", key="x0",
                                   transaction_time="2023-01-11"))  # fmt: skip
    assert not again.created and again.event.event_id == 1  # a replayed extraction writes nothing
    assert memory_lookup.has_extraction(conn, "L0") and not memory_lookup.has_extraction(conn, "never")
    reinforced = store.append(lifecycle_event("LearningReinforced", "L3", {"reinforcement_delta": 0.1}, key="new-r3"))
    assert reinforced.created  # a learning extracted long ago can still be reinforced
    project(conn)
    assert verify(conn).ok is False  # the live log alone no longer explains the projection …
    with lifecycle.cold_segments(conn, tmp / "archive", tmp) as raws:
        assert verify(conn, cold_segments=raws).ok  # … the live log and the cold tier do


def test_restore_verifies_then_round_trips_the_event_stream(populated):
    conn, tmp = populated
    stream, before = _stream(conn), snapshot(conn)
    report = lifecycle.archive(conn, tmp / "archive", "2025-06-01")
    for segment in report.segments:
        done = lifecycle.restore(conn, tmp / "archive", segment.archive_path)
        assert done.inserted == segment.event_count
    assert _stream(conn) == stream and snapshot(conn) == before
    assert cold.archived_count(conn) == 0
    assert all(s.restored_at for s in cold.segments(conn))
    repeat = lifecycle.restore(conn, tmp / "archive", report.segments[0].archive_path)
    assert repeat.inserted == 0 and _stream(conn) == stream  # idempotent
    assert verify(conn).ok


def _rewrite_segment(path: Path, sql: str) -> None:
    """Decompress a segment, change it with ``sql`` and compress it again (a tampered or rotten file)."""
    raw = path.with_suffix(".raw")
    raw.write_bytes(zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes()))
    db = sqlite3.connect(raw)
    db.execute(sql)
    db.commit()
    db.close()
    path.write_bytes(zstandard.ZstdCompressor().compress(raw.read_bytes()))
    raw.unlink()


def test_restore_refuses_a_segment_whose_checksum_does_not_match(populated):
    conn, tmp = populated
    report = lifecycle.archive(conn, tmp / "archive", "2025-06-01")
    path = tmp / "archive" / report.segments[0].archive_path
    _rewrite_segment(path, "UPDATE learning_events SET payload_json = '{\"content\":\"forged\"}' WHERE rowid = 1")
    live = _stream(conn)
    with pytest.raises(lifecycle.ArchiveError, match="checksum mismatch"):
        lifecycle.restore(conn, tmp / "archive", path.name)
    assert _stream(conn) == live and cold.archived_count(conn) == report.events  # nothing restored
    path.write_bytes(b"not zstd at all")
    with pytest.raises(lifecycle.ArchiveError, match="not a readable zstd archive"):
        lifecycle.restore(conn, tmp / "archive", path.name)
    with pytest.raises(lifecycle.ArchiveError, match="no archive segment"):
        lifecycle.restore(conn, tmp / "archive", "cortex-archive-1999.db.zst")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    years=st.lists(st.integers(2019, 2026), min_size=1, max_size=40),
    cutoff=st.integers(2019, 2027),
    lifecycle_every=st.integers(2, 6),
    order=st.randoms(use_true_random=False),
)
def test_archive_then_restore_round_trips_byte_for_byte(new_db, years, cutoff, lifecycle_every, order):
    """Whatever the history and the cutoff: archive + restore gives back the same event stream, byte for byte,
    and in between a replay of both tiers equals the live projection."""
    events = [
        extracted(f"P{i}", f"property memory {i} about {y}", key=f"px{i}", session=f"s{i % 3}",
                  transaction_time=f"{y}-0{1 + i % 9}-0{1 + i % 8}T0{i % 10}:00:00Z")  # fmt: skip
        for i, y in enumerate(years)
    ]
    events += [
        lifecycle_event("LearningWeakened", f"P{i}", {"reinforcement_delta": -0.05, "reason": "decay"},
                        key=f"pw{i}", transaction_time=f"{y}-12-30")  # fmt: skip
        for i, y in enumerate(years)
        if i % lifecycle_every == 0
    ]
    order.shuffle(events)  # recorded times need not follow event ids
    extracted_first = sorted(events, key=lambda e: e.event_type != "LearningExtracted")
    with tempfile.TemporaryDirectory() as tmp:
        conn = new_db(Path(tmp) / "cortex.db")
        try:
            SqliteEventStore(conn).append_many(extracted_first)
            project(conn)
            stream, before = _stream(conn), snapshot(conn)
            report = lifecycle.archive(conn, Path(tmp) / "archive", f"{cutoff}-01-01")
            with lifecycle.cold_segments(conn, Path(tmp) / "archive", Path(tmp)) as raws:
                assert verify(conn, cold_segments=raws).ok
            for segment in report.segments:
                lifecycle.restore(conn, Path(tmp) / "archive", segment.archive_path)
            assert _stream(conn) == stream and snapshot(conn) == before
        finally:
            conn.close()


# -- the CLI ------------------------------------------------------------------------------------------
def _seed_cli_store(env: dict[str, str]) -> Path:
    db = Path(env["NOUS_DATA_DIR"]) / "cortex.db"
    assert main(["init"]) == 0
    conn = open_db(db)
    SqliteEventStore(conn).append_many(_history(300))
    conn.close()
    return db


def test_cli_archive_list_replay_and_restore(nous_env, capsys):
    db = _seed_cli_store(nous_env)
    capsys.readouterr()
    assert main(["archive", "--before", "2025-06-01"]) == 0  # projects first, then moves
    out = capsys.readouterr()
    assert "cortex-archive-2023.db.zst" in out.out and "moved to 3 segment(s)" in out.err
    assert main(["archive", "--list", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [s["restored_at"] for s in listed] == [None, None, None]

    assert main(["replay", "--verify"]) == 1
    assert "add --include-archives" in capsys.readouterr().err
    assert main(["replay", "--include-archives", "--verify"]) == 0
    assert "OK: the live projection equals a full replay" in capsys.readouterr().out
    assert main(["memories", "--as-of", "2025-01-01"]) == 1  # a replay of the live log alone would be wrong
    assert "`nous restore` them first" in capsys.readouterr().err
    conn = open_db(db)
    before = snapshot(conn)
    conn.close()
    assert main(["replay", "--include-archives"]) == 0
    conn = open_db(db)
    assert snapshot(conn) == before
    conn.close()

    assert main(["restore", "cortex-archive-2024.db.zst"]) == 0
    assert "checksum verified" in capsys.readouterr().out
    assert main(["restore", "--archive", "cortex-archive-2024.db.zst"]) == 0
    assert "already restored" in capsys.readouterr().out
    assert main(["archive"]) == 0  # the default cutoff, thresholds.hot_tier_days (90) days ago, takes the rest
    assert "cortex-archive-2025.2.db.zst" in capsys.readouterr().out
    conn = open_db(db)
    assert conn.execute("SELECT count(*) FROM learning_events").fetchone()[0] == 0
    conn.close()
    assert main(["replay", "--include-archives", "--verify"]) == 0
    assert main(["archive", "--before", "yesterday-ish"]) == 1
    assert "neither an age like 90d" in capsys.readouterr().err


_KILLER = """
import os, signal, sys
from pathlib import Path
from nous_assets.lifecycle import archive
from nous_assets.store.db import open_db

db, archive_dir, where = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
conn = open_db(db)

def die(*_):
    os.kill(os.getpid(), signal.SIGKILL)

calls = []

def die_later(*_):
    calls.append(1)
    if len(calls) >= 2500:  # ~2.5M SQLite instructions: the first move is deleting rows (it commits at ~3,000)
        die()
    return 0

def in_transaction(segment):
    conn.set_progress_handler(die_later, 1000)

kwargs = {
    "before-move": {"before_move": die},
    "in-transaction": {"before_move": in_transaction},
    "mid-segment": {"progress": lambda what, n: die() if n >= 20000 else None},
}[where]
archive.archive(conn, archive_dir, "2025-06-01T00:00:00.000000Z", **kwargs)
"""


@pytest.fixture(scope="module")
def kill_history_db(tmp_path_factory) -> Path:
    """The kill tests' history appended and projected once (30,000 events, ~10 s): each test works on a copy."""
    db = tmp_path_factory.mktemp("kill-history") / "cortex.db"
    conn = open_db(db, create=True)
    SqliteEventStore(conn).append_many(_kill_history())
    project(conn)
    conn.close()  # the last close folds the WAL into the file
    return db


@pytest.fixture(scope="module")
def clean_run(tmp_path_factory, kill_history_db):
    """Event counts of a clean (never killed) archive of the kill test's history."""
    tmp = tmp_path_factory.mktemp("clean")
    shutil.copyfile(kill_history_db, tmp / "cortex.db")
    conn = open_db(tmp / "cortex.db")
    report = lifecycle.archive(conn, tmp / "archive", "2025-06-01T00:00:00.000000Z")
    live = conn.execute("SELECT count(*) FROM learning_events").fetchone()[0]
    conn.close()
    return {"live": live, "archived": report.events, "segments": len(report.segments)}


def _kill_history() -> list:
    """Enough events in one year that the writer is killed mid-segment (after 20,000 rows)."""
    return [
        extracted(f"K{i}", f"kill test memory {i} names file{i % 97}.py", key=f"k{i}", session=f"s{i % 50}",
                  transaction_time=f"{2023 + (i % 10 == 0)}-0{1 + i % 9}-15T00:00:00Z")  # fmt: skip
        for i in range(30_000)
    ]


@pytest.mark.parametrize("where", ["mid-segment", "before-move", "in-transaction"])
def test_kill_9_during_archive_then_rerun_loses_and_duplicates_nothing(
    tmp_path, where, kill_history_db, clean_run, nous_env
):
    db = tmp_path / "cortex.db"
    shutil.copyfile(kill_history_db, db)
    conn = open_db(db)
    original = _stream(conn)
    conn.close()
    archive_dir = tmp_path / "archive"
    killed = subprocess.run([sys.executable, "-c", _KILLER, str(db), str(archive_dir), where],
                            capture_output=True, text=True, timeout=300)  # fmt: skip
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    leftovers = sorted(p.name for p in archive_dir.iterdir())
    assert leftovers  # the kill left a partial or an unrecorded segment file behind
    conn = open_db(db)
    assert _stream(conn) == original and cold.segments(conn) == []  # the killed move changed nothing
    assert conn.execute("SELECT count(*) FROM nous_meta WHERE key = 'archive_in_progress'").fetchone()[0] == 0
    conn.close()

    env = {**nous_env, "NOUS_DB_PATH": str(db), "NOUS_ARCHIVE_DIR": str(archive_dir), "PATH": "/usr/bin:/bin"}
    rerun = subprocess.run([*NOUS, "archive", "--before", "2025-06-01T00:00:00Z"], env=env,
                           capture_output=True, text=True, timeout=300)  # fmt: skip
    assert rerun.returncode == 0, rerun.stderr
    if where in ("before-move", "in-transaction"):
        assert "completed the interrupted move" in rerun.stdout
    else:
        assert "removed 2 partial file(s)" in rerun.stdout or "removed 1 partial file(s)" in rerun.stdout

    conn = open_db(db)
    live = conn.execute("SELECT count(*) FROM learning_events").fetchone()[0]
    assert (live, cold.archived_count(conn), len(cold.segments(conn))) == (
        clean_run["live"], clean_run["archived"], clean_run["segments"],
    )  # fmt: skip
    conn.close()
    verified = subprocess.run([*NOUS, "replay", "--include-archives", "--verify"], env=env,
                              capture_output=True, text=True, timeout=300)  # fmt: skip
    assert verified.returncode == 0 and "OK" in verified.stdout, verified.stdout + verified.stderr
    assert not [p for p in archive_dir.iterdir() if p.name.endswith(".tmp")]
    conn = open_db(db)
    for segment in cold.segments(conn):
        lifecycle.restore(conn, archive_dir, segment.archive_path, scratch_dir=tmp_path)
    assert _stream(conn) == original  # nothing lost, nothing duplicated
    conn.close()


def test_archive_help_explains(nous_env):
    out = subprocess.run([*NOUS, "archive", "--help"], env={**nous_env, "PATH": "/usr/bin:/bin"},
                         capture_output=True, text=True, timeout=60)  # fmt: skip
    assert out.returncode == 0 and "--before" in out.stdout and "90d" in out.stdout
    assert os.environ.get("NOUS_DATA_DIR") == nous_env["NOUS_DATA_DIR"]

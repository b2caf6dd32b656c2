"""Secrets in metadata (issue 20, point 5): a token in a transcript's ``gitBranch``, an access key in its ``cwd``
and in the Claude Code folder named after it, a token in a session title. Nothing stored (cortex.db, the lake,
any JSON file under the data dir) or printed (``nous memories``, ``nous review``) holds them; the project id
derived from the redacted path is the one the SessionStart hook computes, on every run; and data stored before
capture redacted metadata is cleaned by ``nous redact --rescan``, a second rescan finding nothing.

The transcript is a real one (../shared/data/transcripts/episodic-memory/tiny-conversation.jsonl) with its
``cwd`` and ``gitBranch`` replaced.
"""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path

import polars as pl
import pytest

from nous_assets.cli import main
from resolver import cache_read
from resolver.fingerprint import build_fingerprint
from resolver.project import project_id_from_cwd, project_id_from_folder

pytestmark = pytest.mark.slow

AWS_KEY = "AKIAZ7QRT4MXW2NPLJ5K"  # shaped like an access key id (no EXAMPLE: that is a placeholder)
GITHUB_TOKEN = "ghp_" + "aB3dE5fG7hJ9kL1mN3pQ5rS7tU9vW1xY3zA5"  # ghp_ + 36 alphanumerics
SECRETS = (AWS_KEY, GITHUB_TOKEN, GITHUB_TOKEN.replace("_", "-"))  # a folder name turns "_" into "-"
CWD = f"/home/dev/{AWS_KEY}/app"
BRANCH = f"feature/{GITHUB_TOKEN}"
TINY = "episodic-memory/tiny-conversation.jsonl"


def _transcript(shared_corpus: Path, tmp_path: Path) -> tuple[Path, str]:
    """The real transcript in a projects folder named after ``CWD``, with ``CWD``, ``BRANCH`` and a session title
    naming the token; (the projects dir, the session id)."""
    lines = []
    for line in (shared_corpus / TINY).read_text().splitlines():
        record = json.loads(line)
        record.update({k: v for k, v in (("cwd", CWD), ("gitBranch", BRANCH)) if k in record})
        lines.append(record)
    session = lines[0]["sessionId"]
    title = {"type": "summary", "summary": f"Deploy from {BRANCH}", "leafUuid": lines[-1]["uuid"]}
    folder = tmp_path / "home" / ".claude" / "projects" / re.sub(r"[^A-Za-z0-9]", "-", CWD)
    folder.mkdir(parents=True)
    (folder / f"{session}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in [*lines, title]))
    return folder.parent, session


def _leaks(pipe, *, db_bytes: bool = True) -> list[str]:
    """Where under the data dir a secret is: any file's bytes (cortex.db's only with ``db_bytes``: an UPDATE leaves
    the old content in freed pages until a VACUUM), parquet files decoded, every text column of every table."""
    data_dir = Path(pipe.env["NOUS_DATA_DIR"])
    found = []
    for path in sorted(p for p in data_dir.rglob("*") if p.is_file() and (db_bytes or "cortex.db" not in p.name)):
        text = path.read_bytes().decode("utf-8", "replace")
        if path.suffix == ".parquet":
            text += json.dumps(pl.read_parquet(path).to_dicts(), default=str)
        found += [f"{path.relative_to(data_dir)}: {s[:6]}…" for s in SECRETS if s in text]
    conn = pipe.conn()
    try:
        for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
            for column in [r[1] for r in conn.execute(f"PRAGMA table_info('{table}')")]:
                query = f'SELECT count(*) FROM "{table}" WHERE instr(CAST("{column}" AS TEXT), ?) > 0'
                found += [f"cortex.db {table}.{column}: {s[:6]}…" for s in SECRETS if _count(conn, query, s)]
    finally:
        conn.close()
    return found


def _count(conn: sqlite3.Connection, query: str, secret: str) -> int:
    try:
        return conn.execute(query, (secret,)).fetchone()[0]
    except sqlite3.OperationalError:  # a column a virtual table does not let SQL read
        return 0


def _printed(capsys: pytest.CaptureFixture[str], *commands: list[str]) -> str:
    out = ""
    for command in commands:
        assert main(command) == 0
        out += capsys.readouterr().out
    return out


def _hook_project(data_dir: Path) -> str | None:
    """The project the SessionStart hook's packet comes from for a session starting in ``CWD``."""
    packet = cache_read.best_packet(data_dir / "cortex.db", build_fingerprint(CWD), "startup")
    return packet.project_id if packet is not None and packet.scope == "project" else None


def test_secrets_in_cwd_folder_branch_and_title_are_stored_and_printed_redacted(
    tmp_path, shared_corpus, pipeline_factory, capsys
):
    projects, session = _transcript(shared_corpus, tmp_path)
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    data_dir = Path(pipe.env["NOUS_DATA_DIR"])
    pipe.run()
    assert pipe.count("SELECT count(*) FROM memories") >= 1
    assert _leaks(pipe) == []
    out = _printed(capsys, ["memories"], ["review"], ["review", "--json"])
    assert not [s for s in SECRETS if s in out]

    project = project_id_from_cwd(CWD)  # what the hook computes, standard library only
    assert project == project_id_from_folder(re.sub(r"[^A-Za-z0-9]", "-", CWD))
    assert project == "-home-dev--REDACTED-aws-access-key--app"
    assert f"project={project}" in out
    turns = pl.read_parquet(next((data_dir / "lake" / "transcripts").glob("date=*/turns.parquet")))
    assert set(turns["cwd"].drop_nulls()) == {"/home/dev/[REDACTED:aws_access_key]/app"}
    assert set(turns["git_branch"].drop_nulls()) == {"feature/[REDACTED:github_token]"}
    assert set(turns["source_path"]) == {str(projects / "-home-dev-[REDACTED:aws_access_key]-app" / f"{session}.jsonl")}
    assert any("Deploy from feature/[REDACTED:github_token]" in t for t in turns["text"])  # the session title
    assert _hook_project(data_dir) == project

    pipe.run()  # a second run: the same id, the same single cursor, nothing read twice
    assert {r for (r,) in pipe.conn().execute("SELECT DISTINCT project_id FROM memories")} == {project}
    assert pipe.count("SELECT count(*) FROM ingest_cursors") == 1
    assert pipe.count("SELECT count(*) FROM ingest_events") == 1
    assert _leaks(pipe) == []


def _store_metadata_raw(monkeypatch: pytest.MonkeyPatch) -> None:
    """Capture and identity as they were before metadata was redacted: every name stored as read."""
    import nous_assets.capture.discovery as discovery
    import nous_assets.capture.scan as scan
    import nous_assets.identity.resolve as identity

    monkeypatch.setattr(scan, "redact_turn_metadata", lambda turn: (turn, {}))
    monkeypatch.setattr(scan, "stored_path", str)
    monkeypatch.setattr(scan, "_redact_link", lambda link: link)
    monkeypatch.setattr(scan, "project_id_from_folder", lambda folder: folder)
    monkeypatch.setattr(discovery, "project_id_from_folder", lambda folder: folder)
    monkeypatch.setattr(identity, "redact_meta", lambda value, path=False: value)
    monkeypatch.setattr(identity, "project_id_from_cwd", lambda cwd: re.sub(r"[^A-Za-z0-9]", "-", cwd))


def test_rescan_redacts_metadata_stored_before_capture_did(tmp_path, shared_corpus, pipeline_factory, capsys):
    projects, _ = _transcript(shared_corpus, tmp_path)
    pipe = pipeline_factory(str(projects / "**" / "*.jsonl"))
    data_dir = Path(pipe.env["NOUS_DATA_DIR"])
    with pytest.MonkeyPatch.context() as old:
        _store_metadata_raw(old)
        pipe.run()
    before = _leaks(pipe, db_bytes=False)
    for where in ("turns.parquet", "_files.json", "learning_events.project_id", "memories.project_id",
                  "ingest_cursors.transcript_path", "project_aliases.alias", "transcript_chunks.source_path",
                  "injection_cache.fingerprint_json", "chunk_vectors.folder"):  # fmt: skip
        assert any(where in leak for leak in before), (where, before)
    memories = pipe.count("SELECT count(*) FROM memories")

    dry = _printed(capsys, ["redact", "--rescan", "--dry-run"])
    assert "would remove" in dry and "learning_events.project_id" in dry and "to rewrite" in dry
    assert _leaks(pipe, db_bytes=False) == before  # counted, nothing written
    first = _printed(capsys, ["redact", "--rescan"])
    assert re.search(r"removed [1-9][\d,]* secret\(s\) \(aws_access_key \d+, github_token \d+\)", first), first
    for where in ("learning_events.project_id", "ingest_cursors.transcript_path", "lake_manifest_paths"):
        assert re.search(rf"{re.escape(where)}\s+\d+ rewritten", first), first
    assert _leaks(pipe, db_bytes=False) == []
    assert pipe.count("SELECT count(*) FROM memories") == memories
    second = _printed(capsys, ["redact", "--rescan"])
    assert "removed 0 secret(s)" in second and "rewritten" not in second and "dropped" not in second

    pipe.run()  # the cursors found under their redacted paths; packets rebuilt under the redacted id
    assert _leaks(pipe, db_bytes=False) == []
    assert pipe.count("SELECT count(*) FROM memories") == memories
    assert _hook_project(data_dir) == project_id_from_cwd(CWD)
    out = _printed(capsys, ["memories"], ["review"], ["redact", "--rescan"])
    assert not [s for s in SECRETS if s in out]
    assert "removed 0 secret(s)" in out

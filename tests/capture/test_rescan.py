"""`nous redact --rescan` on a store written by an older redactor that let secrets through.

The old store is built the way an older build would have left it: raw turns in the Parquet lake, raw
chunks, raw event payloads appended through the event store, a packet in the injection cache — all through
the real store and lake APIs, only without today's redaction. The rescan runs through the real CLI.
"""

from __future__ import annotations

import json
import random
import string
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest

from nous_assets.capture.lake import quarantine_path, turns_path, write_partition
from nous_assets.capture.parser import Quarantined, ToolResult, ToolUse, Turn
from nous_assets.cli import main
from nous_assets.embed.chunk_embedding import upsert_chunks
from nous_assets.store.db import IntegrityError, open_db
from nous_assets.store.ingest.redaction import rescan_transaction
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.events import SqliteEventStore
from nous_assets.store.sqlite.projection import project

DATE = "2026-03-02"
_RNG = random.Random(2024)


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# Assembled at run time: nothing here is a real credential, and the file holds nothing a scanner flags.
STRIPE = "rk_" + "test_" + _rand(24)
SENTRY = _rand(64, "0123456789abcdef")
HEROKU = "-".join(_rand(n, "0123456789abcdef") for n in (8, 4, 4, 4, 12))
SECRETS = (STRIPE, SENTRY, HEROKU)


def _turn(uuid: str, text: str, **kw) -> Turn:
    values = dict(
        uuid=uuid, uuids=(uuid,), parent_uuid=None, session_id="s1", project_id="proj", role="user",
        kind="message", timestamp=f"{DATE}T10:00:00.000000Z", text=text, thinking="", tool_uses=(),
        tool_results=(), message_id=None, request_id=None, model=None, is_sidechain=False, agent_id=None,
        is_meta=False, is_compact_summary=False, cwd="/home/dev/app", git_branch="main", version="2.1.0",
        source_path="/home/dev/.claude/projects/-home-dev-app/s1.jsonl", byte_start=0, byte_end=100,
        line_offsets=(0,),
    )  # fmt: skip
    values.update(kw)
    return Turn(**values)


@pytest.fixture
def old_store(nous_env: dict[str, str]) -> dict[str, Path]:
    """A data dir as an older redactor left it: the three secrets in every place they can be stored."""
    assert main(["init"]) == 0
    data = Path(nous_env["NOUS_DATA_DIR"])
    lake = data / "lake"
    turns = [
        _turn("u1", f"here is the stripe key {STRIPE}, use it for the webhook tests"),
        _turn("u2", "Deploying now.", role="assistant", tool_uses=(
            ToolUse("toolu_1", "Bash", json.dumps({"command": f"export SENTRY_AUTH_TOKEN={SENTRY} && make deploy"})),
        )),  # fmt: skip
        _turn("u3", "", kind="tool_result", tool_results=(
            ToolResult("toolu_1", f"NODE_ENV=production\nHEROKU_KEY={HEROKU}\n", False, False, None),
        )),  # fmt: skip
        _turn("u4", "nothing secret here, just a note about the deploy"),
    ]
    quarantined = [Quarantined(turns[0].source_path, 500, 3, "invalid JSON", f'{{"text": "token {STRIPE}')]
    write_partition(lake, DATE, turns, quarantined)
    conn = open_db(data / "cortex.db")
    try:
        upsert_chunks(conn, turns)
        payload = {
            "content": f"Deploys read HEROKU_KEY={HEROKU}; the sentry token is {SENTRY}.",
            "extractor_version": "old-llm",
            "concepts": ["deploy", "heroku"],
            "edges": [],
            "provenance": {"session_id": "s1", "note": f"user pasted {STRIPE}"},
        }
        SqliteEventStore(conn).append_many(
            [
                LearningEvent("LearningExtracted", "l1", payload, "s1", "proj", "historical_backfill", "k1"),
                LearningEvent(
                    "LearningExtracted", "l2",
                    {"content": "Run the tests with uv run pytest", "extractor_version": "old-llm", "concepts": [],
                     "edges": []},
                    "s1", "proj", "historical_backfill", "k2",
                ),  # fmt: skip
            ]
        )
        project(conn)
        conn.execute(
            "INSERT INTO injection_cache(cache_key, project_id, scope, fingerprint_json, packet_text, "
            "memory_ids_json, char_count, built_from_event_id, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ("proj:default", "proj", "project", "{}", f"- Deploys read HEROKU_KEY={HEROKU}", "[1]", 40, 2, DATE),
        )
    finally:
        conn.close()
    return {"data": data, "lake": lake, "db": data / "cortex.db"}


def _everything_stored(paths: dict[str, Path]) -> str:
    """All stored text: lake partitions read back from Parquet, and every text column of cortex.db."""
    parts = [json.dumps(pl.read_parquet(turns_path(paths["lake"], DATE)).to_dicts(), default=str)]
    parts.append(json.dumps(pl.read_parquet(quarantine_path(paths["lake"], DATE)).to_dicts()))
    conn = open_db(paths["db"])
    try:
        for sql in (
            "SELECT payload_json FROM learning_events",
            "SELECT content FROM memories",
            "SELECT content FROM memories_fts",
            "SELECT text FROM transcript_chunks",
            "SELECT text FROM chunks_fts",
            "SELECT packet_text FROM injection_cache",
        ):
            parts.extend(r[0] for r in conn.execute(sql))
    finally:
        conn.close()
    return "\n".join(parts)


def _audit(paths: dict[str, Path]) -> list[dict]:
    conn = open_db(paths["db"])
    try:
        cols = ("run_id", "location", "row_ref", "field", "kind", "count", "created_at")
        return [dict(zip(cols, r, strict=True)) for r in conn.execute(f"SELECT {', '.join(cols)} FROM redaction_audit")]
    finally:
        conn.close()


def test_rescan_removes_secrets_an_older_redactor_missed(old_store, capsys) -> None:
    before = _everything_stored(old_store)
    assert all(secret in before for secret in SECRETS)

    assert main(["redact", "--rescan", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "would remove" in out and "learning_events" not in out
    assert _everything_stored(old_store) == before and _audit(old_store) == []  # a dry run writes nothing

    assert main(["redact", "--rescan"]) == 0
    out = capsys.readouterr().out
    assert "removed" in out and "audit row(s)" in out
    after = _everything_stored(old_store)
    for secret in SECRETS:
        assert secret not in after
    assert "uv run pytest" in after and "nothing secret here" in after  # the rest is untouched

    audit = _audit(old_store)
    locations = {row["location"] for row in audit}
    assert {"learning_events", "transcript_chunks", "injection_cache", f"lake:transcripts/date={DATE}",
            f"lake:quarantine/date={DATE}"} <= locations  # fmt: skip
    assert any(r["location"] == "learning_events" and r["field"] == "$.content" for r in audit)
    assert any(r["location"] == "learning_events" and r["field"] == "$.provenance.note" for r in audit)
    assert all(r["count"] > 0 and r["kind"] and r["created_at"] for r in audit)
    assert len({r["run_id"] for r in audit}) == 1
    dumped = json.dumps(audit)
    assert not any(secret in dumped for secret in SECRETS)  # the audit never holds the secret

    # the sanctioned edit kept the log valid: a full replay equals the rebuilt projection
    assert main(["replay", "--verify"]) == 0
    capsys.readouterr()

    # idempotent: a second run changes nothing and records nothing
    assert main(["redact", "--rescan", "--json"]) == 0
    second = json.loads(capsys.readouterr().out)
    assert second["changed"] == {} and second["audit_rows"] == 0
    assert _everything_stored(old_store) == after and len(_audit(old_store)) == len(audit)


def test_rescan_drops_stale_vectors_of_changed_chunks(old_store) -> None:
    conn = open_db(old_store["db"])
    try:
        ids = [r[0] for r in conn.execute("SELECT id FROM transcript_chunks ORDER BY id")]
        for chunk_id in ids:
            conn.execute(
                "INSERT INTO chunk_vector_meta(chunk_id, model, dimensions, content_hash, embedded_at) "
                "VALUES (?, 'm', 384, 'h', ?)",
                (chunk_id, DATE),
            )
    finally:
        conn.close()
    assert main(["redact", "--rescan"]) == 0
    conn = open_db(old_store["db"])
    try:
        kept = {r[0] for r in conn.execute("SELECT chunk_id FROM chunk_vector_meta")}
        changed = {int(r["row_ref"]) for r in _audit(old_store) if r["location"] == "transcript_chunks"}
    finally:
        conn.close()
    assert changed and not (kept & changed)  # changed chunks will be embedded again, from redacted text
    assert kept == set(ids) - changed


def test_events_stay_immutable_outside_the_rescan(old_store) -> None:
    conn = open_db(old_store["db"])
    try:
        with pytest.raises(IntegrityError, match="append-only"):
            conn.execute("UPDATE learning_events SET payload_json = '{}' WHERE event_id = 1")
        with pytest.raises(IntegrityError, match="only rewrite payload_json"), rescan_transaction(conn):
            conn.execute("UPDATE learning_events SET session_id = 'other' WHERE event_id = 1")
        # the flag never outlives the rescan's transaction, even when it fails
        assert conn.execute("SELECT count(*) FROM nous_meta WHERE key LIKE 'redaction%'").fetchone()[0] == 0
        with pytest.raises(IntegrityError, match="append-only"):
            conn.execute("UPDATE learning_events SET payload_json = '{}' WHERE event_id = 1")
    finally:
        conn.close()


def test_redact_without_rescan_explains_itself(nous_env, capsys) -> None:
    assert main(["init"]) == 0
    assert main(["redact"]) == 1
    assert "nous: error: nothing to do" in capsys.readouterr().err


def test_turn_fields_unchanged_when_nothing_to_redact(old_store) -> None:
    """Partitions without secrets are not rewritten (the file stays byte-identical)."""
    clean = old_store["lake"] / "transcripts" / "date=2026-03-03" / "turns.parquet"
    turn = replace(_turn("c1", "just words"), timestamp="2026-03-03T09:00:00.000000Z")
    write_partition(old_store["lake"], "2026-03-03", [turn], [])
    data = clean.read_bytes()
    assert main(["redact", "--rescan"]) == 0
    assert clean.read_bytes() == data

"""The whole asset chain over every file of the shared corpus (backfilled once for the module)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from nous_assets.capture.lake import links_path, quarantine_path, turns_path
from resolver.project import project_id_from_cwd

pytestmark = pytest.mark.slow


def _lake(pipe, day: str) -> pl.DataFrame:
    return pl.read_parquet(turns_path(pipe.settings.lake_dir, day))


def test_every_transcript_reaches_the_lake(corpus_pipeline):
    pipe = corpus_pipeline
    days = pipe.days()
    assert len(days) >= 6
    frames = pl.concat([_lake(pipe, d) for d in days])
    sources = {Path(p).name for p in frames["source_path"].unique()}
    projects_dir = Path(pipe.env["NOUS_PROJECT_GLOB"]).parent.parent
    expected = {p.name for p in projects_dir.rglob("*.jsonl") if p.name != "sample_hook_logs.jsonl"}
    assert expected - sources == set()
    assert "sample_hook_logs.jsonl" not in sources  # not a transcript: skipped, never parsed
    assert frames["uuid"].n_unique() == frames.height  # de-duplicated
    assert all(r.success for r in pipe.results)


def test_assistant_blocks_are_merged_and_thinking_is_not_stored(corpus_pipeline):
    frames = pl.concat([_lake(corpus_pipeline, d) for d in corpus_pipeline.days()])
    assistant = frames.filter(pl.col("role") == "assistant")
    dupes = assistant.group_by(["source_path", "message_id", "request_id"]).len().filter(pl.col("len") > 1)
    assert dupes.height == 0
    assert assistant.filter(pl.col("uuids").list.len() > 1).height > 50
    assert "thinking" not in frames.columns


def test_subagent_turns_are_linked_to_their_parent_session(corpus_pipeline):
    pipe = corpus_pipeline
    frames = pl.concat([_lake(pipe, d) for d in pipe.days()])
    sub = frames.filter(pl.col("source_path").str.contains("/subagents/agent-a"))
    assert sub.height > 0
    assert sub["is_sidechain"].all() and sub["agent_id"].null_count() == 0
    for path, session in sub.select("source_path", "session_id").unique().iter_rows():
        assert Path(path).parent.parent.name == session  # <session>/subagents/agent-*.jsonl
    links = pl.concat([pl.read_parquet(links_path(pipe.settings.lake_dir, d)) for d in pipe.days()])
    linked = set(links["agent_id"])
    # every real subagent whose parent transcript exists has its spawning Task call (the corpus lacks one parent)
    spawned = {
        agent
        for agent, path in sub.select("agent_id", "source_path").unique().iter_rows()
        if not agent.startswith("acompact") and (Path(path).parent.parent.with_suffix(".jsonl")).exists()
    }
    assert len(spawned) >= 6 and spawned <= linked
    assert links["parent_tool_use_id"].null_count() == 0


def test_quarantine_partition_written_with_reasons(corpus_pipeline):
    pipe = corpus_pipeline
    for day in pipe.days():
        q = pl.read_parquet(quarantine_path(pipe.settings.lake_dir, day))
        assert set(q.columns) >= {"path", "byte_offset", "reason"}


def test_learnings_have_provenance_pointing_at_real_lines(corpus_pipeline):
    from nous_assets.store.projection.identity import project_map

    pipe = corpus_pipeline
    conn = pipe.conn()
    # events keep the Claude Code folder they were written with (memories carry the canonical project); the
    # brief's evidence comes from any folder of its project
    rows = conn.execute(
        "SELECT m.content, m.provenance_json, e.project_id, m.project_id, m.slot "
        "FROM memories m JOIN learning_events e ON e.event_id = m.id"
    ).fetchall()
    pmap = project_map(conn)
    conn.close()
    assert len(rows) >= 20 and any((slot or "").startswith("brief:") for *_, slot in rows)
    checked = 0
    for _content, prov_json, folder, project, slot in rows:
        prov = json.loads(prov_json)
        path = Path(prov["source_path"])
        assert path.exists()
        if (slot or "").startswith("brief:"):
            where = path.parts[path.parts.index("projects") + 1]
            assert pmap.of(where, prov["session_id"].split("#")[0]) == project
        else:
            assert f"/projects/{folder}/" in str(path)
        with open(path, "rb") as fh:
            for offset in prov["line_offsets"]:
                fh.seek(offset)
                record = json.loads(fh.readline())
                if record.get("type") == "queue-operation":  # a message typed while Claude worked (synthetic uuid)
                    assert any(u.startswith("queued:") for u in prov["uuids"])
                else:
                    assert record["uuid"] in prov["uuids"]
                checked += 1
    assert checked >= len(rows)


def test_backfill_twice_adds_zero_events(corpus_pipeline):
    pipe = corpus_pipeline
    before = pipe.count("SELECT count(*) FROM learning_events")
    queue_before = pipe.count("SELECT count(*) FROM ingest_events")
    pipe.run()
    assert pipe.count("SELECT count(*) FROM learning_events") == before
    assert pipe.count("SELECT count(*) FROM ingest_events") == queue_before
    assert pipe.count("SELECT count(*) FROM ingest_events WHERE status != 'completed'") == 0


def test_cursors_promoted_after_completion(corpus_pipeline):
    pipe = corpus_pipeline
    conn = pipe.conn()
    cursors = dict(conn.execute("SELECT transcript_path, last_offset FROM ingest_cursors").fetchall())
    conn.close()
    for path, offset in cursors.items():
        assert offset == Path(path).stat().st_size  # whole file consumed (every corpus file ends in a newline)
    assert len(cursors) >= 25


def test_session_start_hook_injects_memories_of_the_project_at_hand(corpus_pipeline):
    import os
    import subprocess
    import sys

    pipe = corpus_pipeline
    payload = json.dumps({"session_id": "new-session", "cwd": "/home/marco/projects/spotter", "source": "startup",
                          "hook_event_name": "SessionStart", "transcript_path": "/dev/null"})
    env = {**os.environ, "NOUS_DATA_DIR": pipe.env["NOUS_DATA_DIR"], "HOME": pipe.env["HOME"]}
    env.pop("NOUS_DB_PATH", None)
    out = subprocess.run([sys.executable, "-m", "resolver", "session-start"], input=payload, env=env,
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 0
    context = json.loads(out.stdout)["hookSpecificOutput"]["additionalContext"]
    assert 0 < len(context) <= pipe.settings.thresholds.injection_budget_chars
    conn = pipe.conn()
    ids = [r[0] for r in conn.execute("SELECT memory_id FROM access_log WHERE session_id = 'new-session'")]
    assert ids and len(ids) == len(set(ids))  # what was injected is logged, each memory once
    rows = conn.execute(
        f"SELECT project_id, scope, content FROM memories WHERE id IN ({','.join('?' * len(ids))})", ids).fetchall()
    conn.close()
    # the cwd's project (found through its cwd alias); other projects only with their global-scope memories
    project = project_id_from_cwd("/home/marco/projects/spotter")
    assert any(p == project and scope == "project" for p, scope, _ in rows)
    assert all(p == project or scope == "global" for p, scope, _ in rows)
    assert all(" ".join(content.split())[:40] in context for _, _, content in rows)  # and they are in the text


def test_one_memory_per_learning_across_the_corpus(corpus_pipeline):
    """A learning repeated by other sessions of a project is reinforced, never stored twice."""
    from nous_assets.reconcile.relearn import jaccard, same_subject, same_template, tokens

    conn = corpus_pipeline.conn()
    try:
        # what the store asserts: a refuted or superseded claim is a record of what one session disproved; an
        # observation restates its members by design (it replaces them in packets, issue 24): not a learning
        rows = conn.execute("SELECT learning_id, project_id, content, source_session FROM memories WHERE "
                            "valid_until IS NULL AND status NOT IN ('refuted', 'superseded') "
                            "AND coalesce(kind, '') != 'observation'").fetchall()  # fmt: skip
        relearned = conn.execute(
            "SELECT e.session_id, m.source_session FROM learning_events e JOIN memories m USING (learning_id) "
            "WHERE e.event_type = 'LearningReinforced' AND json_extract(e.payload_json, '$.reason') = 'relearned'"
        ).fetchall()
    finally:
        conn.close()
    assert any(session.split("#")[0] != source.split("#")[0] for session, source in relearned)  # across sessions
    by_project: dict[str, list[str]] = {}
    for _, project, content, _ in rows:
        by_project.setdefault(project, []).append(content)

    def one_learning(a: str, b: str) -> bool:  # alike words about one subject, not one template with other names
        return jaccard(tokens(a), tokens(b)) >= 0.75 and same_subject(a, b) and not same_template(a, b)

    for project, texts in by_project.items():
        pairs = [(a, b) for i, a in enumerate(texts) for b in texts[i + 1 :] if one_learning(a, b)]
        assert pairs == [], project


def test_statuses_come_from_the_evidence_and_a_replay_gives_the_same(corpus_pipeline, tmp_path):
    """Over the real corpus: every status occurs where the transcripts show it, the project brief is in the log,
    and a replay of the whole log reproduces the live projection, statuses included."""
    from nous_assets.store.sqlite.projection import verify

    conn = corpus_pipeline.conn()
    try:
        statuses = dict(conn.execute("SELECT status, count(*) FROM memories GROUP BY status").fetchall())
        brief = conn.execute("SELECT slot, status, content FROM memories WHERE slot LIKE 'brief:%' "
                             "AND superseded_by IS NULL").fetchall()  # fmt: skip
        packets = [r[0] for r in conn.execute("SELECT memory_ids_json FROM injection_cache")]
        injected = {i for p in packets for i in json.loads(p)}
        shown = dict(conn.execute(
            f"SELECT id, status FROM memories WHERE id IN ({','.join(map(str, injected)) or 0})").fetchall())
        report = verify(conn, scratch_dir=tmp_path)
    finally:
        conn.close()
    assert {"verified", "stated", "observed", "hypothesis"} <= set(statuses)
    assert {"refuted", "superseded"} & set(statuses)  # the spotter sessions undo fixes and disprove diagnoses
    assert any(slot in ("brief:cmd:test", "brief:gate") and "`mix test`" in content for slot, _, content in brief)
    assert {s for _, s, _ in brief} <= {"verified", "observed", "stated"}
    assert shown and set(shown.values()) <= {"verified", "stated", "observed"}
    assert report.ok, report.differences[:5]

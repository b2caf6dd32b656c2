"""Claude Code's auto-memory notes come in through the real assets beside a real transcript: with their file and
line, redacted, searchable, listed for review; a second run adds nothing, an edited file supersedes."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from nous_assets.cli import main
from nous_assets.store.ingest import native_notes

FOLDER = "-home-dev-app"
TRANSCRIPT = Path(__file__).resolve().parents[3] / "shared" / "data" / "transcripts" / "episodic-memory" / \
    "short-conversation.jsonl"  # fmt: skip
TOKEN = "ghp_" + "Zx9" * 12


def _notes(p) -> list[tuple]:
    conn = p.conn()
    try:
        return [tuple(r) for r in conn.execute(
            "SELECT event_type, json_extract(payload_json, '$.content'), "
            "json_extract(payload_json, '$.provenance.line'), session_id FROM learning_events "
            "WHERE substr(session_id, 1, 14) = 'claude-memory:' ORDER BY event_id")]
    finally:
        conn.close()


def test_auto_memory_notes_are_ingested_with_provenance_once_and_superseded_when_edited(
    pipeline_factory, tmp_path, monkeypatch, capsys
):
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    config = tmp_path / "home" / ".claude"
    folder = config / "projects" / FOLDER
    folder.mkdir(parents=True)
    shutil.copy(TRANSCRIPT, folder / "0b1c2d3e-0000-4000-8000-000000000001.jsonl")
    memory = folder / "memory"
    memory.mkdir()
    (memory / "MEMORY.md").write_text(
        "# Memory index\n"
        "- [Testing](testing.md) — integration tests hit a real Postgres container\n"
        "- The staging database is reset every night at 02:00 UTC\n"
        f"- The deploy bot authenticates with {TOKEN}\n"
    )
    (memory / "testing.md").write_text("---\nname: testing\ntype: feedback\n---\n"
                                       "Never mock the payment gateway; use the sandbox account.\n")  # fmt: skip
    p = pipeline_factory(str(config / "projects" / "**" / "*.jsonl"))
    p.run()
    first = _notes(p)
    assert [(e, line) for e, _, line, _ in first] == [("LearningExtracted", 2), ("LearningExtracted", 3),
                                                      ("LearningExtracted", 4), ("LearningExtracted", 5)]  # fmt: skip
    assert {s for *_, s in first} == {f"claude-memory:{FOLDER}/MEMORY.md", f"claude-memory:{FOLDER}/testing.md"}
    assert not any(TOKEN in c for _, c, _, _ in first) and any("[REDACTED" in c for _, c, _, _ in first)
    assert p.count("SELECT count(*) FROM ingest_cursors WHERE last_offset > 0") == 1  # the transcript, beside them

    p.run()  # unchanged files: nothing new
    assert _notes(p) == first

    capsys.readouterr()
    assert main(["search", "payment gateway sandbox", "--fts-only", "--no-episodes", "--json"]) == 0
    found = json.loads(capsys.readouterr().out)
    assert "payment gateway" in json.dumps(found)

    (memory / "MEMORY.md").write_text(
        "# Memory index\n"
        "- [Testing](testing.md) — integration tests hit a real Postgres container\n"
        "- The staging database is reset every night at 03:00 UTC\n"
    )
    p.run()
    after = _notes(p)[len(first):]
    kinds = sorted(e for e, *_ in after)
    assert kinds == ["LearningArchived", "LearningExtracted", "LearningSuperseded"]
    conn = p.conn()
    try:
        listed = {n.content: n for n in native_notes.listing(conn)}
        current = {r[0] for r in conn.execute("SELECT content FROM memories WHERE valid_until IS NULL")}
    finally:
        conn.close()
    assert "The staging database is reset every night at 03:00 UTC" in listed
    assert listed["The staging database is reset every night at 03:00 UTC"].line == 3
    assert "The staging database is reset every night at 02:00 UTC" not in current

    capsys.readouterr()
    assert main(["review", "--section", "auto-memory", "--json"]) == 0
    items = {i["content"]: i for i in json.loads(capsys.readouterr().out)}
    staged = items["The staging database is reset every night at 03:00 UTC"]
    assert staged["line"] == 3 and staged["file"].endswith("memory/MEMORY.md")
    conn = p.conn()
    try:  # filed under the project the folder's transcripts belong to (their cwd's repository)
        [(folder_project,)] = conn.execute("SELECT project_id FROM project_aliases WHERE kind = 'folder' AND alias = ?",
                                           (FOLDER,)).fetchall()  # fmt: skip
    finally:
        conn.close()
    assert staged["project_id"] == folder_project
    assert "The staging database is reset every night at 02:00 UTC" not in items
    assert main(["review", "reject", str(staged["memory_id"]), "--reason", "wrong time"]) == 0
    p.run()  # the file still says it: a rejected note stays out
    conn = p.conn()
    try:
        assert "The staging database is reset every night at 03:00 UTC" not in {
            n.content for n in native_notes.listing(conn)}
    finally:
        conn.close()

    # the watch sensor starts a run when only the memory files changed (Claude Code wrote a note, no transcript line)
    import dagster as dg

    from nous_assets.defs.sensors import transcript_watch

    def watch():
        return transcript_watch(dg.build_sensor_context(instance=p.instance, resources={"nous": p.resource()}))

    assert not watch().run_requests  # everything read
    (memory / "deploys.md").write_text("Deploys go out on Tuesdays only.\n")
    [request] = watch().run_requests
    assert request.tags["nous/reason"] == "auto-memory changed" and request.run_key.startswith("fs_watch:auto-memory:")
    p.run([request.partition_key], source="fs_watch")
    assert not watch().run_requests
    assert p.count("SELECT count(*) FROM learning_events WHERE json_extract(payload_json, '$.content') = "
                   "'Deploys go out on Tuesdays only.'") == 1  # fmt: skip

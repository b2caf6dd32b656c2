"""Session outcomes are their own asset, upstream of the one asset that projects (issue 9 item 2)."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

import dagster as dg
from firstrun import PROJECT, assistant_line, exchange, user_line

from nous_assets.defs.backfill import run_days
from nous_assets.defs.resources import NousResource
from nous_assets.settings import load_settings
from nous_assets.store.db import open_db

DAY1, DAY2 = "2026-03-02", "2026-03-03"


def _write(folder: Path, lines: list[str]) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{uuid.uuid4()}.jsonl").write_text("\n".join(lines) + "\n")


def test_an_injected_memory_the_next_session_used_is_reinforced_and_projected_in_the_same_run(tmp_path: Path):
    projects = tmp_path / "home" / ".claude" / "projects"
    env = {"HOME": str(tmp_path / "home"), "NOUS_DATA_DIR": str(tmp_path / "data"),
           "NOUS_PROJECT_GLOB": str(projects / "**" / "*.jsonl")}
    settings = load_settings(env)
    resource, instance = NousResource.of(settings), dg.DagsterInstance.ephemeral()
    first = str(uuid.uuid4())
    _write(projects / PROJECT, exchange(first, DAY1, 0))
    assert all(r.success for r in run_days([DAY1], resource=resource, instance=instance))

    conn = open_db(settings.db_path)
    try:
        memory_id, score = conn.execute("SELECT id, reinforcement_score FROM memories ORDER BY id LIMIT 1").fetchone()
        concepts = [r[0] for r in conn.execute("SELECT concept FROM concepts WHERE memory_id = ?", (memory_id,))]
        later = str(uuid.uuid4())  # the SessionStart hook injected the memory into the next session
        conn.execute("INSERT INTO access_log(memory_id, session_id, project_id, source, accessed_at) "
                     "VALUES (?, ?, ?, 'hook', ?)", (memory_id, later, PROJECT, f"{DAY2}T09:00:00Z"))
    finally:
        conn.close()
    talk = " and ".join(concepts)
    _write(projects / PROJECT, [user_line(later, f"{DAY2}T10:00:00.000Z", f"Let us look at {talk} again today."),
                                assistant_line(later, f"{DAY2}T10:00:30.000Z", f"Looked at {talk}: all fine.")])
    results = run_days([DAY2], resource=resource, instance=instance)
    assert all(r.success for r in results), results

    conn = open_db(settings.db_path)
    try:
        outcome = conn.execute("SELECT event_id, payload_json FROM learning_events WHERE event_type = "
                               "'LearningReinforced' AND session_id = ?", (later,)).fetchone()
        assert outcome is not None and json.loads(outcome[1])["reason"] == "session_outcome"
        new_score, = conn.execute("SELECT reinforcement_score FROM memories WHERE id = ?", (memory_id,)).fetchone()
        checkpoint = conn.execute("SELECT max(last_event_id) FROM memories").fetchone()[0]
        judged = conn.execute("SELECT was_useful FROM access_log WHERE session_id = ?", (later,)).fetchone()[0]
    finally:
        conn.close()
    assert new_score > score  # projected by the memories asset of the same run, nothing behind the graph
    assert checkpoint >= outcome[0] and judged == 1

"""The project map (consolidate/topics.py) on the backfilled shared corpus: `nous review map`, and search showing
an observation with its members."""

from __future__ import annotations

import json

from nous_assets.consolidate.topics import project_map
from tests.support.in_process import run_cli


def _largest(pipe) -> str:
    conn = pipe.conn()
    try:
        return conn.execute("SELECT project_id FROM memories WHERE scope = 'project' GROUP BY project_id "
                            "ORDER BY count(*) DESC LIMIT 1").fetchone()[0]  # fmt: skip
    finally:
        conn.close()


def test_review_map_lists_the_topics_the_store_gives(corpus_pipeline):
    project = _largest(corpus_pipeline)
    conn = corpus_pipeline.conn()
    try:
        topics = project_map(conn, project)
        memories = {r[0]: r[1] for r in conn.execute("SELECT id, status FROM memories WHERE project_id = ?",
                                                      (project,))}  # fmt: skip
    finally:
        conn.close()
    assert topics and all(len(t.memory_ids) >= 3 for t in topics)
    assert all(memories[i] in ("verified", "stated", "observed") for t in topics for i in t.memory_ids)
    assert len({i for t in topics for i in t.memory_ids}) == sum(len(t.memory_ids) for t in topics)  # one topic each
    code, out = run_cli(corpus_pipeline, ["review", "map", f"--project={project}"])
    assert code == 0 and f"== {project}: {len(topics)} topics" in out
    assert f"({len(topics[0].memory_ids)} memories, {len(topics[0].observation_ids)} observations)" in out
    code, out = run_cli(corpus_pipeline, ["review", "map", f"--project={project}", "--json"])
    shown = json.loads(out)[project]
    assert [t["memories"] for t in shown] == [len(t.memory_ids) for t in topics]


def test_search_shows_an_observation_with_its_members(corpus_pipeline):
    conn = corpus_pipeline.conn()
    try:
        observation, content, project, provenance = conn.execute(
            "SELECT id, content, project_id, provenance_json FROM memories WHERE kind = 'observation' "
            "AND valid_until IS NULL ORDER BY id LIMIT 1").fetchone()  # fmt: skip
        members = sorted(r[0] for r in conn.execute(
            "SELECT id FROM memories WHERE learning_id IN (SELECT value FROM json_each(?))",
            (json.dumps(json.loads(provenance)["members"]),)))  # fmt: skip
    finally:
        conn.close()
    code, out = run_cli(corpus_pipeline, ["search", content[:120], f"--project={project}", "--json", "-k", "20",
                                       "--no-episodes"])  # fmt: skip
    found = {r["memory_id"]: r for r in json.loads(out) if not r["episodic"]}
    assert code == 0 and observation in found
    assert found[observation]["members"] == members
    assert all("members" not in r for i, r in found.items() if i != observation and r["kind"] != "observation")
    code, out = run_cli(corpus_pipeline, ["search", content[:120], f"--project={project}", "-k", "20", "--no-episodes"])
    assert f"an observation of {len(members)} memories: " + " ".join(f"#{i}" for i in members) in out

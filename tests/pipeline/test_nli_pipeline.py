"""End to end on the shared transcripts: the pipeline runs the nli_results asset, and the reverted or renamed
configuration learnings end superseded or contradicted rather than active once their events are projected."""

from __future__ import annotations

import json
import re
from pathlib import Path

from nous_assets.reconcile.nli.rules import RulesClassifier
from nous_assets.store.projection.memory_state import Policy, Projection
from nous_assets.store.sqlite.projection import replay_events

DATA = Path(__file__).resolve().parents[1] / "data"
GOLD = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "gold" / "gold-dev.jsonl"
REVERTED = re.compile(r"^(Reverted|Superseded)\b")  # the gold set's reverted edits and superseded values


def _line_of(path: str, offset: int) -> int:
    with open(path, "rb") as fh:
        return fh.read(offset).count(b"\n") + 1


def _final_state(pipe) -> dict:
    """Every event replayed (the nli_results events included, as the next ``memories`` run projects them)."""
    conn = pipe.conn()
    try:
        state = Projection(Policy.of(pipe.settings.thresholds), track_changes=False)
        state.apply_all(replay_events(conn))
        rows = conn.execute("SELECT learning_id, content, provenance_json, project_id FROM memories").fetchall()
    finally:
        conn.close()
    return {"state": state, "rows": rows}


def _learning_at(rows, file: str, line: int, needle: str) -> str | None:
    for lid, content, prov, _ in rows:
        p = json.loads(prov or "{}")
        path = p.get("source_path", "")
        if path.endswith(file) and needle in content and _line_of(path, min(p["line_offsets"])) == line:
            return lid
    return None


def test_the_pipeline_caches_nli_labels_for_the_corpus(corpus_pipeline):
    n = corpus_pipeline.count("SELECT count(*) FROM nli_results WHERE model_version = ?", RulesClassifier.model_version)
    assert n > 0
    assert corpus_pipeline.count("SELECT count(*) FROM nli_results WHERE memory_id_a >= memory_id_b") == 0
    orphans = "SELECT count(*) FROM nli_results WHERE memory_id_a NOT IN (SELECT id FROM memories)"
    assert corpus_pipeline.count(orphans) == 0


def test_renamed_configuration_learnings_end_superseded_or_contradicted(corpus_pipeline):
    final = _final_state(corpus_pipeline)
    cases = [json.loads(line) for line in (DATA / "renamed_config.jsonl").read_text().splitlines() if line.strip()]
    assert cases
    for case in cases:
        lid = _learning_at(final["rows"], case["file"], case["line"], case["needle"])
        assert lid is not None, f"not extracted: {case['file']}:{case['line']}"
        mem = final["state"].memories[lid]
        assert mem is not None
        assert mem.valid_until is not None or mem.contradiction_count > 0, (case["why"], mem.content)


def test_a_changed_quality_gate_replaces_the_old_one(corpus_pipeline):
    """spotter's pre-commit gate changed across sessions (mix test, credo, compile, format, dialyzer): the
    project brief holds one gate per project, so the older forms are never active beside the current one."""
    final = _final_state(corpus_pipeline)
    gates: dict[str, int] = {}
    for m in final["state"].memories.values():
        if m is not None and m.valid_until is None and m.content.startswith("Before committing"):
            gates[m.project_id] = gates.get(m.project_id, 0) + 1
    spotter = [p for p in gates if "spotter" in p]
    assert spotter and all(n == 1 for n in gates.values()), gates


def test_reverted_edits_and_superseded_values_of_the_gold_set_are_not_active_memories(corpus_pipeline):
    final = _final_state(corpus_pipeline)
    active = [
        (m.project_id, m.content.lower())
        for m in final["state"].memories.values()
        if m is not None and m.valid_until is None and m.contradiction_count == 0
    ]
    gold = [json.loads(line) for line in GOLD.read_text().splitlines() if line.strip()]
    reverted = [g for g in gold if g["kind"] == "anti" and REVERTED.search(g["text"])]
    assert len(reverted) >= 3
    for entry in reverted:
        for project, text in active:
            hit = any(all(k in text for k in keys) for keys in entry["match"])
            assert not hit, (entry["id"], entry["text"], project, text[:200])

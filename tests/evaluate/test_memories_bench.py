"""`nous bench memories`: layout, scoring rules, and one cheap end-to-end run on two small real transcripts."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.errors import NousError
from nous_assets.evaluate.memories import (
    GoldItem,
    StoreView,
    first_cwd,
    lay_out,
    load_gold,
    run_hook,
    score,
    session_start_command,
)
from resolver.project import project_id_from_cwd

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TRANSCRIPTS = SHARED / "transcripts"
GOLD = SHARED / "gold" / "gold-dev.jsonl"
needs_shared = pytest.mark.skipif(not GOLD.exists(), reason="../shared/data/gold is not present")


def _item(cwd: str, match: list[list[str]], kind: str = "gotcha", text: str = "", source: str = "s", id: str = ""):
    return GoldItem(id or f"{kind}-{text}-{cwd}", source, cwd, kind, text, tuple(tuple(m) for m in match))


def _view(by_project: dict[str, list[str]], global_texts: list[str] | None = None) -> StoreView:
    return StoreView(by_project, global_texts or [], project_id_from_cwd)


@needs_shared
def test_gold_texts_as_their_own_memories_score_full_recall_and_no_anti_hits():
    """The gold README's sanity check: each gold text used as its own memory, in the store and as packet lines."""
    gold = load_gold(GOLD)
    learnings = [g for g in gold if not g.anti]
    by_project: dict[str, list[str]] = {}
    packets: dict[str, str] = {}
    for g in learnings:
        by_project.setdefault(project_id_from_cwd(g.project_cwd), []).append(g.text.lower())
        packets[g.project_cwd] = packets.get(g.project_cwd, "# header\n") + f"- {g.text}\n"
    figures, outcomes = score(gold, _view(by_project), packets)
    for where in ("store", "packet"):
        assert figures[where]["recall:all"].rate == 1.0
        assert figures[where]["anti:all"].total == sum(g.anti for g in gold)
        assert figures[where]["anti:all"].hits == 0
    assert {o["source"] for o in outcomes} == {g.source for g in gold}


def test_packets_match_one_line_at_a_time_and_each_item_against_its_own_cwd():
    item = _item("/r/a", [["bd ready", "bd close"]])
    split = {"/r/a": "- run bd ready first\n- finish with bd close"}
    joined = {"/r/a": "- run bd ready first, finish with bd close"}
    elsewhere = {"/r/b": joined["/r/a"], "/r/a": "- nothing here"}
    view = _view({})
    assert score([item], view, split)[0]["packet"]["recall:all"].hits == 0
    assert score([item], view, joined)[0]["packet"]["recall:all"].hits == 1
    assert score([item], view, elsewhere)[0]["packet"]["recall:all"].hits == 0


def test_store_matches_same_project_and_global_memories_only():
    item = _item("/r/a", [["credo --strict"]])
    other = _view({project_id_from_cwd("/r/b"): ["mix credo --strict before commits"]})
    same = _view({project_id_from_cwd("/r/a"): ["mix credo --strict before commits"]})
    everywhere = _view({}, ["mix credo --strict before commits"])
    assert score([item], other, {})[0]["store"]["recall:all"].hits == 0
    assert score([item], same, {})[0]["store"]["recall:all"].hits == 1
    assert score([item], everywhere, {})[0]["store"]["recall:all"].hits == 1


def test_identical_learnings_of_one_project_count_once_anti_items_never_merge():
    a, b = "/repo-worktrees/a", "/repo-worktrees/b"
    one_project = StoreView({"repo": []}, [], lambda cwd: "repo")
    gold = [
        _item(a, [["bd sync"]], text="beads workflow", id="1"),
        _item(b, [["bd sync"]], text="beads workflow", id="2"),
        _item(a, [["rebase"]], kind="anti", text="x", id="3"),
        _item(b, [["rebase"]], kind="anti", text="x", id="4"),
    ]
    figures, outcomes = score(gold, one_project, {b: "- bd sync then push", a: "- rebase onto main"})
    assert figures["packet"]["recall:all"].total == 1  # one learning, seen in either worktree's packet
    assert figures["packet"]["recall:all"].hits == 1
    assert figures["packet"]["anti:all"].total == 2 and figures["packet"]["anti:all"].hits == 1
    assert [o["ids"] for o in outcomes if o["kind"] != "anti"] == [["1", "2"]]
    per_cwd = StoreView({}, [], project_id_from_cwd)  # each cwd its own project: two learnings
    assert score(gold, per_cwd, {})[0]["packet"]["recall:all"].total == 2


def test_malformed_gold_is_refused_with_file_and_line(tmp_path):
    bad = tmp_path / "gold.jsonl"
    bad.write_text(json.dumps({"project_cwd": "/x", "kind": "gotcha", "match": [["a"]]}) + "\n{not json\n")
    with pytest.raises(NousError, match=r"gold\.jsonl:2: not a gold item"):
        load_gold(bad)
    bad.write_text(json.dumps({"project_cwd": "/x", "kind": "gotcha", "match": []}) + "\n")
    with pytest.raises(NousError, match=r":1: not a gold item"):
        load_gold(bad)


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/data/transcripts is not present")
def test_layout_follows_claude_code_folders_for_sessions_and_subagents(tmp_path):
    source = tmp_path / "src"
    spotter = TRANSCRIPTS / "spotter"
    session = "258c7280-ae70-4798-800f-63464d01a85d"
    (source / "spotter" / session / "subagents").mkdir(parents=True)
    shutil.copy(spotter / f"{session}.jsonl", source / "spotter")
    shutil.copy(spotter / session / "subagents" / "agent-a881341.jsonl", source / "spotter" / session / "subagents")
    orphan = "6c2214d7-b87e-4432-8e41-22ba294ea584"  # its main session file is absent
    (source / "spotter" / orphan / "subagents").mkdir(parents=True)
    shutil.copy(spotter / orphan / "subagents" / "agent-afc096d.jsonl", source / "spotter" / orphan / "subagents")
    shutil.copy(TRANSCRIPTS / "episodic-memory" / "medium-conversation.jsonl", source / "spotter")  # no cwd
    layout = lay_out(source, tmp_path / "projects")
    gqc = project_id_from_cwd(first_cwd(spotter / f"{session}.jsonl"))
    assert gqc == "-home-USER-projects-spotter-worktrees-spotter-gqc"
    assert (tmp_path / "projects" / gqc / f"{session}.jsonl").is_file()
    assert (tmp_path / "projects" / gqc / session / "subagents" / "agent-a881341.jsonl").is_file()
    assert (tmp_path / "projects" / "-home-USER-projects-spotter-worktrees-spotter-0rt" / orphan / "subagents"
            / "agent-afc096d.jsonl").is_file()  # fmt: skip
    assert (tmp_path / "projects" / "-spotter" / "medium-conversation.jsonl").is_file()
    assert layout.sessions == 2 and layout.files == 4 and layout.no_cwd == ["spotter/medium-conversation.jsonl"]


@pytest.mark.slow
@needs_shared
def test_bench_runs_the_pipeline_and_the_installed_hook_on_a_small_pair(tmp_path):
    """Two small real transcripts and their gold items: figures come from the real store and the real hook."""
    transcripts = tmp_path / "transcripts"
    picked = {"episodic-memory/tiny-conversation.jsonl", "fasthooks/sample_main_transcript.jsonl"}
    for rel in picked:
        (transcripts / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(TRANSCRIPTS / rel, transcripts / rel)
    gold_lines = [line for line in GOLD.read_text().splitlines() if json.loads(line)["file"] in picked]
    gold = tmp_path / "gold.jsonl"
    gold.write_text("\n".join(gold_lines) + "\n")
    work, results = tmp_path / "work", tmp_path / "results"
    out = subprocess.run(
        [sys.executable, "-m", "nous_assets.cli", "bench", "memories", "--gold", str(gold), "--transcripts",
         str(transcripts), "--workdir", str(work), "--out-dir", str(results)],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"packet recall: [01]\.\d{3} anti-hit: [01]\.\d{3}", last)
    report = json.loads(next(results.glob("memories-*.json")).read_text())
    packet = report["packet"]
    assert last == f"packet recall: {packet['recall']['rate']:.3f} anti-hit: {packet['anti']['rate']:.3f}"
    items = load_gold(gold)
    assert report["packet"]["recall"]["total"] == sum(not g.anti for g in items)
    assert set(report["packets"]) == {g.project_cwd for g in items}
    assert report["sessions"] == 2 and report["memories"] > 0
    assert report["memories_per_session"] == round(report["memories"] / 2, 2)
    # the packets are what the installed hook prints for each gold cwd (run it again: same text)
    env = {"HOME": str(work / "home"), "PATH": "/usr/bin:/bin"}
    command = session_start_command(work / "home" / ".claude" / "settings.json")
    for cwd, packet in report["packets"].items():
        assert run_hook(command, cwd, env, tmp_path, "again") == packet
    assert any(report["packets"].values())
    # store outcomes agree with the memories in the kept scratch database
    from nous_assets.store.db import open_db

    conn = open_db(work / "data" / "cortex.db")
    try:
        rows = conn.execute("SELECT project_id, scope, content FROM memories").fetchall()
        cwd_project = dict(conn.execute("SELECT alias, project_id FROM project_aliases WHERE kind = 'cwd'").fetchall())
    finally:
        conn.close()
    assert {g.project_cwd for g in items} <= set(cwd_project)  # every gold cwd was a session's cwd
    for outcome in report["items"]:
        g = next(i for i in items if i.id == outcome["ids"][0])
        texts = [c.lower() for p, s, c in rows if s == "global" or p == cwd_project[g.project_cwd]]
        assert outcome["store"] == g.matched_by(texts), outcome

"""The LoCoMo conversion and the retrieval benchmark end to end (on a small slice of the dev set)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.evaluate.locomo import convert_sample, evidence_ids, load_samples, parse_locomo_date, turn_uuid

LOCOMO = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "locomo-dev" / "locomo-dev.json"
pytestmark = pytest.mark.skipif(not LOCOMO.exists(), reason="../shared/data/locomo-dev is not present")


def test_conversion_uses_only_turns_dates_and_captions(tmp_path):
    sample = load_samples(LOCOMO)[0]
    conv = convert_sample(sample, tmp_path)
    sessions = [k for k in sample["conversation"] if k.startswith("session_") and not k.endswith("date_time")]
    assert len(conv.files) == sum(1 for k in sessions if sample["conversation"][k])
    assert conv.turns == sum(len(sample["conversation"][k]) for k in sessions)
    written = "\n".join(p.read_text() for p in conv.files)
    for forbidden in ("observation", "session_summary", "event_summary"):
        assert forbidden not in written
    answers = [str(q.get("answer", "")) for q in sample["qa"] if len(str(q.get("answer", ""))) > 25]
    assert answers and not any(a in written for a in answers[:20])  # no answer text leaks into transcripts
    first = json.loads(conv.files[0].read_text().splitlines()[0])
    assert first["uuid"] == turn_uuid(sample["sample_id"], "D1:1") and conv.uuid_to_dia[first["uuid"]] == "D1:1"
    assert first["timestamp"].startswith(parse_locomo_date(sample["conversation"]["session_1_date_time"])
                                         .strftime("%Y-%m-%dT%H:%M"))
    assert evidence_ids(["D8:6; D9:17", "D1:3"]) == {"D8:6", "D9:17", "D1:3"}


@pytest.mark.slow
def test_retrieval_benchmark_runs_the_pipeline_and_reports_recall(tmp_path):
    sample = load_samples(LOCOMO)[1]
    conv = sample["conversation"]
    for key in [k for k in conv if k.startswith("session_")]:
        n = int(key.split("_")[1])
        if n > 3:
            del conv[key]
    kept = {f"D{n}:" for n in (1, 2, 3)}
    sample["qa"] = [q for q in sample["qa"] if q["evidence"] and all(e[:3] in kept for e in q["evidence"])]
    small = tmp_path / "locomo-small.json"
    small.write_text(json.dumps([sample]))
    out = subprocess.run(
        [sys.executable, "-m", "nous_assets.cli", "bench", "retrieval", "--locomo", str(small), "--k", "10",
         "--workdir", str(tmp_path / "work"), "--out-dir", str(tmp_path / "results")],
        capture_output=True, text=True, timeout=900,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("recall@10 overall (cat 1-4): 0.") or last == "recall@10 overall (cat 1-4): 1.000"
    figures = json.loads(next((tmp_path / "results").glob("retrieval-*.json")).read_text())
    assert figures["questions"] == len(sample["qa"]) and figures["chunks"] > 0
    assert 0.3 < figures["recall_overall_cat1_4"] <= 1.0  # far above chance for 10 of ~100 turns
    assert figures["mean_chars_per_query"] > 0
    by_sample = figures["recall_by_sample"]  # each conversation's own figure, here the only one
    assert list(by_sample) == [str(sample["sample_id"])]
    assert by_sample[str(sample["sample_id"])]["recall_overall_cat1_4"] == figures["recall_overall_cat1_4"]

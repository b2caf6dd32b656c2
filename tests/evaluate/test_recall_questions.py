"""`nous bench recall-questions`: the questions format, its errors, and one end-to-end run on a small real project.

The end-to-end run backfills one real transcript (the fasthooks sample, project ``/workspace``), asks three
questions through ``nous search --json`` and MCP ``recall``, then asks again on the same backfill with ``wrong``
keys taken from what search really ranked first. Hits are checked against the stored texts, not assumed.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.evaluate.recall_questions import (
    CHANNELS,
    Question,
    QuestionsError,
    figures,
    load_questions,
    outcome,
    rank_of,
)

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
TRANSCRIPT = SHARED / "transcripts" / "fasthooks" / "sample_main_transcript.jsonl"
QUESTION_FILES = Path(__file__).resolve().parents[2] / "benchmarks" / "questions"
ABSENT = "zq-nowhere-in-any-transcript"


def _write(path: Path, rows: list[dict | str]) -> Path:
    path.write_text("\n".join(r if isinstance(r, str) else json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return path


def _q(**fields) -> dict:
    return {"project_cwd": "/workspace", "question": "what?", "answer": "", "keys": [["x"]], **fields}


def _bench(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "nous_assets.cli", "bench", "recall-questions", *args],
                          capture_output=True, text=True, timeout=900, check=False)  # fmt: skip


# ---------------------------------------------------------------- format and scoring rules


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ([_q(), "{not json"], r":2: not a question"),
        ([_q(keys=[])], r":1: .*'keys' must be a non-empty list"),
        ([{"question": "q", "keys": [["a"]]}], r":1: .*'project_cwd' must be a non-empty string"),
        ([_q(keys=[["a", ""]])], r":1: .*'keys' must hold non-empty lists"),
        ([_q(wrong="stale")], r":1: .*'wrong' must be a non-empty list"),
        ([_q(), "[1, 2]"], r":2: .*not a JSON object"),
        (["", "  "], r": no questions$"),
    ],
)
def test_a_malformed_questions_file_names_its_line_and_what_is_wrong(tmp_path, rows, expected):
    path = _write(tmp_path / "q.jsonl", rows)
    with pytest.raises(QuestionsError, match=expected):
        load_questions(path)


def test_the_shipped_question_files_load_and_cover_every_dev_set():
    for name in ("questions-dev.jsonl", "questions-dev2.jsonl", "questions-dev3.jsonl"):
        questions = load_questions(QUESTION_FILES / name)
        assert 15 <= len(questions) <= 25, name
        assert any(q.wrong for q in questions), f"{name}: no question carries a known wrong answer"
        assert all(q.file and q.line > 0 for q in questions)


def test_ranks_wrong_first_and_figures():
    texts = ["The cached old script kept running", "Nothing here", "Use python3: python is not installed"]
    assert rank_of(texts, (("python3",),)) == 3
    assert rank_of(texts, (("absent",), ("nothing",))) == 2
    assert rank_of(texts, (("zzz",),)) is None
    stale = Question(1, "/w", "why?", "", (("python3",),), (("cached old",),))
    assert outcome(stale, texts) == {"hit": 3, "wrong": 1, "wrong_first": True, "results": 3}
    # a first result that holds the right keys too is not a wrong answer first
    both = Question(2, "/w", "why?", "", (("script",),), (("cached old",),))
    assert outcome(both, texts)["wrong_first"] is False
    plain = Question(3, "/w", "why?", "", (("python3",),))
    assert outcome(plain, texts) == {"hit": 3, "wrong": None, "wrong_first": False, "results": 3}
    rows = [{**outcome(x, texts), "has_wrong": bool(x.wrong)} for x in (stale, both, plain)]
    f = figures(rows)
    assert (f["hit@1"], f["hit@3"], f["hit@10"]) == (round(1 / 3, 4), 1.0, 1.0)
    assert (f["wrong_first_count"], f["with_wrong"], f["wrong_first"]) == (1, 2, round(1 / 3, 4))
    assert f["wrong_above_count"] == 1  # `stale` only: `both` first result holds the right keys too


def test_usage_errors_exit_2_with_one_line(tmp_path):
    bad = _write(tmp_path / "q.jsonl", [_q(), '{"project_cwd": "/w", "question": "q"}'])
    for args, message in (
        (["--questions", str(tmp_path / "missing.jsonl"), "--transcripts", str(tmp_path)], "no such questions file"),
        (["--questions", str(bad), "--transcripts", str(tmp_path)], f"{bad}:2: not a question ('keys' must be"),
        (["--questions", str(bad)], "needs --questions FILE and --transcripts DIR"),
    ):
        done = _bench(*args)
        assert done.returncode == 2, done.stderr
        assert done.stderr.count("\n") == 1 and message in done.stderr, done.stderr
        assert "Traceback" not in done.stderr


# ---------------------------------------------------------------- end to end


def _stored_texts(data_dir: Path) -> list[str]:
    """Every memory and transcript chunk the backfill stored, lowercased: what any answer can be made of."""
    from nous_assets.store.db import open_db

    conn = open_db(data_dir / "cortex.db")
    try:
        memories = [r[0] for r in conn.execute("SELECT content FROM memories")]
        chunks = [r[0] for r in conn.execute("SELECT text FROM transcript_chunks")]
    finally:
        conn.close()
    return [t.lower() for t in memories + chunks if t]


@pytest.mark.skipif(not TRANSCRIPT.exists(), reason="../shared/data/transcripts is not present")
def test_bench_end_to_end_on_one_project_then_wrong_keys_on_the_same_backfill(tmp_path):
    transcripts = tmp_path / "transcripts"
    (transcripts / "fasthooks").mkdir(parents=True)
    shutil.copy2(TRANSCRIPT, transcripts / "fasthooks" / TRANSCRIPT.name)
    questions = _write(
        tmp_path / "q.jsonl",
        [
            _q(question="Why does `python` fail in this container?", keys=[["command not found"], ["python3"]]),
            _q(question="Which script runs every hook event here?", keys=[["run_hook.sh"]]),
            _q(question="How do we deploy to production?", keys=[[ABSENT]]),
        ],
    )
    work, results = tmp_path / "work", tmp_path / "results"
    done = _bench("--questions", str(questions), "--transcripts", str(transcripts), "--workdir", str(work),
                  "--out-dir", str(results))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    last = done.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"recall-questions hit@3: [01]\.\d{3} wrong-first: [01]\.\d{3}", last)
    report = json.loads(next(results.glob("recall-questions-*.json")).read_text())
    channels = report["channels"]
    assert last == (f"recall-questions hit@3: {min(channels[c]['hit@3'] for c in CHANNELS):.3f} "
                    f"wrong-first: {max(channels[c]['wrong_first'] for c in CHANNELS):.3f}")  # fmt: skip
    stored = _stored_texts(work / "data")
    from nous_assets.store.db import open_db

    conn = open_db(work / "data" / "cortex.db")
    try:  # no embedding budget in the bench's backfill: every chunk has its vector (or was skipped as too short)
        chunks, vectors = (conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]
                           for t in ("transcript_chunks", "chunk_vector_meta"))  # fmt: skip
    finally:
        conn.close()
    assert chunks == vectors > 0
    assert any("run_hook.sh" in t for t in stored) and any("python3" in t for t in stored)
    assert not any(ABSENT in t for t in stored)
    for channel in CHANNELS:
        answers = report["answers"][channel]
        assert all(len(a) <= 20 for a in answers) and answers[0] and answers[1]
        for row, texts, q in zip(report["questions"], answers, load_questions(questions), strict=True):
            first_match = next((i + 1 for i, t in enumerate(texts) if any(all(k in t.lower() for k in keyset)
                                                                          for keyset in q.keys)), None)  # fmt: skip
            assert row[channel]["hit"] == first_match
        # the stored project answers both real questions within ten results; nothing answers the absent one
        assert [row[channel]["hit"] is not None and row[channel]["hit"] <= 10 for row in report["questions"]] == [
            True, True, False]  # fmt: skip
        assert channels[channel]["hit@10"] == round(2 / 3, 4)
        assert channels[channel]["wrong_first_count"] == 0 and channels[channel]["with_wrong"] == 0
    # the longest word of what search ranked first for the hook question becomes a known wrong answer
    first_text = report["answers"]["search"][1][0]
    word = max(re.findall(r"[a-z_./-]{6,}", first_text.lower()), key=len)
    assert word in first_text.lower()

    # again on the same backfill: the question now has keys found nowhere, and `wrong` keys search ranked first
    again = _write(
        tmp_path / "q2.jsonl",
        [
            _q(question="Which script runs every hook event here?", keys=[[ABSENT]], wrong=[[word]]),
            _q(question="Why does `python` fail in this container?", keys=[["python3"]]),
        ],
    )
    results2 = tmp_path / "results2"
    done = _bench("--questions", str(again), "--transcripts", str(transcripts), "--workdir", str(work),
                  "--out-dir", str(results2))  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "reusing the backfill" in done.stderr and "nous backfill --from" not in done.stderr
    report2 = json.loads(next(results2.glob("recall-questions-*.json")).read_text())
    assert report2["reused_backfill"] is True
    search = report2["channels"]["search"]
    assert (search["wrong_first_count"], search["with_wrong"], search["wrong_first"]) == (1, 1, 0.5)
    assert report2["questions"][0]["search"]["wrong"] == 1 and report2["questions"][0]["search"]["hit"] is None
    recall_first = (report2["answers"]["recall"][0] or [""])[0].lower()
    assert report2["channels"]["recall"]["wrong_first_count"] == int(word in recall_first)
    assert "wrong-first: " in done.stdout.strip().splitlines()[-1]

    # a workdir holding another folder's backfill is refused, not reused
    other = tmp_path / "other"
    other.mkdir()
    done = _bench("--questions", str(again), "--transcripts", str(other), "--workdir", str(work))
    assert done.returncode == 1 and "holds a backfill of" in done.stderr

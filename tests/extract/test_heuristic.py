"""HeuristicExtractor as a whole: the record contract, generated and sidechain turns, the real corpus.

Each rule family has its own test module (test_rules_*.py) with real excerpts; this one checks what holds
for every record and every transcript of the shared corpus.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict

import pytest
from excerpts import DATA, assistant, bash, edit, of_kind, result, run, user

from nous_assets.capture.discovery import discover
from nous_assets.capture.parser import Turn, parse_file
from nous_assets.extract.base import CURRENT_KINDS, LEARNING_FIELDS, SessionBatch
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.extract.heuristic import HeuristicExtractor
from nous_assets.extract.schema import SLOT_PATTERN, validate_learnings

OPTIONAL = {"weakens", "applies_when", "source_ref", "slot"}
REQUIRED_KEYS = set(LEARNING_FIELDS) - OPTIONAL
BIG_SPOTTER_SESSIONS = (
    "258c7280-ae70-4798-800f-63464d01a85d",
    "4d5611e5-241a-462a-8d15-5122611a9569",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
)


# ---------------------------------------------------------------------------------------------------------
# what must produce nothing


def test_generated_user_records_are_not_mined():
    out = run(
        user("Always use tabs.", is_meta=True, kind="meta"),
        user("This session is being continued. Always run make.", is_compact_summary=True, kind="compact_summary"),
        user("<command-name>/model</command-name> never mind", kind="local_command"),
    )
    assert out == []


def test_acompact_subagent_is_ignored():
    turns = [
        user("Always use black. From now on never use tabs.", agent_id="acompact-1f2e", is_sidechain=True),
        assistant("", bash("pytest -x tests/unit", "b1"), agent_id="acompact-1f2e", is_sidechain=True),
        result("b1", "3 passed", agent_id="acompact-1f2e", is_sidechain=True),
    ]
    assert run(*turns) == []


def test_subagent_prompts_are_not_user_speech():
    out = run(
        user("I want you to always read every file first.", agent_id="a1b2c3", is_sidechain=True),
        assistant("Reading.", agent_id="a1b2c3", is_sidechain=True),
    )
    assert out == []


def test_opening_task_prompt_is_not_a_memory():
    out = run(user("Implement the export feature. Please use pandas for the CSV part."), assistant("On it."))
    assert out == []


def test_thinking_never_leaks():
    secret = "SECRET-THINKING-never-use-pip-zz"
    a = assistant(
        "I'll add requests with pip install requests.",
        bash("pip install requests", "b1"),
        thinking=f"{secret} The user said always use pip. {secret}",
    )
    out = run(
        assistant("Setting up."),
        user("Set up the project dependencies please."),
        a,
        result("b1", "Successfully installed requests-2.32"),
        user("no, that's wrong: we use uv, not pip"),
        assistant("You're right.", thinking=secret),
    )
    assert out
    assert secret not in json.dumps(out)


def test_pasted_logs_are_not_copied():
    log = "\n".join(f"2026-02-12 10:00:{i:02d} ERROR worker[{i}] something exploded at frame {i}" for i in range(40))
    out = run(assistant("Deployed."), user(f"we deploy to fly.io and the worker crashes:\n{log}"))
    assert out and all("frame 3" not in r["content"] for r in out)


# ---------------------------------------------------------------------------------------------------------
# shape, ordering and edges


def _error_fix_session() -> list[Turn]:
    a1 = assistant("Running the tests.", bash("cd /home/dev/proj && pytest tests/test_api.py 2>&1", "b1"))
    fail = result(
        "b1",
        "Exit code 1\n============ FAILURES ============\n"
        "E   ModuleNotFoundError: No module named 'httpx'\nFAILED tests/test_api.py::test_get - boom\n"
        "1 failed in 0.12s",
        is_error=True,
    )
    a2 = assistant(
        "The test client needs httpx, which is missing from the dev dependencies.",
        edit("/home/dev/proj/pyproject.toml", "e1", 'dev = ["pytest"]', 'dev = ["pytest", "httpx"]'),
    )
    r2 = result("e1", "The file /home/dev/proj/pyproject.toml has been updated successfully.")
    a3 = assistant("", bash("uv sync --extra dev", "b2"))
    r3 = result("b2", "Resolved 12 packages in 3ms\nInstalled 1 package in 2ms")
    a4 = assistant("", bash("pytest tests/test_api.py", "b3"))
    r4 = result("b4", "never matched")
    r4 = result("b3", "============ 3 passed in 0.20s ============")
    return [a1, fail, a2, r2, a3, r3, a4, r4]


def test_error_fix_gotcha_command_and_configuration_from_one_session():
    turns = _error_fix_session()
    out = run(*turns)
    (fix,) = [g for g in of_kind(out, "gotcha") if g["content"].startswith("`pytest")]
    assert "ModuleNotFoundError: No module named 'httpx'" in fix["content"]
    assert "editing pyproject.toml" in fix["content"] and "`uv sync --extra dev`" in fix["content"]
    assert "missing from the dev dependencies" in fix["content"]
    assert {t.uuid for t in turns} <= set(fix["provenance"]["uuids"])
    (cfg,) = of_kind(out, "configuration")
    assert cfg["content"].startswith("pyproject.toml: sets") and "httpx" in cfg["content"]
    assert cfg["slot"] == "config:pyproject.toml"


def test_output_shape_order_and_correction_edges():
    a0 = assistant("I'll run the tests with unittest instead.", bash("python -m unittest", "b0"))
    r0 = result("b0", "Ran 0 tests")
    u = user("no, we use pytest here, not unittest")
    turns = [a0, r0, u, *_error_fix_session()]
    out = run(*turns)
    for rec in out:
        assert REQUIRED_KEYS <= set(rec) <= set(LEARNING_FIELDS)
        assert ("weakens" in rec) == (rec["kind"] == "correction")
        assert rec["kind"] in CURRENT_KINDS
        assert 3 <= len(rec["concepts"]) <= 10
    positions = {t.uuid: i for i, t in enumerate(turns)}
    anchors = [positions[rec["anchor_uuid"]] for rec in out]
    assert anchors == sorted(anchors)
    (c,) = of_kind(out, "correction")
    fix_index = next(i for i, r in enumerate(out) if r["kind"] == "gotcha")
    assert any(e["target_index"] == fix_index and e["rel_type"] == "relates_to" for e in c["edges"])


def test_no_duplicates_within_a_batch():
    out = run(
        assistant("Hi."), user("Always run ruff before committing."), assistant("Sure."),
        user("Always run ruff before committing."),
    )  # fmt: skip
    assert len(of_kind(out, "preference")) == 1


def test_extractor_identity():
    ex = HeuristicExtractor()
    assert ex.name == "heuristic" and ex.version == "heuristic-3"
    assert HeuristicExtractor().extract(SessionBatch("p", "s", "2026-01-01", [])) == []


# ---------------------------------------------------------------------------------------------------------
# concepts helpers


def test_extract_concepts_basics():
    text = "Run `pytest -q` in tests/test_api.py; the FastAPI app uses SQLAlchemy sessions"
    concepts = extract_concepts(text)
    assert 3 <= len(concepts) <= 10
    assert all(c == " ".join(c.lower().split()) for c in concepts)
    assert {"pytest", "fastapi", "sqlalchemy", "python"} <= set(concepts)
    assert concepts == extract_concepts(text)


def test_extract_concepts_splits_identifiers_and_pads():
    assert "session registry" in extract_concepts("SessionRegistry.get_pane_id/1 crashed")
    assert "get pane id" in extract_concepts("SessionRegistry.get_pane_id/1 crashed")
    padded = extract_concepts("ok", pad=["testing", "command"])
    assert padded[:2] == ["testing", "command"] and len(padded) == 3


def test_infer_domain():
    assert infer_domain("pytest fixtures for the test suite") == "testing"
    assert infer_domain("git push --set-upstream origin main") == "git"
    assert infer_domain("nothing to see") == "general"


# ---------------------------------------------------------------------------------------------------------
# the real corpora (both dev sets)


def _corpus_batches() -> list[SessionBatch]:
    batches = []
    for root in (DATA / "transcripts", DATA / "transcripts-dev2"):
        found = discover(str(root / "**" / "*.jsonl"))
        by_session: dict[tuple[str, str], list[Turn]] = defaultdict(list)
        for f in found.files:
            for t in parse_file(f.path, f.project_id).turns:
                by_session[(f.project_id, t.session_id)].append(t)
        for (project_id, session_id), turns in sorted(by_session.items()):
            first = next((t.timestamp for t in turns if t.timestamp), None)
            batches.append(SessionBatch(project_id, session_id, (first or "1970-01-01")[:10], turns))
    return batches


@pytest.fixture(scope="module")
def corpus() -> list[tuple[SessionBatch, list[dict]]]:
    if not (DATA / "transcripts").is_dir():  # pragma: no cover - the shared corpus is part of the workspace
        pytest.skip(f"shared transcripts not found under {DATA}")
    ex = HeuristicExtractor()
    return [(b, ex.extract(b)) for b in _corpus_batches()]


def test_corpus_output_is_valid(corpus):
    for _, out in corpus:
        validate_learnings(out)
        for rec in out:
            assert REQUIRED_KEYS <= set(rec) <= set(LEARNING_FIELDS)
            assert rec["kind"] in CURRENT_KINDS
            assert 10 <= len(rec["content"]) <= 420
            assert "<system-reminder>" not in rec["content"] and "<command-name>" not in rec["content"]
            assert "slot" not in rec or re.fullmatch(SLOT_PATTERN, rec["slot"])


def test_corpus_scope_is_global_only_for_how_to_work_with_the_user(corpus):
    globals_ = [r for _, out in corpus for r in out if r["scope"] == "global"]
    assert globals_  # the corpus has such statements ("Lately, I've noticed you being very tentative …")
    assert all(r["kind"] in ("preference", "correction") for r in globals_)


def test_corpus_memories_are_self_contained(corpus):
    for _, out in corpus:
        for rec in out:
            assert not re.match(r"^(?:it|this|that|they)\s+(?:is|was|are|were|means)\b", rec["content"], re.I), rec
            assert not rec["content"].startswith(("- ", "Let me ", "Now let me ")), rec["content"]


def test_corpus_counts_are_reasonable(corpus):
    total = sum(len(out) for _, out in corpus)
    assert total > 100
    assert all(len(out) <= 60 for _, out in corpus)
    per_session = {b.session_id: len(out) for b, out in corpus}
    for sid in BIG_SPOTTER_SESSIONS:
        assert per_session[sid] >= 10, (sid, per_session[sid])
    kinds = {rec["kind"] for _, out in corpus for rec in out}
    assert set(CURRENT_KINDS) <= kinds


def test_corpus_provenance_points_at_real_lines(corpus):
    for batch, out in corpus:
        known = {u: t for t in batch.turns for u in t.uuids}
        for rec in out:
            prov = rec["provenance"]
            assert prov["session_id"] == batch.session_id
            assert rec["anchor_uuid"] in prov["uuids"]
            assert set(prov["uuids"]) <= set(known)
            assert all(not (known[u].agent_id or "").startswith("acompact-") for u in prov["uuids"])
            assert all(known[u].source_path == prov["source_path"] for u in prov["uuids"])
            assert prov["line_offsets"]
            with open(prov["source_path"], "rb") as fh:
                for offset in prov["line_offsets"]:
                    fh.seek(offset)
                    record = json.loads(fh.readline())
                    if record.get("type") == "queue-operation":  # a queued message: its turn has a synthetic uuid
                        assert any(u.startswith("queued:") for u in prov["uuids"])
                    else:
                        assert record["uuid"] in prov["uuids"]


def test_corpus_never_copies_thinking(corpus):
    for batch, out in corpus:
        contents = " ".join(rec["content"] for rec in out)
        for t in batch.turns:
            think = " ".join(t.thinking.split())
            for start in range(0, max(0, len(think) - 60), 400):
                assert think[start : start + 60] not in contents


def test_corpus_extraction_is_deterministic(corpus):
    again = [(b, HeuristicExtractor().extract(b)) for b, _ in corpus]
    assert json.dumps([out for _, out in again], sort_keys=True) == json.dumps(
        [out for _, out in corpus], sort_keys=True
    )

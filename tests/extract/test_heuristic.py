"""HeuristicExtractor: the real transcripts in shared/data/transcripts plus hand-made turns for each rule."""

from __future__ import annotations

import json
from collections import defaultdict
from itertools import count
from pathlib import Path

import pytest

from nous_assets.capture.discovery import discover
from nous_assets.capture.parser import ToolResult, ToolUse, Turn, parse_file
from nous_assets.extract.base import KINDS, LEARNING_FIELDS, SessionBatch
from nous_assets.extract.concepts import extract_concepts, infer_domain
from nous_assets.extract.heuristic import HeuristicExtractor
from nous_assets.extract.schema import validate_learnings

TRANSCRIPTS = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "transcripts"
BIG_SPOTTER_SESSIONS = (
    "258c7280-ae70-4798-800f-63464d01a85d",
    "4d5611e5-241a-462a-8d15-5122611a9569",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04",
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
)
REQUIRED_KEYS = set(LEARNING_FIELDS) - {"weakens"}


# ---------------------------------------------------------------------------------------------------------
# hand-made turns

_ids = count(1)


def _turn(role: str, text: str = "", *, kind: str = "message", **kw) -> Turn:
    n = next(_ids)
    uid = kw.pop("uuid", f"00000000-0000-4000-8000-{n:012d}")
    fields = {
        "uuid": uid,
        "uuids": (uid,),
        "parent_uuid": None,
        "session_id": "sess-1",
        "project_id": "proj",
        "role": role,
        "kind": kind,
        "timestamp": f"2026-02-12T10:{n // 60 % 60:02d}:{n % 60:02d}.000000Z",
        "text": text,
        "thinking": "",
        "tool_uses": (),
        "tool_results": (),
        "message_id": f"msg-{n}" if role == "assistant" else None,
        "request_id": None,
        "model": "claude-test" if role == "assistant" else None,
        "is_sidechain": False,
        "agent_id": None,
        "is_meta": False,
        "is_compact_summary": False,
        "cwd": "/home/dev/proj",
        "git_branch": "main",
        "version": "2.1.39",
        "source_path": "/tmp/sess-1.jsonl",
        "byte_start": n * 100,
        "byte_end": n * 100 + 99,
        "line_offsets": (n * 100,),
    }
    fields.update(kw)
    return Turn(**fields)


def user(text: str, **kw) -> Turn:
    return _turn("user", text, **kw)


def assistant(text: str = "", *uses: ToolUse, **kw) -> Turn:
    return _turn("assistant", text, tool_uses=tuple(uses), **kw)


def bash(command: str, use_id: str) -> ToolUse:
    return ToolUse(use_id, "Bash", json.dumps({"command": command}))


def edit(path: str, use_id: str, old: str = "a = 1", new: str = "a = 2") -> ToolUse:
    return ToolUse(use_id, "Edit", json.dumps({"file_path": path, "old_string": old, "new_string": new}))


def result(use_id: str, text: str, *, is_error: bool = False, **kw) -> Turn:
    return _turn("user", text, kind="tool_result", tool_results=(ToolResult(use_id, text, is_error),), **kw)


def run(*turns: Turn) -> list[dict]:
    batch = SessionBatch("proj", "sess-1", "2026-02-12", list(turns))
    out = HeuristicExtractor().extract(batch)
    validate_learnings(out)
    return out


def of_kind(out: list[dict], kind: str) -> list[dict]:
    return [r for r in out if r["kind"] == kind]


# ---------------------------------------------------------------------------------------------------------
# rule 1: corrections


def test_correction_quotes_user_names_context_and_weakens():
    a1 = assistant(
        "I'll mock the database in these tests with unittest.mock so they run fast.",
        edit("/home/dev/proj/tests/test_store.py", "e1"),
    )
    r1 = result("e1", "The file /home/dev/proj/tests/test_store.py has been updated successfully.")
    u = user("no, don't mock the database in these tests — use a real SQLite file instead")
    a2 = assistant(
        "You're right — the tests should use a real SQLite file via tmp_path.",
        edit("/home/dev/proj/tests/test_store.py", "e2"),
    )
    out = run(a1, r1, u, a2, result("e2", "The file has been updated successfully."))
    corrections = of_kind(out, "correction")
    assert len(corrections) == 1
    c = corrections[0]
    assert c["type"] == "learning"
    assert c["anchor_uuid"] == u.uuid
    assert c["content"].startswith("User correction: \"no, don't mock the database in these tests")
    assert "after Claude" in c["content"] and "mock the database" in c["content"]
    assert "Claude then" in c["content"] and "real SQLite file" in c["content"]
    assert c["weakens"] and "mock" in c["weakens"].lower()
    assert u.uuid in c["provenance"]["uuids"] and a1.uuid in c["provenance"]["uuids"]
    assert c["valid_from"] == u.timestamp and c["valid_until"] is None
    assert len(c["content"]) <= 400


def test_not_x_but_y_correction_and_rejected_tool_call():
    a1 = assistant(
        "The failure comes from the migration runner, so I'll rewrite it.", edit("/home/dev/proj/db/migrate.py", "e1")
    )
    rejected = result(
        "e1", "The user doesn't want to proceed with this tool use. The tool use was rejected.", is_error=True
    )
    u = user("the issue is the formatter, not the migration runner")
    out = run(a1, rejected, u, assistant("Got it, the formatter rewrites the generated files."))
    (c,) = of_kind(out, "correction")
    assert "rejected by the user" in c["content"]
    assert c["weakens"].startswith("migration runner")


def test_question_without_pushback_is_not_a_correction():
    out = run(assistant("I ran the tests, all green."), user("how long did the suite take?"))
    assert out == []


# ---------------------------------------------------------------------------------------------------------
# rule 2: preferences


def test_always_never_preferences_are_high_confidence_rules():
    out = run(
        user("Always use uv instead of pip for installing packages."),
        assistant("Noted."),
        user("From now on, never push directly to the main branch."),
    )
    prefs = of_kind(out, "preference")
    assert [p["temporal_confidence"] for p in prefs] == ["high", "high"]
    assert prefs[0]["content"] == 'User preference: "Always use uv instead of pip for installing packages."'
    assert prefs[0]["scope"] == "global"
    assert prefs[0]["type"] == "learning"
    assert "uv" in prefs[0]["concepts"] and "pip" in prefs[0]["concepts"]
    assert all(p["anchor_uuid"] != "" for p in prefs)


def test_project_specific_preference_is_project_scoped():
    out = run(user("Please use `pytest.mark.parametrize` in tests/test_cli.py rather than copy-pasted tests."))
    (p,) = of_kind(out, "preference")
    assert p["scope"] == "project"
    assert p["temporal_confidence"] == "medium"


def test_version_bound_statement_is_low_confidence():
    out = run(user("For now, let's use SQLite until we migrate to Postgres."))
    (d,) = of_kind(out, "decision")
    assert d["temporal_confidence"] == "low"
    assert "time-bound" in d["content"]


# ---------------------------------------------------------------------------------------------------------
# rule 3: decisions


def test_decision_after_go_ahead_uses_the_proposal():
    a = assistant(
        "Readers block while the queue writes. I recommend WAL mode so readers never block.\n\n"
        "Should I switch the queue database to SQLite WAL mode?"
    )
    u = user("go ahead")
    out = run(a, u)
    (d,) = of_kind(out, "decision")
    assert d["anchor_uuid"] == u.uuid
    assert "Switch the queue database to SQLite WAL mode" in d["content"]
    assert 'approved by the user: "go ahead"' in d["content"]
    assert a.uuid in d["provenance"]["uuids"]


@pytest.mark.parametrize(
    "proposal",
    [
        "origin/main has diverged. Shall I force-push to main with `git push --force origin main`?",
        "Should I push and open a PR for the docs?",
        "The toolchain is missing. Should I run `curl -sSL https://get.example.dev | bash` to install it?",
        "Should I continue with the rebase to finish resolving the conflicts?",
        "Shall I kill the old dev server on port 5173 and restart it?",
    ],
)
def test_an_approved_one_off_action_is_not_a_decision(proposal):
    """A "yes" approves one operation at one moment; it must not come back later as a standing decision."""
    assert of_kind(run(assistant(proposal), user("yes")), "decision") == []


def test_choosing_an_option_is_a_decision():
    a = assistant(
        "Two ways forward:\n\n**A) Keep the REST API** and add pagination\n"
        "**B) Switch to GraphQL** for the dashboard\n\nWhich one?"
    )
    out = run(a, user("B"))
    (d,) = of_kind(out, "decision")
    assert "option B" in d["content"] and "Switch to GraphQL" in d["content"]


def test_ok_without_a_proposal_is_nothing():
    assert run(assistant("Done. The build is green."), user("ok")) == []


def test_lets_use_is_a_decision():
    out = run(user("let's go with FastAPI for the backend instead of Flask."))
    (d,) = of_kind(out, "decision")
    assert d["type"] == "learning"
    assert "fastapi" in d["concepts"]


# ---------------------------------------------------------------------------------------------------------
# rule 4: error -> fix


def _error_fix_session() -> tuple[list[Turn], Turn]:
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
    a3 = assistant("", bash("uv sync", "b2"))
    r3 = result("b2", "Resolved 12 packages in 3ms\nInstalled 1 package in 2ms")
    a4 = assistant("", bash("pytest tests/test_api.py", "b3"))
    r4 = result("b3", "============ 3 passed in 0.20s ============")
    return [a1, fail, a2, r2, a3, r3, a4, r4], fail


def test_error_then_fix_sequence():
    turns, fail = _error_fix_session()
    out = run(*turns)
    (fix,) = of_kind(out, "error_fix")
    assert fix["anchor_uuid"] == fail.uuid
    assert fix["type"] == "learning"
    assert fix["content"].startswith('`pytest tests/test_api.py` failed with "E   ModuleNotFoundError') or (
        "ModuleNotFoundError: No module named 'httpx'" in fix["content"]
    )
    assert "editing pyproject.toml" in fix["content"] and "`uv sync`" in fix["content"]
    assert "the same command succeeded" in fix["content"]
    assert "missing from the dev dependencies" in fix["content"]
    uuids = set(fix["provenance"]["uuids"])
    assert {t.uuid for t in turns} <= uuids
    # the passing run is also remembered as a command, linked to the fix it confirmed
    commands = of_kind(out, "command")
    test_cmd = next(c for c in commands if "pytest" in c["content"])
    assert test_cmd["type"] == "knowledge" and test_cmd["domain"] == "testing"
    assert "3 passed" in test_cmd["content"]
    assert {"target_index": out.index(fix), "rel_type": "depends_on", "weight": 0.7} in test_cmd["edges"]
    # the config edit is summarised
    (cfg,) = of_kind(out, "configuration")
    assert "pyproject.toml" in cfg["content"] and "httpx" in cfg["content"]


def test_plain_rerun_is_not_an_error_fix():
    out = run(
        assistant("", bash("make test", "b1")),
        result("b1", "Exit code 2\nerror: flaky", is_error=True),
        assistant("", bash("make test", "b2")),
        result("b2", "ok"),
    )
    assert of_kind(out, "error_fix") == []


def test_failure_of_a_different_target_confirms_nothing():
    out = run(
        assistant("", bash("npx biome check src/a.ts", "b1")),
        result("b1", "Exit code 1\n× Unexpected any", is_error=True),
        assistant("", edit("/home/dev/proj/src/a.ts", "e1")),
        result("e1", "updated"),
        assistant("", bash("npx biome check .", "b2")),
        result("b2", "Checked 3 files in 2ms."),
    )
    assert of_kind(out, "error_fix") == []


# ---------------------------------------------------------------------------------------------------------
# rule 5: commands and configuration


def test_successful_test_command_is_knowledge():
    out = run(assistant("", bash("npm test 2>&1 | tail -5", "b1")), result("b1", "Tests: 12 passed, 12 total"))
    (c,) = of_kind(out, "command")
    assert c["content"] == "Test command that worked in this project: `npm test` — 12 passed, 12 total"
    assert c["kind"] == "command" and c["type"] == "knowledge" and c["scope"] == "project"


def test_commands_are_deduplicated_and_capped():
    turns: list[Turn] = []
    for i, cmd in enumerate(
        [
            "mix test",
            "mix test test/a_test.exs",
            "mix compile",
            "mix format",
            "mix credo",
            "mix deps.get",
            "mix ecto.migrate",
            "npm run build",
            "cargo test",
            "go test ./...",
        ]
    ):
        turns += [assistant("", bash(cmd, f"b{i}")), result(f"b{i}", "done")]
    out = run(*turns)
    commands = of_kind(out, "command")
    assert len(commands) == 5
    assert sum("mix test" in c["content"] for c in commands) <= 1


def test_read_only_commands_are_not_learnings():
    out = run(
        assistant("", bash("ls -la", "b1")),
        result("b1", "total 0"),
        assistant("", bash("git status", "b2")),
        result("b2", "clean"),
    )
    assert out == []


# ---------------------------------------------------------------------------------------------------------
# rule 6: facts


def test_stated_facts_are_knowledge():
    out = run(
        user("Our API runs on port 8080 behind nginx."), assistant("Thanks."), user("I'm using Python 3.12 on macOS.")
    )
    facts = of_kind(out, "fact")
    assert len(facts) == 2
    assert all(f["type"] == "knowledge" for f in facts)
    assert facts[0]["content"] == 'User-stated fact: "Our API runs on port 8080 behind nginx."'
    assert "nginx" in facts[0]["concepts"]


# ---------------------------------------------------------------------------------------------------------
# what must produce nothing


@pytest.mark.parametrize(
    "text",
    [
        "ok",
        "thanks!",
        "continue",
        "yes",
        "/compact",
        "[Request interrupted by user]",
        "<system-reminder>Always use tabs. Never use spaces.</system-reminder>",
        "<task-notification>\n<status>completed</status>\n</task-notification>",
    ],
)
def test_trivial_messages_produce_nothing(text):
    assert run(assistant("Working on it."), user(text)) == []


def test_generated_user_records_are_not_mined():
    out = run(
        user("Always use tabs.", is_meta=True, kind="meta"),
        user("This session is being continued. Always run make.", is_compact_summary=True, kind="compact_summary"),
        user("<command-name>/model</command-name> never mind", kind="local_command"),
    )
    assert out == []


def test_acompact_subagent_is_ignored():
    turns = [
        user(
            "Always use black for formatting. From now on never use tabs.", agent_id="acompact-1f2e", is_sidechain=True
        ),
        assistant("", bash("pytest", "b1"), agent_id="acompact-1f2e", is_sidechain=True),
        result("b1", "3 passed", agent_id="acompact-1f2e", is_sidechain=True),
    ]
    assert run(*turns) == []


def test_subagent_prompts_are_not_user_speech():
    out = run(
        user("I want you to always read every file first.", agent_id="a1b2c3", is_sidechain=True),
        assistant("Reading.", agent_id="a1b2c3", is_sidechain=True),
    )
    assert out == []


def test_thinking_never_leaks():
    secret = "SECRET-THINKING-never-use-pip-zz"
    a = assistant(
        "I'll add requests with pip install requests.",
        bash("pip install requests", "b1"),
        thinking=f"{secret} The user said always use pip. {secret}",
    )
    out = run(
        a,
        result("b1", "Successfully installed requests-2.32"),
        user("no, that's wrong: we use uv, not pip"),
        assistant("You're right.", thinking=secret),
    )
    assert out
    blob = json.dumps(out)
    assert secret not in blob


def test_pasted_logs_are_not_copied():
    log = "\n".join(f"2026-02-12 10:00:{i:02d} ERROR worker[{i}] something exploded at frame {i}" for i in range(40))
    out = run(assistant("Deployed."), user(f"we deploy to fly.io and the worker crashes:\n{log}"))
    assert out and all("frame 3" not in r["content"] for r in out)
    assert all(len(r["content"]) <= 400 for r in out)


# ---------------------------------------------------------------------------------------------------------
# shape, ordering and edges


def test_output_shape_order_and_correction_edges():
    turns, _ = _error_fix_session()
    a0 = assistant("I'll run the tests with unittest instead.", bash("python -m unittest", "b0"))
    r0 = result("b0", "Ran 0 tests")
    u = user("no, we use pytest here, not unittest")
    out = run(a0, r0, u, *turns)
    for rec in out:
        assert REQUIRED_KEYS <= set(rec) <= set(LEARNING_FIELDS)
        assert ("weakens" in rec) == (rec["kind"] == "correction")
        assert rec["kind"] in KINDS
        assert 3 <= len(rec["concepts"]) <= 10
    anchors = [rec["anchor_uuid"] for rec in out]
    positions = {t.uuid: i for i, t in enumerate([a0, r0, u, *turns])}
    assert [positions[a] for a in anchors] == sorted(positions[a] for a in anchors)
    (c,) = of_kind(out, "correction")
    fix_index = out.index(of_kind(out, "error_fix")[0])
    assert any(
        e["target_index"] == fix_index and e["rel_type"] == "relates_to" and 0.3 <= e["weight"] <= 0.9
        for e in c["edges"]
    )
    for i, rec in enumerate(out):
        assert all(e["target_index"] != i and 0 <= e["target_index"] < len(out) for e in rec["edges"])


def test_no_duplicates_within_a_batch():
    out = run(
        user("Always run ruff before committing."), assistant("Sure."), user("Always run ruff before committing.")
    )
    assert len(of_kind(out, "preference")) == 1


def test_extractor_identity():
    ex = HeuristicExtractor()
    assert ex.name == "heuristic" and ex.version == "heuristic-1"
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
# the real corpus


def _corpus_batches() -> list[SessionBatch]:
    found = discover(str(TRANSCRIPTS / "**" / "*.jsonl"))
    by_session: dict[tuple[str, str], list[Turn]] = defaultdict(list)
    for f in found.files:
        for t in parse_file(f.path, f.project_id).turns:
            by_session[(f.project_id, t.session_id)].append(t)
    batches = []
    for (project_id, session_id), turns in sorted(by_session.items()):
        first = next((t.timestamp for t in turns if t.timestamp), None)
        batches.append(SessionBatch(project_id, session_id, (first or "1970-01-01")[:10], turns))
    return batches


@pytest.fixture(scope="module")
def corpus() -> list[tuple[SessionBatch, list[dict]]]:
    if not TRANSCRIPTS.is_dir():  # pragma: no cover - the shared corpus is part of the workspace
        pytest.skip(f"shared transcripts not found at {TRANSCRIPTS}")
    ex = HeuristicExtractor()
    return [(b, ex.extract(b)) for b in _corpus_batches()]


def test_corpus_output_is_valid(corpus):
    for _, out in corpus:
        validate_learnings(out)
        for rec in out:
            assert REQUIRED_KEYS <= set(rec) <= set(LEARNING_FIELDS)
            assert 10 <= len(rec["content"]) <= 400
            assert "<system-reminder>" not in rec["content"] and "<command-name>" not in rec["content"]


def test_corpus_counts_are_reasonable(corpus):
    total = sum(len(out) for _, out in corpus)
    assert total > 20
    assert all(len(out) <= 60 for _, out in corpus)
    per_session = {b.session_id: len(out) for b, out in corpus}
    for sid in BIG_SPOTTER_SESSIONS:
        assert per_session[sid] >= 3, (sid, per_session[sid])
    kinds = {rec["kind"] for _, out in corpus for rec in out}
    assert {"correction", "preference", "decision", "error_fix", "command", "configuration", "fact"} <= kinds


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
    assert [out for _, out in again] == [out for _, out in corpus]
    assert json.dumps([out for _, out in again], sort_keys=True) == json.dumps(
        [out for _, out in corpus], sort_keys=True
    )

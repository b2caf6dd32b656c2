"""`nous bench replay`: normalisation, needs, scoring and ordering on real sessions; one end-to-end replay."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.evaluate.memories import _nous, activity_span, lay_out, run_hook, scratch_env, session_start_command
from nous_assets.evaluate.replay import (
    Facts,
    Needs,
    Tally,
    baseline_packet,
    command_forms,
    covered,
    ended_before,
    error_signature,
    find_sessions,
    is_correction,
    mentions,
    needs_of,
    score_session,
    session_facts,
    session_turns,
    used_lines,
)
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules.session import build_streams

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "data"
DEV3 = SHARED / "transcripts-dev3"
DEV2 = SHARED / "transcripts-dev2"
TRANSCRIPTS = SHARED / "transcripts"
WAKIL = DEV3 / "wakil" / "-Users-ebridges-Projects-wakil"
DUET = DEV3 / "duet" / "-Users-tslater-dev-cli-duet"
IRONCLAW = DEV3 / "ironclaw" / "-home-alexc-Projects-ironclaw"
needs_shared = pytest.mark.skipif(not DEV3.is_dir(), reason="../shared/data/transcripts-dev3 is not present")


def _session(folder: Path, stem: str):
    """The :class:`Session` of one real transcript (found as the benchmark finds it)."""
    sessions, _ = find_sessions(folder)
    return next(s for s in sessions if s.path.stem.startswith(stem))


def _bash_commands(path: Path) -> set[str]:
    """Every Bash command a real transcript ran (to prove a test command is a real one)."""
    batch = SessionBatch("p", "s", "", session_turns(path))
    return {c.command for stream in build_streams(batch) for c in stream.calls if c.command}


# ---------------------------------------------------------------- normalisation


REAL_COMMANDS = [
    (WAKIL / "09cc95ef-515c-4a06-b5c9-92c68f3679cf.jsonl",
     "uv run pytest tests/unit/test_qmd.py -q 2>&1 | tail -40", ("uv run pytest",)),
    (WAKIL / "09cc95ef-515c-4a06-b5c9-92c68f3679cf.jsonl",
     "git stash && uv run pytest tests/integration/test_search_cli.py::test_search_finds_notes_via_fts -q 2>&1 "
     "| tail -30; git stash pop", ("uv run pytest",)),
    (WAKIL / "09cc95ef-515c-4a06-b5c9-92c68f3679cf.jsonl",
     "cd /private/tmp/claude-501/-Users-ebridges-Projects-wakil/09cc95ef-515c-4a06-b5c9-92c68f3679cf/scratchpad/e2ekb"
     " && echo y | uv run wakil -w . qmd sync 2>&1", ("uv run wakil",)),
    (IRONCLAW / "eaa1ab91-d8c7-49bb-af22-e3fb1c01c355.jsonl", "cd orchestrator && cargo fmt -- --check 2>&1",
     ("cargo fmt",)),
    (IRONCLAW / "eaa1ab91-d8c7-49bb-af22-e3fb1c01c355.jsonl", "cd orchestrator && cargo test --quiet 2>&1 && cargo "
     "llvm-cov --lib --lcov --output-path ../../target/llvm-cov 2>&1 | tail -10", ("cargo test", "cargo llvm-cov")),
    (DEV3 / "flutter-docker-image" / "-home-eligio-Code-worktrees-flutter-docker-image-sandy-hill-flutter-docker-image"
     / "4382554b-f1e9-425c-9589-29ec37048779.jsonl",
     'GITHUB_TOKEN="$(gh auth token 2>/dev/null)" mise exec -- gx lint 2>&1 | tail -25', ("mise exec -- gx lint",)),
    (DEV2 / "cipher-box" / "-Users-michael-Code-cipher-box" / "2095544c-fa50-4027-b664-c37e578957ce.jsonl",
     "DB_HOST=192.168.133.114 REDIS_HOST=192.168.133.114 pnpm --filter api dev", ("pnpm dev",)),
    (DEV2 / "context-evaluator" / "-Users-cedricteyton-Code-agents-md-evaluator"
     / "8ecab05f-4481-43d6-9428-a6b177981877.jsonl",
     "cd /Users/cedricteyton/Code/agents-md-evaluator && rtk bun run test 2>&1", ("bun run test",)),
    (TRANSCRIPTS / "spotter" / "258c7280-ae70-4798-800f-63464d01a85d.jsonl",
     "mix compile --warnings-as-errors 2>&1 && mix test test/spotter/transcripts/resources_test.exs 2>&1 | tail -10",
     ("mix compile", "mix test")),
    (DEV3 / "ironclaw" / "-home-alexc-Projects-ironclaw" / "005dee17-eda7-475f-9656-e4dd3ce1c130.jsonl",
     "cd orchestrator && git diff src/mcp/protocol.rs | head -30", ()),
]  # fmt: skip


@needs_shared
@pytest.mark.parametrize(
    ("path", "command", "forms"), REAL_COMMANDS, ids=[f[2][0] if f[2] else "none" for f in REAL_COMMANDS]
)
def test_real_commands_normalise_to_program_and_subcommand(path, command, forms):
    """cd prefixes, env assignments, wrappers, flags, test filters and pipes into tail are dropped; porcelain
    and read-only exploration are no needs at all."""
    assert command in _bash_commands(path)  # a command the transcript really ran
    assert command_forms(command, "/somewhere") == forms


def test_filters_and_interpreter_forms():
    assert command_forms("go test -run TestParseConfig ./internal/config/... -count=1") == ("go test",)
    assert command_forms("cd /repo && uv run pytest tests/x.py -q", "/repo") == ("uv run pytest",)
    assert command_forms("bash /repo/scripts/x.sh --fast", "/repo") == ("bash scripts/x.sh",)
    assert command_forms("./scripts/deploy.sh prod", "/repo") == ("scripts/deploy.sh",)
    assert command_forms("mise run test:ci -- --verbose") == ("mise run test:ci",)
    assert command_forms("mise exec node@20 -- node app.js") == ("mise exec node@20 -- node app.js",)  # `--` kept:
    assert command_forms("uv run --with rich -- pytest -q") == ("uv run -- pytest",)  # it ends the runner's words
    assert command_forms("uv run pytest -q -- -x") == ("uv run pytest",)  # pytest's own `--` is a flag
    assert command_forms('gh pr create --title "a; b" --body "$(cat <<\'EOF\'\nit\'s done\nEOF\n)"') == (
        "gh pr create",
    )
    assert command_forms("python3 - <<'EOF'\nimport json\nEOF") == ()  # an inline script teaches nothing
    assert command_forms("gh pr view 12 --comments") == () and command_forms("git status && ls -la") == ()


# ---------------------------------------------------------------- needs


@needs_shared
def test_needs_of_a_real_wakil_session_are_what_an_earlier_session_also_did():
    first, second = _session(WAKIL, "09cc95ef"), _session(WAKIL, "8dac3fcf")
    assert first.end < second.start
    earlier, current = session_facts(first), session_facts(second)
    needs = needs_of(current, [earlier])
    assert needs.commands == ("uv run pytest", "uv run ruff check", "uv run ty check")
    assert "uv run wakil enrich" in current.commands and "uv run wakil enrich" not in needs.commands  # new in 2nd
    assert all(c in earlier.commands for c in needs.commands)
    assert not needs.files  # the two sessions edited different files
    assert needs_of(current, []) == Needs()  # no earlier session, no needs


@needs_shared
def test_needs_of_real_duet_and_ironclaw_sessions_include_files_and_errors():
    duet = needs_of(session_facts(_session(DUET, "410c9611")), [session_facts(_session(DUET, "7c03c5fa"))])
    assert duet.commands == ("bash scripts/generate-readme.sh",)
    assert duet.files == (".git/hooks/pre-commit",)  # relative to the session cwd
    ironclaw = needs_of(session_facts(_session(IRONCLAW, "005dee17")), [session_facts(_session(IRONCLAW, "eaa1ab91"))])
    assert {"cargo test", "cargo fmt"} <= set(ironclaw.commands)
    assert "fatal: pathspec did not match any files" in ironclaw.errors  # the quoted path is not in the signature
    assert "orchestrator/src/vm/mod.rs" in ironclaw.files


def test_error_signatures_strip_what_varies():
    one = error_signature("error[E0599]: no method named `start` found for struct `VmConfig` in the current scope\n")
    two = error_signature("error[E0599]: no method named `stop` found for struct `Firewall` in the current scope")
    assert one == two == "error e : no method named found for struct in the current scope"
    at = error_signature("src/app.ts:12:5 - error TS2339: Property 'x' does not exist on type 'Y'.")
    assert at == error_signature("src/other.ts:99:1 - error TS2339: Property 'z' does not exist on type 'W'.")
    assert "12" not in at and "app.ts" not in at


@needs_shared
def test_corrections_exclude_the_opening_prompt_and_repeat_by_word_overlap():
    assert is_correction("no, use `uv run pytest` instead of plain pytest")
    assert is_correction("Why did you delete the vamp note? I told you to keep it.")
    assert not is_correction("Implement the search command with FTS5 and add tests.")
    opening = session_facts(_session(IRONCLAW, "eaa1ab91"))  # its opening prompt says "Don't add any new skips"
    assert not any("new skips or bypasses" in c for c in opening.corrections)
    cipher = session_facts(_session(DEV2 / "cipher-box" / "-Users-michael-Code-cipher-box", "2095544c"))
    assert any(c.startswith("thats not the branch") for c in cipher.corrections)
    earlier = Facts(corrections=("don't push to main, open a pull request for the docs change",))
    again = Facts(corrections=("no, don't push to main: open a pull request",))
    unrelated = Facts(corrections=("stop, the ratchet threshold belongs in the baseline json",))
    assert needs_of(again, [earlier]).corrections == again.corrections
    assert needs_of(unrelated, [earlier]).corrections == ()


# ---------------------------------------------------------------- scoring


NEEDS = Needs(
    commands=("uv run pytest", "mix credo"),
    files=("src/wakil/llm/client.py",),
    errors=("error e : no method named found for struct in the current scope",),
)
DID = Facts(commands=("uv run pytest", "mix credo"), edited=frozenset({"src/wakil/llm/client.py"}),
            read=frozenset({"docs/ADR.md"}), errors=NEEDS.errors)  # fmt: skip


def test_a_packet_that_names_a_needed_command_covers_it_one_that_does_not_does_not():
    naming = "# Nous\n- run the tests with `cd /x && uv run pytest -q` before committing (2026-07-20)"
    assert covered(NEEDS, naming)["commands"] == ["uv run pytest"]
    assert covered(NEEDS, "- run the tests with `pytest` before committing")["commands"] == []
    assert mentions("commands", "mix credo", "- Lint: MIX CREDO --strict")  # case-insensitive substring
    assert mentions("files", "src/wakil/llm/client.py", "- the retry lives in client.py")  # specific basename
    assert not mentions("files", "src/a.py", "- see a.py")  # too short a basename to be specific
    assert mentions("errors", NEEDS.errors[0], "- rust: no method named … found for struct in the current scope")
    assert not mentions("errors", NEEDS.errors[0], "- no method here\n- found for struct in scope")  # one line


def test_coverage_and_uptake_arithmetic_over_sessions():
    packet = "\n".join([
        "**Nous memory** — header, not a bullet",
        "- tests: `uv run pytest -q`",  # used: a command it ran
        "- the ADR template is docs/ADR.md",  # used: a file it read
        "- deploy with `fly deploy`",  # not used
        "- rust: no method named found for struct in the current scope means a missing trait import",  # used
    ])  # fmt: skip
    outcome = score_session(NEEDS, DID, {"nous": packet, "empty": ""})
    assert outcome["nous"]["covered"]["commands"] == ["uv run pytest"]
    assert outcome["nous"]["covered"]["errors"] == list(NEEDS.errors)
    assert len(outcome["nous"]["used_lines"]) == 3 and outcome["nous"]["lines"] == 4
    assert used_lines(packet, Facts()) == []
    nous, empty = Tally(), Tally()
    for _ in range(2):  # two sessions with the same needs: micro sums
        o = outcome["nous"]
        nous.add(NEEDS, o["covered"], len(o["used_lines"]), o["lines"], o["chars"])
        empty.add(NEEDS, outcome["empty"]["covered"], 0, 0, 0)
    figures = nous.as_dict()
    assert figures["coverage"] == {"hits": 4, "total": 8, "rate": 0.5}  # 2 of 4 needs, twice
    assert figures["uptake"] == {"hits": 6, "total": 8, "rate": 0.75}
    assert figures["by_type"]["commands"]["rate"] == 0.5 and figures["by_type"]["files"]["hits"] == 0
    assert figures["mean_packet_chars"] == len(packet)
    assert empty.as_dict()["coverage"]["rate"] == 0.0 and empty.as_dict()["uptake"]["total"] == 0


@needs_shared
def test_baseline_packet_lists_the_previous_sessions_successful_commands():
    previous = session_facts(_session(DUET, "7c03c5fa"))
    packet = baseline_packet(previous)
    lines = packet.splitlines()
    assert lines and all(re.fullmatch(r"- `[^`]+`", line) for line in lines)
    assert [line[3:-1] for line in lines] == list(previous.commands)
    assert "- `bash scripts/generate-readme.sh`" in lines
    assert not any(line.startswith(("- `git ", "- `ls", "- `cat")) for line in lines)  # porcelain, reads
    need = needs_of(session_facts(_session(DUET, "410c9611")), [previous])
    assert covered(need, packet)["commands"] == list(need.commands)
    assert baseline_packet(None) == ""


# ---------------------------------------------------------------- ordering


@pytest.mark.skipif(not TRANSCRIPTS.is_dir(), reason="../shared/data/transcripts is not present")
def test_a_session_that_ended_after_k_started_is_never_in_ks_prefix():
    sessions, skipped = find_sessions(TRANSCRIPTS / "spotter")
    assert [s.start for s in sessions] == sorted(s.start for s in sessions)
    by_id = {s.id8: s for s in sessions}
    gqc, fum = by_id["258c7280"], by_id["8463c716"]
    assert gqc.start < fum.start < gqc.end  # they overlapped: gqc was still running when fum started
    assert gqc not in ended_before(sessions, fum)
    assert gqc in ended_before(sessions, by_id["ae4a77f8"])  # the next day
    for k in sessions:
        assert all(s.end < k.start for s in ended_before(sessions, k))
        assert k not in ended_before(sessions, k)
    assert len(gqc.subagents) == 2  # its subagents belong to it
    assert any("6c2214d7" in line and "without its session" in line for line in skipped)
    fasthooks, left_out = find_sessions(TRANSCRIPTS / "fasthooks")
    assert [s.key for s in fasthooks] == ["sample_main_transcript.jsonl"]  # a sidechain file or hook log is none
    assert {line.split(":")[0] for line in left_out} == {"sample_agent_sidechain.jsonl", "sample_hook_logs.jsonl"}


# ---------------------------------------------------------------- end to end


@pytest.mark.slow
@needs_shared
def test_replay_of_two_duet_sessions_end_to_end(tmp_path):
    """The real pipeline and hook over duet's first two sessions; the 2nd session's packet is the hook's answer
    from a store that holds the 1st session only."""
    transcripts = tmp_path / "transcripts"
    for stem in ("7c03c5fa", "410c9611"):
        source = _session(DUET, stem).path
        (transcripts / "duet" / source.parent.name).mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, transcripts / "duet" / source.parent.name / source.name)
    work, results = tmp_path / "work", tmp_path / "results"
    out = subprocess.run(
        [sys.executable, "-m", "nous_assets.cli", "bench", "replay", "--transcripts", str(transcripts),
         "--workdir", str(work), "--out-dir", str(results)],
        capture_output=True, text=True, timeout=1200,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr[-3000:]
    last = out.stdout.strip().splitlines()[-1]
    assert re.fullmatch(r"replay coverage: [01]\.\d{3} uptake: [01]\.\d{3}", last)
    report = json.loads(next(results.glob("replay-*.json")).read_text())
    nous = report["totals"]["nous"]
    assert last == f"replay coverage: {nous['coverage']['rate']:.3f} uptake: {nous['uptake']['rate']:.3f}"
    assert report["scored_sessions"] == 1 and [s["scored"] for s in report["sessions"]] == [False, True]
    assert len({s["project"] for s in report["sessions"]}) == 1
    assert re.search(r"replay: session 2/2 duet 410c9611: packet [\d,]+ chars", out.stderr)
    first, second = report["sessions"]
    assert first["packet"] == ""  # nothing had ended when the first session started
    assert second["needs"]["commands"] == ["bash scripts/generate-readme.sh"]
    assert second["baseline_packet"] == baseline_packet(session_facts(_session(DUET, "7c03c5fa")))
    assert second["earlier"] == [first["key"]]
    # the same hook over a fresh store built from the first session alone prints the recorded packet
    alone = tmp_path / "alone"
    (alone / "src" / "duet").mkdir(parents=True)
    shutil.copy2(transcripts / first["key"], alone / "src" / "duet")
    layout = lay_out(alone / "src", alone / "w" / "home" / ".claude" / "projects")
    env = scratch_env(alone / "w")
    start, end = activity_span(layout.projects)
    env["NOUS_PARTITION_START"] = start
    _nous(["backfill", "--from", start, "--to", end], env, lambda m: None)
    _nous(["hooks", "install"], env, lambda m: None)
    command = session_start_command(alone / "w" / "home" / ".claude" / "settings.json")
    assert second["packet"] and run_hook(command, second["cwd"], env, tmp_path, "again") == second["packet"]

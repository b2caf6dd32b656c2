"""Canonical commands per purpose across sessions (brief/commands.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.commands import mine_commands
from nous_assets.brief.manifests import read_manifests
from nous_assets.brief.timeline import build_timeline
from nous_assets.extract.base import SessionBatch


def _mine(*sessions: Sess) -> dict[str, object]:
    views = build_timeline([s.batch() for s in sessions])
    return {i.key: i for i in mine_commands(views, read_manifests(views))}


def test_real_wakil_uv_pytest_and_ruff():
    items = {i.key: i for i in _real("transcripts-dev3", "wakil")}
    assert items["cmd:test"].content == "Run the tests with `uv run pytest -q`."
    assert items["cmd:lint"].content == "Lint with `uv run ruff check`."
    assert items["cmd:test"].status == "verified" and len(items["cmd:test"].sessions) >= 2
    assert all("tests/" not in i.content for i in items.values())  # no test file is recommended


def test_real_ironclaw_cargo_from_its_crate_folder():
    # ironclaw runs cargo inside orchestrator/ (`cd orchestrator && …`, then the shell stays there)
    items = {i.key: i for i in _real("transcripts-dev3", "ironclaw")}
    assert items["cmd:format"].content == "Format the code with `cargo fmt --all` from `orchestrator/`."
    assert items["cmd:test"].paths == ("orchestrator/Cargo.toml",)
    assert "make fmt" not in " ".join(i.content for i in items.values())  # `make fmt` failed: no such target


def test_real_ironclaw_coverage_command_as_the_sessions_ran_it():
    # ironclaw 005dee17 runs tarpaulin from orchestrator/ fourteen times while lowering the coverage ratchet
    items = {i.key: i for i in _real("transcripts-dev3", "ironclaw")}
    assert items["cmd:coverage"].content == (
        'Measure test coverage with `cargo tarpaulin --out Xml --output-dir coverage --exclude-files "*/tests/*" '
        "--timeout 300 -- --test-threads=1` from `orchestrator/`."
    )
    assert items["cmd:coverage"].runs >= 2


def test_real_mise_task_with_its_manifest_entry():
    items = {i.key: i for i in _real("transcripts-dev3", "flutter-docker-image")}
    # the task's description as the last session left it (it was "Validate .github/renovate.json" at first)
    assert items["cmd:lint"].content == (
        'Lint with `mise run lint` ("Check .github/renovate.json before pushing"; '
        "it runs `./script/renovate_validate.sh`)."
    )
    assert items["cmd:lint"].paths == ("mise.toml#tasks.lint",)
    assert "cmd:check" not in items  # the script the task wraps is not said twice


def test_real_cipher_box_api_runs_with_the_hosts_its_sessions_set():
    # cipher-box 2095544c: `pnpm --filter api dev` could not reach Postgres and Redis on localhost; the session
    # pointed DB_HOST and REDIS_HOST, then the IPFS URLs, at the Docker host
    items = {i.key: i for i in _real("transcripts-dev2", "cipher-box")}
    assert items["cmd:run"].content == (
        "Start it locally with `pnpm --filter api dev`; its latest run set `DB_HOST=192.168.133.114 "
        "REDIS_HOST=192.168.133.114 IPFS_LOCAL_API_URL=http://192.168.133.114:5001 "
        "IPFS_LOCAL_GATEWAY_URL=http://192.168.133.114:8080`."
    )


def test_variables_set_again_and_again_are_shown_never_a_credential():
    s = Sess()
    s.bash("pnpm --filter api dev", "Error: connect ECONNREFUSED 127.0.0.1:5432", fail=True)
    s.bash("DB_HOST=10.0.0.5 pnpm --filter api dev", "listening on 3000")
    s.bash("DB_HOST=10.0.0.5 API_TOKEN=abc123 REDIS_HOST=10.0.0.5 pnpm --filter api dev", "listening on 3000")
    item = _mine(s)["cmd:run"]
    assert item.content == ("Start it locally with `pnpm --filter api dev`; its latest run set "
                            "`DB_HOST=10.0.0.5 REDIS_HOST=10.0.0.5`.")  # fmt: skip
    once = Sess()
    for command in ("pnpm --filter api dev", "PORT=3001 pnpm --filter api dev", "pnpm --filter api dev"):
        once.bash(command, "listening")
    assert _mine(once)["cmd:run"].content == "Start it locally with `pnpm --filter api dev`."  # a one-off


def _real(set_name: str, repo: str):
    views = build_timeline(real(set_name, repo))
    return mine_commands(views, read_manifests(views))


def test_filtered_runs_generalise_to_the_runner():
    s = Sess()
    s.bash("uv run pytest tests/test_x.py -k foo -q", "1 passed")
    s.bash("uv run pytest tests/test_y.py::test_z -q", "1 passed")
    s.bash("uv run pytest -q 2>&1 | tail -3", "12 passed")
    item = _mine(s)["cmd:test"]
    assert item.content == "Run the tests with `uv run pytest -q`." and item.runs == 3


def test_only_filtered_test_runs_are_not_canonical():
    s = Sess()
    for name in ("a", "b", "c"):
        s.bash(f"uv run pytest tests/test_{name}.py -q", "1 passed")
    assert "cmd:test" not in _mine(s)


def test_a_command_whose_last_use_failed_is_not_canonical():
    s = Sess()
    s.bash("make test", "ok")
    s.bash("make test", "ok")
    s.bash("make test", "make: *** [test] Error 1", fail=True)
    assert "cmd:test" not in _mine(s)
    s.bash("npm test", "ok")
    s.bash("npm test", "ok")
    assert _mine(s)["cmd:test"].content == "Run the tests with `npm test`."


def test_one_use_needs_a_manifest_entry_or_a_named_task():
    alone = Sess()
    alone.bash("uv run mypy", "Success: no issues found in 12 source files")
    assert _mine(alone) == {}  # a tool run once: nothing says it is the project's way
    task = Sess()
    task.bash("npm run typecheck", "ok")  # the project's own task ran and passed: it exists, as a manifest says
    assert _mine(task)["cmd:typecheck"].content == "Type-check with `npm run typecheck`."
    backed = Sess()
    backed.read("package.json", '{"scripts": {"typecheck": "tsc --noEmit"}}')
    backed.bash("npm run typecheck", "ok")
    item = _mine(backed)["cmd:typecheck"]
    assert item.content == "Type-check with `npm run typecheck` (it runs `tsc --noEmit`)."
    assert item.paths == ("package.json#scripts.typecheck",)


def test_a_script_another_script_runs_as_a_step_says_it_is_one_step():
    s = Sess()
    s.read("frontend/package.json", '{"scripts": {"build": "bun run css:build && bun build server.ts --outdir dist",'
           ' "css:build": "tailwindcss -i src/styles.css -o dist/output.css", "check": "bun run lint && bun test",'
           ' "lint": "biome check ."}}')  # fmt: skip
    s.bash("cd frontend && bun run css:build", "Done in 120ms")
    s.bash("cd frontend && bun run lint", "Checked 40 files")
    items = _mine(s)
    assert items["cmd:build"].content == (  # `build` runs css:build and more: the line must not read as the build
        "Build with `bun run css:build` from `frontend/` (it runs `tailwindcss -i src/styles.css -o dist/output.css`)"
        ", one step of `build` (`bun run css:build && bun build server.ts --outdir dist`)."
    )
    assert items["cmd:lint"].content.startswith("Lint with `bun run lint`")  # `check` runs it, but for checking
    alone = Sess()
    alone.read("frontend/package.json", '{"scripts": {"css:build": "tailwindcss -i a.css -o b.css"}}')
    alone.bash("cd frontend && bun run css:build", "Done in 120ms")
    assert _mine(alone)["cmd:build"].content == "Build with `bun run css:build` from `frontend/` (it runs " \
        "`tailwindcss -i a.css -o b.css`)."


def test_masked_bypassed_and_scratch_runs_are_no_evidence():
    s = Sess()
    s.bash("cargo clippy || true", "warning: unused")
    s.bash("cargo clippy --no-verify-x || true", "warning: unused")
    s.bash("cd /tmp/scratch && cargo build", "Finished")
    s.bash("cd /tmp/scratch && cargo build", "Finished")
    assert _mine(s) == {}


def test_most_used_family_wins_then_most_sessions():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    for _ in range(2):
        a.bash("just lint", "ok")
    b.bash("uv run ruff check .", "All checks passed!")
    b.bash("uv run ruff check .", "All checks passed!")
    b.bash("uv run ruff check .", "All checks passed!")
    assert _mine(a, b)["cmd:lint"].content == "Lint with `uv run ruff check .`."


def test_subagent_commands_count_with_the_session():
    main = Sess("m")
    main.bash("cargo clippy --all-targets", "Finished")
    sub = Sess("m", agent="a1", cwd="/home/dev/proj/.claude/worktrees/agent-a1")
    sub.bash("cargo clippy --all-targets", "Finished")
    batch = SessionBatch("proj", "m", "2026-03-01", tuple(main.turns + sub.turns))
    views = build_timeline([batch])
    (item,) = mine_commands(views, read_manifests(views))
    assert item.content == "Lint with `cargo clippy --all-targets`." and item.runs == 2

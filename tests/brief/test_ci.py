"""The checks CI workflows run on pull requests (brief/ci.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.ci import mine_ci, workflow_checks
from nous_assets.brief.timeline import build_timeline

WORKFLOW = """name: CI
on:
  push:
    branches: [main]
  pull_request:
jobs:
  rust:
    steps:
      - uses: actions/checkout@v6
      - name: Lint
        working-directory: core
        run: cargo clippy -- -D warnings
      - name: Test
        run: |
          cargo test --workspace \\
            --locked
          echo done
      - run: npm ci
"""


def _content(*sessions: Sess) -> str | None:
    items = mine_ci(build_timeline([s.batch() for s in sessions]))
    return items[0].content if items else None


def test_real_workflows_the_sessions_read():
    # ironclaw (transcripts-dev3): ci.yml read in 2d5b5c7c and eaa1ab91, then edited (the Windows leg removed)
    (item,) = mine_ci(build_timeline(real("transcripts-dev3", "ironclaw")))
    assert item.content.startswith("CI on pull requests: `.github/workflows/ci.yml` runs `cargo test --verbose`, "
                                   "`cargo clippy -- -D warnings`, `cargo fmt --all -- --check` (in `orchestrator/`)")
    assert item.key == "gate:ci" and item.status == "observed" and item.paths == (".github/workflows/ci.yml",)
    (wakil,) = mine_ci(build_timeline(real("transcripts-dev3", "wakil")))  # release.yml: no pull-request trigger
    assert wakil.content == ("CI on pull requests: `.github/workflows/ci.yml` runs `uvx ty check .`, "
                             "`uv run ruff check .`, `uv run pytest -q`.")
    # flutter-docker-image reads a ci.yml that runs on pushes to main only, and build.yml only in part
    assert mine_ci(build_timeline(real("transcripts-dev3", "flutter-docker-image"))) == []


def test_run_steps_one_line_or_a_block_with_their_folder():
    clippy, test = ("cargo clippy -- -D warnings", "core"), ("cargo test --workspace --locked", "")
    assert workflow_checks(WORKFLOW) == [clippy, test]  # `npm ci` installs: no check


def test_a_push_only_workflow_a_partial_read_and_an_edit():
    repo = ".github/workflows"
    s = Sess("s1")
    s.read(f"{repo}/deploy.yml", WORKFLOW.replace("  pull_request:\n", ""))  # a deploy on push: no gate
    assert _content(s) is None
    s.read(f"{repo}/ci.yml", WORKFLOW)
    assert _content(s) == ("CI on pull requests: `.github/workflows/ci.yml` runs `cargo clippy -- -D warnings` "
                           "(in `core/`), `cargo test --workspace --locked`.")
    s.read(f"{repo}/ci.yml", "      - run: echo partial\n", offset=10, limit=1)  # a part says nothing of the rest
    assert "cargo clippy" in _content(s)
    s.edit(f"{repo}/ci.yml", "        run: cargo clippy -- -D warnings\n", "        run: cargo build\n")
    assert "clippy" not in _content(s) and "`cargo build` (in `core/`)" in _content(s)  # the edit, replayed
    s.edit(f"{repo}/ci.yml", "text the read never showed", "x")
    assert _content(s) is None  # an edit that cannot be replayed: what the file holds is unknown

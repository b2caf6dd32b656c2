"""Citation checking against a real git checkout: what a memory cites, when it stops resolving, and that
nothing ambiguous is ever called stale."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given
from hypothesis import settings as hyp_settings
from hypothesis import strategies as st

from nous_assets.retrieve.citations import (
    KINDS,
    Checkout,
    CheckResult,
    Citation,
    check,
    checkout_root,
    citations,
)

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")

PACKAGE = {"name": "app", "private": True, "scripts": {"test:ci": "vitest run", "build": "vite build"}}
MAKEFILE = """\
# the project's make targets
VENV := .venv
STAMP := $(VENV)/.deps-installed
.PHONY: lint test site

$(STAMP): pyproject.toml
\ttouch $(STAMP)

lint test: $(STAMP)
\truff check .

site:
\tmkdocs build
"""
MISE = """\
tasks.fmt = "ruff format ."

[tasks.release]
run = "scripts/release.sh"
alias = "rel"

[tasks."docs:build"]
run = "mkdocs build"
"""
JUSTFILE = """\
set shell := ["bash", "-c"]
version := "1.0"

default:
    just --list

serve port="8000":
    python -m http.server {{port}}
"""
WORKFLOW = "name: Release\non: workflow_dispatch\njobs: {}\n"

FILES = {
    "package.json": json.dumps(PACKAGE, indent=2),
    "Makefile": MAKEFILE,
    "mise.toml": MISE,
    "justfile": JUSTFILE,
    "pyproject.toml": "[project]\nname = 'app'\n",
    "README.md": "# app\n",
    ".gitignore": ".env\nlocal/\n",
    "scripts/release.sh": "#!/bin/sh\necho release\n",
    "docs/setup.md": "# Setup\n",
    "docs/index.md": "# Docs\n",
    "src/app/main.py": "print('hi')\n",
    "tests/conftest.py": "import os\nos.environ['COLUMNS'] = '200'\n",
    ".github/workflows/release.yml": WORKFLOW,
    "web/package.json": json.dumps({"name": "web", "scripts": {"dev": "vite"}}),
}


def git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", "-c", "init.defaultBranch=main", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def commit(root: Path, message: str = "change") -> None:
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", message)


def write(root: Path, rel: str, text: str) -> None:
    (root / rel).parent.mkdir(parents=True, exist_ok=True)
    (root / rel).write_text(text)


@pytest.fixture(autouse=True)
def _no_global_configs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mise tasks and git excludes are also read from the user's global config: point those at an empty home."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("MISE_CONFIG_DIR", str(home / ".config" / "mise"))
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    for rel, text in FILES.items():
        write(root, rel, text)
    commit(root, "initial")
    return root


def stale(text: str, root: Path) -> bool:
    return bool(check(text, root).unresolved)


# ------------------------------------------------------------------------------------------------ citations


def test_citations_of_each_kind() -> None:
    text = (
        "Release with `scripts/release.sh` (see docs/setup.md, `./src/app/main.py:12`); "
        "run `npm run test:ci`, `make lint test`, `mise run docs:build`, `just serve 9000` "
        "and `gh workflow run release.yml -f bump=minor`."
    )
    assert [(c.kind, c.value) for c in citations(text)] == [
        ("path", "scripts/release.sh"),
        ("path", "docs/setup.md"),
        ("path", "src/app/main.py"),
        ("npm-script", "test:ci"),
        ("make-target", "lint"),
        ("make-target", "test"),
        ("mise-task", "docs:build"),
        ("just-recipe", "serve"),
        ("workflow", "release.yml"),
    ]


def test_commands_are_read_behind_what_runs_them() -> None:
    text = "`sudo make lint`, `CI=1 timeout 600 npm run test:ci`, `env -i just serve`, `rtk proxy mise run docs:build`"
    assert [(c.kind, c.value) for c in citations(text)] == [
        ("make-target", "lint"), ("npm-script", "test:ci"), ("just-recipe", "serve"), ("mise-task", "docs:build")
    ]


def test_citation_keeps_the_span_it_came_from() -> None:
    assert citations("see (docs/setup.md).") == [Citation("path", "docs/setup.md", "(docs/setup.md).")]
    assert citations("`npm -w web run dev`") == [Citation("npm-script", "dev", "npm -w web run dev")]
    assert citations("`FOO=1 npm run build -- --watch`") == [
        Citation("npm-script", "build", "FOO=1 npm run build -- --watch")
    ]


@pytest.mark.parametrize(
    "text",
    [
        "Prefer small functions and/or early returns; I/O is slow; n/a; 3/4 of runs; on 2026/07/16.",
        "Docs at https://example.com/docs/setup.md and github.com/owner/repo/blob/main/x.py.",
        "Settings live in `~/.claude/settings.json`.",
        "Upstream is owner/repo; see anthropics/claude-code.",
        "Work on the feat/login branch; `git checkout -b fix/crash-on-start`.",
        "The entry point is `wakil.cli.main` (module path), version v1.2/3.",
        "Install `@types/node` and `@scope/pkg`; globs like `docs/*.md` and `src/**/x.py`; `../sibling/x.py`.",
        "Run `make $TARGET`, `npm run <script>`, `mise run ${TASK}` or `just {{recipe}}`.",
        "Make sure the build passes; run it to make it work.",
        "Query `gh api repos/o/r/contents/.github/ISSUE_TEMPLATE/bug.yml --jq .content`.",
        "Truncated: `scripts/rel…` and research.md and CLAUDE.md and MEMORY.md.",
        "Use `/sweep` then `/opsx:propose`.",
        "Run `yarn vitest run src` or `npx vitest run`; `pnpm add -D tsx`; `npm run build --if-present`.",
    ],
)
def test_text_with_no_checkable_citation(text: str, repo: Path) -> None:
    assert citations(text) == []
    assert check(text, repo) == CheckResult((), 0)


def test_quoted_text_is_not_read() -> None:
    assert citations('User correction: "move it to scripts/ship.sh and run `make ship`" — done') == []
    assert citations("“docs/old.md” was the name") == []


def test_cd_and_url_commands_hide_their_paths() -> None:
    assert citations("`cd orchestrator && cargo llvm-cov --output-path target/cov/lcov.info`") == []
    assert citations("`curl -o out/file.tar.gz https://x.y/z`") == []
    assert [c.value for c in citations("`cd web && npm run dev`")] == ["dev"]
    assert citations("`cd /elsewhere && make deploy`") == []


# ---------------------------------------------------------------------------------------------- resolving


@pytest.mark.parametrize(
    "text",
    [
        "Cut a release with `scripts/release.sh`.",
        "docs/setup.md explains the install; also see `./docs/index.md`.",
        "The entry point is src/app/main.py:3.",
        "The app code is under `src/app/`.",
        "CI runs `npm run test:ci` then `npm run build`.",
        "Lint with `make lint`; `make test site V=1`; `make .venv/.deps-installed`.",
        "Format with `mise run fmt`, release with `mise r rel`, docs via `mise run docs:build`.",
        "Serve locally with `just serve 9000`.",
        "Cut a release with `gh workflow run release.yml -f bump=minor`.",
        "Project metadata is in pyproject.toml and README.md.",
        "`cd web && npm run dev` starts the front end.",
    ],
)
def test_each_citation_resolves(text: str, repo: Path) -> None:
    result = check(text, repo)
    assert result.unresolved == ()
    assert result.checked == len(citations(text)) > 0


def test_renamed_script_is_stale(repo: Path) -> None:
    git(repo, "mv", "scripts/release.sh", "scripts/ship.sh")
    commit(repo)
    result = check("Cut a release with `scripts/release.sh`.", repo)
    assert result.unresolved == (Citation("path", "scripts/release.sh", "scripts/release.sh"),)
    assert result.checked == 1
    assert not stale("Cut a release with `scripts/ship.sh`.", repo)


def test_deleted_doc_is_stale(repo: Path) -> None:
    git(repo, "rm", "-q", "docs/setup.md")
    commit(repo)
    assert stale("docs/setup.md explains the install.", repo)
    assert not stale("docs/index.md explains the install.", repo)


def test_a_deleted_top_level_directory_is_not_decidable(repo: Path) -> None:
    """A path whose first segment is no longer a top-level entry can't be told from another repository's path."""
    git(repo, "rm", "-q", "-r", "docs")
    commit(repo)
    assert check("docs/setup.md explains the install.", repo) == CheckResult((), 0)


def test_renamed_npm_script_is_stale(repo: Path) -> None:
    write(repo, "package.json", json.dumps({"scripts": {"test:all": "vitest run", "build": "vite build"}}))
    commit(repo)
    assert stale("CI runs `npm run test:ci`.", repo)
    assert stale("CI runs `pnpm run test:ci`.", repo)
    assert not stale("CI runs `npm run test:all`.", repo)
    assert check("CI runs `pnpm test:ci`.", repo).checked == 0  # pnpm runs any command: only a hit is certain


def test_yarn_scripts_are_stale_only_when_no_binary_can_answer(repo: Path) -> None:
    assert check("`yarn lint`", repo).checked == 0  # no node_modules/.bin to rule out a binary
    (repo / "node_modules" / ".bin").mkdir(parents=True)
    (repo / "node_modules" / ".bin" / "tsc").write_text("")
    assert stale("`yarn lint`", repo)
    assert not stale("`yarn tsc`", repo)
    assert not stale("`yarn run build`", repo)


def test_removed_make_target_is_stale(repo: Path) -> None:
    write(repo, "Makefile", MAKEFILE.replace("site:\n\tmkdocs build\n", "").replace(" site", ""))
    commit(repo)
    assert stale("Build the docs with `make site`.", repo)
    assert not stale("`make lint`", repo)
    assert not stale("`make docs`", repo)  # no rule, but the docs/ directory is an up-to-date target


def test_removed_mise_task_is_stale(repo: Path) -> None:
    write(repo, "mise.toml", MISE.replace('[tasks."docs:build"]\nrun = "mkdocs build"\n', ""))
    commit(repo)
    assert stale("`mise run docs:build`", repo)
    assert not stale("`mise run release`", repo)


def test_mise_file_tasks(repo: Path) -> None:
    write(repo, "mise-tasks/db/migrate.sh", "#!/bin/sh\n")
    commit(repo)
    assert not stale("`mise run db:migrate`", repo)
    assert stale("`mise run db:seed`", repo)


def test_removed_just_recipe_is_stale(repo: Path) -> None:
    write(repo, "justfile", JUSTFILE.split("serve")[0])
    commit(repo)
    assert stale("`just serve`", repo)
    assert not stale("`just default`", repo)


def test_removed_workflow_is_stale(repo: Path) -> None:
    git(repo, "rm", "-q", ".github/workflows/release.yml")
    write(repo, ".github/workflows/ci.yml", WORKFLOW)
    commit(repo)
    assert stale("Cut a release with `gh workflow run release.yml -f bump=minor`.", repo)
    assert check("`gh workflow run release.yml --repo other/repo`", repo).checked == 0


def test_realistic_memories(repo: Path) -> None:
    assert citations("Run the tests with `uv run pytest -q`.") == []
    pins = "tests/conftest.py pins COLUMNS=200 because rich wraps at the terminal width otherwise."
    assert check(pins, repo) == CheckResult((), 1)
    git(repo, "rm", "-q", "tests/conftest.py")
    write(repo, "tests/test_app.py", "")
    commit(repo)
    assert stale(pins, repo)


def test_a_subdirectory_manifest_or_path_suffix_counts(repo: Path) -> None:
    assert not stale("`npm run dev`", repo)  # web/package.json has it: the session may have run in web/
    assert stale("`npm run deploy`", repo)
    assert check("See `app/main.py:1`.", repo) == CheckResult((), 1)  # src/app/main.py, cited from a session in src/
    assert check("See `app/gone.py`.", repo) == CheckResult((), 0)  # app/ is not a top-level entry
    write(repo, "app/other.py", "")
    assert stale("See `app/gone.py`.", repo)


def test_absolute_paths(repo: Path) -> None:
    assert check(f"See {repo}/docs/setup.md.", repo) == CheckResult((), 1)
    assert stale(f"See {repo}/docs/gone.md.", repo)
    assert check("See /usr/share/doc/gone.md.", repo) == CheckResult((), 0)


def test_ignored_and_generated_paths_are_never_stale(repo: Path) -> None:
    for rel in ("local/other.md", "node_modules/y/index.js", "dist/other.js"):
        write(repo, rel, "")
    for text in ("`local/notes.md`", "`node_modules/x/index.js`", "`dist/app.js`"):
        assert check(text, repo) == CheckResult((), 0)
    assert stale("`src/notes.md`", repo)


def test_memories_about_absence_are_never_stale(repo: Path) -> None:
    assert not stale("`make tset` failed with 'No rule'; fixed by running `make test` instead", repo)
    assert not stale("scripts/old.sh was renamed to scripts/release.sh", repo)
    assert not stale("Decision: add `scripts/deploy.sh` (proposed by Claude, approved by the user)", repo)
    narrative = 'User correction: "too confident" — after Claude said "…"; Claude then ran `grep x docs/gone.md`'
    assert check(narrative, repo) == CheckResult((), 0)
    assert stale("Deploy with `scripts/deploy.sh`.", repo)


def test_branch_memories_do_not_flag_extensionless_paths(repo: Path) -> None:
    assert not stale("Rebase src/app/login-flow onto main before the PR.", repo)
    assert stale("The login flow lives in src/app/login-flow/.", repo)


def test_corrupt_manifests_are_never_stale(repo: Path) -> None:
    write(repo, "package.json", "{not json")
    write(repo, "mise.toml", "[tasks\n")
    assert check("`npm run nope` `mise run nope`", repo) == CheckResult((), 0)


@pytest.mark.parametrize(
    "extra",
    ["include missing.mk\n", "$(eval $(call rules))\n", "$(shell echo x):\n\ttrue\n", "$(UNKNOWN):\n\ttrue\n"],
)
def test_makefiles_that_cannot_be_read_completely_are_never_stale(repo: Path, extra: str) -> None:
    write(repo, "Makefile", MAKEFILE + extra)
    assert check("`make nope`", repo) == CheckResult((), 0)
    assert check("`make lint`", repo) == CheckResult((), 1)


def test_makefile_includes_patterns_and_files(repo: Path) -> None:
    write(repo, "rules.mk", "release: test\n\ttrue\n")
    write(repo, "Makefile", MAKEFILE + "include rules.mk\nbuild/%.o: %.c\n\tcc $<\n")
    write(repo, "hello.c", "int main(){}\n")
    assert not stale("`make release`", repo)
    assert not stale("`make build/x.o`", repo)
    assert not stale("`make hello`", repo)  # built-in implicit rule from hello.c
    assert stale("`make nope`", repo)


def test_checkout_reused_for_many_memories(repo: Path) -> None:
    checkout = Checkout(repo)
    assert checkout.check("`make lint`").unresolved == ()
    assert checkout.check("`make nope`").stale
    assert checkout.resolves(Citation("path", "zzz/x.md", "zzz/x.md")) is None


# ----------------------------------------------------------------------------------------------- checkout_root


def test_checkout_root_from_a_subdirectory(repo: Path, tmp_path: Path) -> None:
    assert checkout_root([str(tmp_path / "gone"), str(repo / "src" / "app")]) == repo
    assert checkout_root([str(repo)]) == repo


def test_checkout_root_of_a_linked_worktree(repo: Path, tmp_path: Path) -> None:
    git(repo, "worktree", "add", "-q", "../wt")
    worktree = tmp_path / "wt"
    assert (worktree / ".git").is_file()
    assert checkout_root([str(worktree / "docs")]) == worktree
    assert check("docs/setup.md", worktree) == CheckResult((), 1)


def test_checkout_root_skips_missing_and_untracked_directories(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert checkout_root([str(tmp_path / "gone"), str(plain)]) is None
    assert checkout_root([]) is None
    assert checkout_root(["", "\0bad"]) is None


def test_a_dangling_worktree_file_is_not_a_work_tree(tmp_path: Path) -> None:
    orphan = tmp_path / "orphan"
    orphan.mkdir()
    (orphan / ".git").write_text("gitdir: /nonexistent/.git/worktrees/orphan\n")
    assert checkout_root([str(orphan)]) is None


# ------------------------------------------------------------------------------------------------------ fuzz

FRAGMENTS = st.sampled_from(
    [
        "`",
        "``",
        '"',
        "“",
        " ",
        "/",
        "./",
        "../",
        "~",
        "@",
        ":",
        ":12",
        "…",
        "docs/setup.md",
        "scripts/",
        "make ",
        "npm run ",
        "pnpm ",
        "yarn ",
        "mise run ",
        "just ",
        "gh workflow run ",
        "cd ",
        "&&",
        "$(",
        "|",
        "\n",
        "\0",
        "release.yml",
        "Makefile",
        "-C",
        "--filter",
    ]
)
TEXTS = st.lists(st.one_of(FRAGMENTS, st.text(max_size=8)), max_size=25).map("".join)


@hyp_settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=TEXTS, which=st.integers(0, 4), junk=st.text(max_size=10))
def test_never_raises(repo: Path, tmp_path: Path, text: str, which: int, junk: str) -> None:
    safe = junk.replace("/", "_").replace(".", "_")
    root = [repo, tmp_path / "gone", repo / "README.md", tmp_path / f"x{safe}", repo / "src"][which]
    found = citations(text)
    assert all(isinstance(c, Citation) and c.kind in KINDS and c.value for c in found)
    result = check(text, root)
    assert set(result.unresolved) <= set(found)
    assert len(result.unresolved) <= result.checked <= len(found)
    top = checkout_root([text, junk])
    assert top is None or (top / ".git").exists()

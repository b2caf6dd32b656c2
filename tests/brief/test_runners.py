"""What a command is for and its canonical form (brief/runners.py)."""

from __future__ import annotations

import pytest
from brief_turns import Sess

from nous_assets.brief.runners import classify, purpose_of_name
from nous_assets.brief.shell_split import segments
from nous_assets.brief.timeline import build_timeline


def _use(command: str):
    (seg,) = [s for s in segments(command, "/r")]
    return classify(seg)


@pytest.mark.parametrize(
    ("command", "purpose", "form", "filtered"),
    [
        ("uv run pytest tests/test_x.py -k foo -q 2>&1 | tail -5", "test", "uv run pytest -q", True),
        ('uv run pytest -q -m "not eval"', "test", 'uv run pytest -q -m "not eval"', False),
        ("go test -run TestX ./pkg/...", "test", "go test ./...", True),
        ("cargo test my_test -- --nocapture --exact", "test", "cargo test -- --nocapture", True),
        ("cargo test --lib 2>&1 | tail -10", "test", "cargo test", True),  # unit tests only: not the suite
        ("cargo test --quiet --test api", "test", "cargo test --quiet", True),
        ("mix test test/a_test.exs:12 --seed 0", "test", "mix test", True),
        ("pnpm --filter @x/api test -- --testPathPattern=otp", "test", "pnpm --filter @x/api test", True),
        ("uv run ruff check src/pkg/a.py tests/test_a.py", "lint", "uv run ruff check", True),
        ("uvx ty check src/pkg/a.py", "typecheck", "uvx ty check", True),
        ("cargo fmt --all -- --check", "format", "cargo fmt --all -- --check", False),
        ("npm run lint -- --fix", "lint", "npm run lint -- --fix", False),
        ("mise run test:ci", "test", "mise run test:ci", False),
        ("make -C orchestrator lint", "lint", "make -C orchestrator lint", False),
        ("bun run typecheck", "typecheck", "bun run typecheck", False),
        ("./scripts/test.sh --ci unit", "test", "./scripts/test.sh --ci", True),
        ("python manage.py test app.tests", "test", "python manage.py test", True),
        ("iex -S mix phx.server", "run", "iex -S mix phx.server", False),
        ("cargo tarpaulin --out Xml --timeout 300 -- --test-threads=1", "coverage",
         "cargo tarpaulin --out Xml --timeout 300 -- --test-threads=1", False),
        ("uv run coverage run -m pytest", "coverage", "uv run coverage run -m pytest", False),
        ("npm run test:coverage", "coverage", "npm run test:coverage", False),
        ("uv run pytest --cov=src -q", "test", "uv run pytest --cov=src -q", False),  # the suite, with a report
    ],
)
def test_forms_drop_one_off_filters(command, purpose, form, filtered):
    use = _use(command)
    assert (use.purpose, use.form, use.filtered) == (purpose, form, filtered)


@pytest.mark.parametrize(
    "command",
    ["prettier --write README.md", "mypy src/x.py", "npm install", "git commit -m x", "uv run wakil enrich 2",
     "cargo test --no-run", "gh pr view $pr", "./scripts/start-auto-merge.sh", "python3 -c 'print(1)'"],
)  # fmt: skip
def test_not_project_commands(command):
    assert _use(command) is None


def test_family_ignores_flags_and_names_state_purposes():
    assert _use("uv run pytest -q").family == _use("uv run pytest tests/a.py").family == "uv run pytest"
    names = ("test:ci", "check:types", "lint:fix", "css:build", "generate-readme.sh", "check", "check-links.sh")
    assert [purpose_of_name(n) for n in names] == ["test", "typecheck", "lint", "build", None, "check", None]


def test_a_check_piped_into_tail_fails_on_its_own_summary():
    s = Sess()
    s.bash("uv run pytest -q 2>&1 | tail -3", "FAILED tests/test_a.py::test_x\n1 failed, 9 passed in 0.4s")
    s.bash("uv run pytest -q 2>&1 | tail -3", "10 passed in 0.4s")
    s.bash("ls | tail -3", "1 failed attempt.txt")  # not a check: its output is just data
    (view,) = build_timeline([s.batch()])
    assert [step.status for step in view.steps] == ["fail", "ok", "ok"]

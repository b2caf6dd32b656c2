"""Manifest entries and stack facts as the sessions saw them (brief/manifests.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.manifests import parse, read_manifests
from nous_assets.brief.runners import classify
from nous_assets.brief.shell_split import segments
from nous_assets.brief.timeline import build_timeline


def _names(rel: str, text: str) -> list[str]:
    return [e.ref for e in parse(rel, text)[0]]


def test_task_runner_entries():
    assert _names("Makefile", ".PHONY: test\ntest:\n\tuv run pytest\nlint fmt: deps\n\truff check .\nX := 1\n") == [
        "Makefile#test", "Makefile#lint", "Makefile#fmt",
    ]  # fmt: skip
    mise = '[tools]\nnode = "20"\n[tasks."test:ci"]\nrun = "uv run pytest -q"\n[tasks.lint]\nrun = ["./lint.sh"]\n'
    entries, facts, _ = parse("mise.toml", mise)
    assert [(e.name, e.body) for e in entries] == [("tasks.test:ci", "uv run pytest -q"), ("tasks.lint", "./lint.sh")]
    assert facts[0].text == "tools (mise): node 20"
    assert _names("justfile", "set shell := ['bash']\ntest *ARGS:\n    cargo test\n") == ["justfile#test"]


def test_what_an_entry_is_for_in_the_maintainers_words():
    mise = '[tasks.lint]\ndescription = "Check `.github/renovate.json` before pushing"\nrun = "./v.sh"\n'
    mise += '[tasks.docs]\nrun = "x"\n'
    assert [e.about for e in parse("mise.toml", mise)[0]] == ["Check .github/renovate.json before pushing", ""]
    make = "# Run the unit tests\ntest:\n\tpytest\nlint: ## Lint the code\n\truff check .\n"
    make += "# ----\nfmt:\n\truff format\n"
    assert [e.about for e in parse("Makefile", make)[0]] == ["Run the unit tests", "Lint the code", ""]
    just = "# Build the site\nbuild:\n    hugo\n\nserve:\n    hugo serve\n"
    assert [e.about for e in parse("justfile", just)[0]] == ["Build the site", ""]
    task = "version: '3'\ntasks:\n  test:\n    desc: Run all tests\n    cmds:\n      - go test ./...\n"
    task += "  vet:\n    cmds: [go vet]\n"
    assert [(e.name, e.about) for e in parse("Taskfile.yml", task)[0]] == [("test", "Run all tests"), ("vet", "")]
    long = '[tasks.x]\ndescription = "' + "word " * 30 + '"\n'
    assert parse("mise.toml", long)[0][0].about == ""  # too long to quote on one line of the brief


def test_package_json_whole_or_partial():
    entries, facts, name = parse(
        "web/package.json", '{"name": "@x/web", "scripts": {"test": "vitest run"}, "engines": {"node": ">=20"}}'
    )
    assert [e.ref for e in entries] == ["web/package.json#scripts.test"] and name == "@x/web"
    assert [f.text for f in facts] == ["Node >=20"]
    partial = '{\n  "name": "x",\n  "scripts": {\n    "lint": "eslint .",\n    "build": "tsc -b"\n'
    assert _names("package.json", partial) == ["package.json#scripts.lint", "package.json#scripts.build"]


def test_stack_facts():
    py = '[project]\nrequires-python = ">=3.12"\ndependencies = [\n  "typer>=0.12",\n]\n'
    py += "[tool.ruff]\n[tool.pytest.ini_options]\n"
    entries, facts, _ = parse("pyproject.toml", py)
    assert [e.name for e in entries] == ["tool.ruff", "tool.pytest"]
    assert [f.text for f in facts] == ["Python >=3.12", "typer"]
    py = py.replace('"typer>=0.12",', '"typer>=0.12", "asyncpg", "psycopg[binary]>=3",')
    assert [f.text for f in parse("pyproject.toml", py)[1]] == ["Python >=3.12", "typer, psycopg"]  # one driver
    mix = 'elixir: "~> 1.19",\n  defp deps do\n    [{:ash, "~> 3.0"}, {:ash_sqlite, "~> 0.2"}, {:oban, "~> 2.0"}]'
    assert [f.text for f in parse("mix.exs", mix)[1]] == ["Elixir ~> 1.19", "ash, oban, ash_sqlite"]
    assert [f.text for f in parse("Cargo.toml", '[package]\nedition = "2021"\n')[1]] == ["Rust (edition 2021)"]
    docker = "FROM debian:13-slim@sha256:abc AS base\nFROM base AS app\nFROM fastlane AS android\n"
    assert [f.text for f in parse("app.Dockerfile", docker)[1]] == ["base image debian:13-slim"]


def test_entries_from_reads_and_lone_cat_back_commands_from_subfolders():
    s = Sess()
    s.read("mise.toml", '[tasks.lint]\nrun = "ruff check ."\n')
    s.bash("cat package.json", '{"scripts": {"test": "vitest"}}')
    s.bash("cat Makefile; echo ---; cat other", "test:\n\tpytest\n")  # mixed output: not a manifest sighting
    book = read_manifests(build_timeline([s.batch()]))
    (lint,) = [classify(seg) for seg in segments("mise run lint", "/r")]
    assert book.entry(lint, "sub/dir").ref == "mise.toml#tasks.lint"
    assert book.entry(classify(segments("npm test", "/r")[0]), "").body == "vitest"
    assert book.entry(classify(segments("make test", "/r")[0]), "") is None


def test_real_mise_task_read_in_a_session():
    # flutter-docker-image 4382554b reads mise.toml (tasks.lint runs ./script/renovate_validate.sh)
    book = read_manifests(build_timeline(real("transcripts-dev3", "flutter-docker-image")))
    (use,) = [classify(seg) for seg in segments("mise run lint", "/r")]
    assert book.entry(use, "").body == "./script/renovate_validate.sh"

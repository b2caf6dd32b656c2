"""README's settings table and command list, checked against the code so they cannot drift.

* Every ``NOUS_*`` variable the code reads (a string constant in ``nous_assets/`` or ``resolver/``) is a row of
  README's "Where things live" table, and every ``NOUS_*`` variable there is read by code.
* Every ``nous`` command argparse registers is in README's command table as ``nous NAME``, and every ``nous NAME``
  there is registered; every subcommand or action a command takes (``review approve``, ``serve token create``,
  ``bench memories``) is named in its command's rows, and every ``COMMAND SUB`` a row's first column names exists.

ARCHITECTURE's import table is held by ``tests/test_import_layers.py``.
"""

from __future__ import annotations

import argparse
import ast
import re
from pathlib import Path

from nous_assets.cli.main import build_parser

REPO = Path(__file__).resolve().parents[1]
VARIABLE = re.compile(r"NOUS_[A-Z0-9_]+")


def _section(heading: str) -> str:
    """README's text under ``heading`` (a ``## `` line) up to the next ``## `` heading."""
    text = (REPO / "README.md").read_text(encoding="utf-8")
    start = text.index(f"\n## {heading}\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def _table_rows(section: str) -> list[list[str]]:
    """The cells of each table row (header and separator left out; ``\\|`` inside a cell is kept)."""
    rows = []
    for line in section.splitlines():
        if line.startswith("|") and not line.startswith("|---"):
            rows.append([c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]])
    return rows[1:]


# --- settings ----------------------------------------------------------------------------------------------------


def _variables_read() -> dict[str, str]:
    """``NOUS_*`` names the code holds as a whole string constant -> the first file holding it."""
    found: dict[str, str] = {}
    for root in ("nous_assets", "resolver"):
        for path in sorted((REPO / root).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str) and VARIABLE.fullmatch(node.value):
                    found.setdefault(node.value, str(path.relative_to(REPO)))
    return found


def _variables_documented() -> set[str]:
    return {name for row in _table_rows(_section("Where things live")) for name in VARIABLE.findall(" ".join(row))}


def test_every_variable_the_code_reads_is_in_the_readme() -> None:
    read, documented = _variables_read(), _variables_documented()
    missing = [f"{name} (read in {read[name]})" for name in sorted(set(read) - documented)]
    assert missing == [], "add these to README's 'Where things live' table"


def test_every_variable_in_the_readme_is_read_by_the_code() -> None:
    unread = sorted(_variables_documented() - set(_variables_read()))
    assert unread == [], "README's 'Where things live' table names variables no code reads"


def test_the_variable_checker_sees_what_settings_reads() -> None:
    read = _variables_read()
    assert {"NOUS_DATA_DIR", "NOUS_DB_PATH", "NOUS_BACKEND", "NOUS_FIRST_DAY"} <= set(read)
    assert "NOUS_DATA_DIR" in _variables_documented()


# --- commands ----------------------------------------------------------------------------------------------------


def _subcommands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return {name: sub for a in parser._actions if isinstance(a, argparse._SubParsersAction)
            for name, sub in a.choices.items()}  # fmt: skip


def _actions(parser: argparse.ArgumentParser) -> set[str]:
    """What a command takes after its name: its subcommands and the choices of its positional arguments."""
    names = set(_subcommands(parser))
    for a in parser._actions:
        if not a.option_strings and a.choices and not isinstance(a, argparse._SubParsersAction):
            names |= {str(c) for c in a.choices}
    return names


def _registered() -> dict[str, set[str]]:
    """Each top-level command -> what it takes; nested subcommands (``serve token``) are keyed by their name."""
    out: dict[str, set[str]] = {}

    def walk(name: str, parser: argparse.ArgumentParser) -> None:
        out[name] = _actions(parser)
        for sub, child in _subcommands(parser).items():
            if _subcommands(child) or _actions(child):
                walk(sub, child)

    for name, parser in _subcommands(build_parser()).items():
        walk(name, parser)
    return out


def _command_rows() -> list[list[str]]:
    return _table_rows(_section("The `nous` command"))


def _listed() -> set[str]:
    return {m for row in _command_rows() for m in re.findall(r"\bnous ([a-z][a-z-]*)", row[0])}


def _word(name: str, text: str) -> bool:
    return re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text) is not None


def test_every_command_is_in_the_readme() -> None:
    top = set(_subcommands(build_parser()))
    assert sorted(top - _listed()) == [], "add a row for these commands to README's command table"


def test_every_command_in_the_readme_exists() -> None:
    top = set(_subcommands(build_parser()))
    assert sorted(_listed() - top) == [], "README's command table lists commands nous does not have"


def test_every_subcommand_is_named_in_its_commands_rows() -> None:
    """``review dismiss``, ``bench replay``: each thing a command takes appears in a row naming that command."""
    rows, missing = _command_rows(), []
    top = set(_subcommands(build_parser()))
    for command, takes in _registered().items():
        parent = command if command in top else "serve"  # the one nested group: serve token
        text = " ".join(" ".join(row) for row in rows if _word(f"nous {parent}", row[0]))
        missing += [f"nous {command} {name}" for name in sorted(takes) if not _word(name, text)]
    assert missing == [], "README's command table does not name these"


def test_every_subcommand_in_the_readme_exists() -> None:
    """A row's first column naming ``COMMAND SUB`` (``mcp install``, ``bench hooks\\|retrieval``) names a real one."""
    registered, wrong = _registered(), []
    for row in _command_rows():
        for command, takes in registered.items():
            for match in re.finditer(rf"(?<![\w-]){re.escape(command)} ([a-z][a-z-]*(?:\\\|[a-z][a-z-]*)*)", row[0]):
                wrong += [f"{command} {n}" for n in match.group(1).split("\\|") if n not in takes]
    assert wrong == [], "README's command table names subcommands nous does not have"


def test_the_command_checker_sees_nested_groups() -> None:
    registered = _registered()
    assert {"create", "list", "revoke"} <= registered["token"]
    assert {"approve", "reject", "dismiss"} <= registered["review"]
    assert "token" in registered["serve"] and "run" in registered and not registered["run"]


# --- paths --------------------------------------------------------------------------------------------------------


def _named_paths(doc: str) -> list[str]:
    """Paths a doc names in backticks: repo paths (``nous_assets/…``, ``tests/…``) and ``store/…`` ones."""
    text = (REPO / doc).read_text(encoding="utf-8")
    out = re.findall(r"`((?:nous_assets|resolver|tests|benchmarks|deploy)/[^`\s]*)`", text)
    out += ["nous_assets/" + p for p in re.findall(r"`(store/[^`\s]*)`", text)]
    return [p.split("::")[0] for p in out if not set(p) & set("*<>…")]


def _candidates(path: str) -> tuple[str, ...]:
    """``store/queue.py``, ``store/pg/`` as they are; ``resolver/cache_read`` and ``store/backend.open_backend(…)``
    as modules."""
    head, _, last = path.rstrip("/").rpartition("/")
    return path, path.rstrip("/") + ".py", f"{head}/{last.split('.')[0]}.py"


def _outputs() -> set[str]:
    """Directories the tools write (``benchmarks/results/``): ignored by git, so absent from a fresh clone."""
    lines = (REPO / ".gitignore").read_text(encoding="utf-8").splitlines()
    return {line.strip().lstrip("/") for line in lines if line.strip().endswith("/")}


def test_the_docs_name_paths_that_exist() -> None:
    """A module moved or deleted leaves its old path in README or ARCHITECTURE: said here, with the doc."""
    outputs = _outputs()
    stale = [
        f"{doc}: {path}"
        for doc in ("README.md", "ARCHITECTURE.md")
        for path in _named_paths(doc)
        if path not in outputs and not any((REPO / candidate).exists() for candidate in _candidates(path))
    ]
    assert stale == [], "update these paths in the docs"

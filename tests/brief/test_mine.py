"""The whole miner (brief/mine.py): determinism, order, limits, purity, speed."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

from brief_turns import real

from nous_assets.brief import BriefItem, mine_brief
from nous_assets.brief.item import SECTIONS, STATUSES
from nous_assets.brief.mine import _says

PACKAGE = Path(__file__).resolve().parents[2] / "nous_assets" / "brief"


def test_same_items_whatever_the_order_of_sessions():
    sessions = real("transcripts-dev3", "wakil")
    shuffled = list(sessions)
    random.Random(7).shuffle(shuffled)
    items = mine_brief(sessions)
    assert items == mine_brief(shuffled) == mine_brief(list(reversed(sessions)))
    # the gate names `uv run pytest` and `uv run ruff check`: their command lines would only repeat it
    # and no recurring-command line: 09cc95ef ran `uv run wakil init` on scratch copies and `qmd collection list`
    # to look, in one session (a fresh reader judged the line they made one-off)
    assert [i.key for i in items][:3] == ["cmd:typecheck", "skills", "gate"]
    assert '`uv run pytest -q -m "not eval"`, then `uv run ruff check`' in items[2].content


def test_a_command_the_gate_runs_stricter_is_not_said_again_one_it_only_checks_is():
    items = {i.key: i.content for i in mine_brief(real("transcripts", "spotter"))}
    assert "`mix compile --warnings-as-errors`" in items["gate"]
    assert "cmd:build" not in items  # "Build with `mix compile`": the gate runs it stricter
    assert items["cmd:format"] == "Format the code with `mix format`."
    assert _says("mix compile --warnings-as-errors", "mix compile")
    assert _says("cargo clippy -- -D warnings", "cargo clippy")
    assert not _says("mix format --check-formatted", "mix format")  # a check does not say how to format
    assert not _says("cargo fmt --all -- --check", "cargo fmt --all")
    assert not _says("mix compile.assets", "mix compile") and not _says("mix test", "mix")


def test_items_are_well_formed_on_every_real_repository():
    for set_name, repo in [("transcripts-dev3", "ironclaw"), ("transcripts-dev3", "duet"),
                           ("transcripts-dev2", "cipher-box"), ("transcripts", "spotter")]:  # fmt: skip
        sessions = real(set_name, repo)
        ids = {s.session_id for s in sessions}
        items = mine_brief(sessions)
        assert items == sorted(items, key=lambda i: (SECTIONS.index(i.section), i.key))
        assert len({i.key for i in items}) == len(items)
        for item in items:
            _well_formed(item, ids)


def _well_formed(item: BriefItem, ids: set[str]) -> None:
    assert item.status in STATUSES and item.section in SECTIONS
    assert len(item.content) <= (500 if item.section == "layout" else 300)
    assert not re.search(r"\b20\d\d-\d\d-\d\d", item.content), item.content  # no dates
    assert not any(sid[:8] in item.content for sid in ids), item.content  # no session ids
    assert set(item.sessions) <= ids and list(item.sessions) == sorted(item.sessions)
    assert 1 <= len(item.evidence) <= 6 and all(e["session"] in ids for e in item.evidence)
    assert item.first_seen <= item.last_seen and item.last_session in item.sessions


def test_no_sessions_no_items():
    assert mine_brief([]) == []


def test_pure_no_dagster_no_sqlite():
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for name in names:
                assert not name.startswith(("dagster", "sqlite3", "nous_assets.store", "nous_assets.defs")), (
                    path,
                    name,
                )

"""Tool arguments: ranges, dates, sizes and the configured default budget, checked before anything is read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nous_assets.errors import ConfigError
from nous_assets.mcp_server import inputs
from nous_assets.settings import load_settings


def _config(tmp_path: Path, thresholds: dict) -> dict[str, str]:
    cfg = tmp_path / ".claude" / "nous" / "config.json"
    cfg.parent.mkdir(parents=True)
    cfg.write_text(json.dumps({"thresholds": thresholds}))
    return {"HOME": str(tmp_path)}


def test_recall_budget_comes_from_config_and_is_bounded(tmp_path: Path):
    assert load_settings({"HOME": str(tmp_path)}).thresholds.recall_budget_chars == 6000
    assert load_settings(_config(tmp_path, {"recall_budget_chars": 9000})).thresholds.recall_budget_chars == 9000
    with pytest.raises(ConfigError, match="thresholds.recall_budget_chars' must be in 500..20000"):
        load_settings(_config(tmp_path / "b", {"recall_budget_chars": 50_000}))


@pytest.mark.parametrize(
    ("value", "expected"),
    [("2026-02-11", "2026-02-11T00:00:00.000000Z"), ("2026-02-11T14:30+02:00", "2026-02-11T12:30:00.000000Z"),
     (None, None)],
)  # fmt: skip
def test_instants_are_canonical_utc(value, expected):
    assert inputs.instant(value, "as_at") == expected


@pytest.mark.parametrize("value", ["", "soon", "2026-02-30", "x" * 65, 20260211])
def test_bad_instants_say_what_to_send(value):
    with pytest.raises(inputs.InputError, match="as_at"):
        inputs.instant(value, "as_at")


def test_day_window_covers_whole_utc_days():
    from datetime import date

    assert inputs.day_window(date(2026, 3, 1), 1) == ("2026-02-28T00:00:00.000000Z", "2026-03-03T00:00:00.000000Z")
    assert inputs.day_window(date(2026, 3, 1), 0) == ("2026-03-01T00:00:00.000000Z", "2026-03-02T00:00:00.000000Z")


@pytest.mark.parametrize(("value", "fragment"), [(True, "integer"), (1.5, "integer"), (0, "between 1"), (11, "10")])
def test_bounded_integers(value, fragment):
    with pytest.raises(inputs.InputError, match=fragment):
        inputs.bounded(value, "days", 1, 10)


def test_text_refuses_nul_and_oversize():
    assert inputs.text("  port  ", "query", max_chars=10) == "port"
    with pytest.raises(inputs.InputError, match="NUL"):
        inputs.text("a\x00b", "query", max_chars=10)
    with pytest.raises(inputs.InputError, match="at most 10"):
        inputs.text("x" * 11, "query", max_chars=10)


def test_a_project_directory_is_mapped_from_the_alias_table_without_reading_the_disk(conn, tmp_path: Path):
    """The directory need not exist: Nous maps it from what it recorded, and never opens it."""
    conn.execute(
        "INSERT INTO project_aliases(kind, alias, project_id, evidence, updated_at) VALUES "
        "('cwd', '/gone/repo-worktrees/feature', '-gone-repo', 'worktree', '2026-01-01T00:00:00Z'), "
        "('cwd', '/gone/repo', '-gone-repo', 'main', '2026-01-01T00:00:00Z')"
    )
    conn.execute(
        "INSERT INTO transcript_chunks(uuid, project_id, session_id, date, role, timestamp, text, source_path, "
        "line_offsets_json, uuids_json) VALUES ('u1', '-gone-repo', 's1', '2026-01-01', 'user', "
        "'2026-01-01T00:00:00.000000Z', 'hello', '/x.jsonl', '[0]', '[\"u1\"]')"
    )
    assert inputs.project(conn, "/gone/repo-worktrees/feature/src") == "-gone-repo"
    assert inputs.project(conn, "-gone-repo") == "-gone-repo"
    assert inputs.project(conn, None) is None
    with pytest.raises(inputs.InputError, match="known projects: -gone-repo"):
        inputs.project(conn, str(tmp_path))
    with pytest.raises(inputs.InputError, match="project is required"):
        inputs.project(conn, None, required=True)

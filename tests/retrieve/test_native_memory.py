"""Beside Claude Code's own memory: what it loads (CLAUDE.md with @imports, MEMORY.md) read from real files, and a
packet built over a real cortex.db that leaves out what those files already say."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from nous_assets.capture.native_memory import (
    MAX_IMPORT_DEPTH,
    MEMORY_MAX_LINES,
    auto_memory,
    cleanup_period_days,
    loaded_index,
    read_native,
    settings_layers,
    slug,
)
from nous_assets.retrieve.cache_build import build_cache, packet_plan
from nous_assets.retrieve.packet import ALREADY_NATIVE
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection import identity
from nous_assets.store.sqlite.projection import project
from nous_assets.timeutil import now_iso

PROJECT = "-home-dev-app"


def _repo(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    (repo / "docs").mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True, capture_output=True)
    return repo


def _memory_dir(config: Path, repo: Path) -> Path:
    folder = config / "projects" / slug(str(repo)) / "memory"
    folder.mkdir(parents=True)
    return folder


def test_claude_md_imports_are_followed_once_to_the_depth_claude_code_allows(tmp_path):
    repo, config = _repo(tmp_path), tmp_path / "cfg"
    (repo / "CLAUDE.md").write_text(
        "# Project rules\n- Use pnpm, not npm.\n@docs/rules.md\n```\n@docs/fenced.md\n```\n"
        "See `@docs/span.md` and @docs/missing.md\n<!-- @docs/commented.md -->\n"
    )
    (repo / "docs" / "rules.md").write_text("Never push to main.\n@../CLAUDE.md\n@chain1.md\n")  # a cycle back
    for i in range(1, 7):  # rules.md is depth 1; chain1 depth 2 ... chain6 depth 7
        (repo / "docs" / f"chain{i}.md").write_text(f"link {i}\n@chain{i + 1}.md\n")
    for name in ("fenced.md", "span.md", "commented.md"):
        (repo / "docs" / name).write_text("must not load\n")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "CLAUDE.md").write_text("Second project file.\n")
    (repo / "CLAUDE.local.md").write_text("My sandbox is sandbox-7.\n")
    (config / "rules").mkdir(parents=True)
    (config / "CLAUDE.md").write_text("Answer tersely.\n")

    native = read_native(repo, config_dir=config, env={"HOME": str(tmp_path)})
    loaded = {f.path.relative_to(tmp_path).as_posix(): f for f in native.files}
    assert list(loaded) == ["cfg/CLAUDE.md", "app/CLAUDE.md", "app/docs/rules.md", "app/docs/chain1.md",
                            "app/docs/chain2.md", "app/docs/chain3.md", "app/.claude/CLAUDE.md",
                            "app/CLAUDE.local.md"]  # fmt: skip
    assert loaded["app/docs/chain3.md"].depth == MAX_IMPORT_DEPTH - 1
    assert loaded["app/docs/rules.md"].imported_from == repo / "CLAUDE.md"
    skipped = {p.name: why for p, why in native.skipped}
    assert "missing" in skipped["missing.md"] and "deeper" in skipped["chain4.md"]
    texts = {s.text for s in native.statements()}
    assert {"Use pnpm, not npm.", "Never push to main.", "Answer tersely.", "My sandbox is sandbox-7."} <= texts
    assert not any("must not load" in t or t.startswith("@") for t in texts)


def test_auto_memory_folder_switches_and_cap(tmp_path):
    repo, config = _repo(tmp_path), tmp_path / "cfg"
    memory = _memory_dir(config, repo)
    (memory / "MEMORY.md").write_text("".join(f"- note {i}\n" for i in range(MEMORY_MAX_LINES + 20)))
    (memory / "testing.md").write_text("---\nname: testing\ntype: feedback\n---\nDo not mock the database.\n")
    env = {"HOME": str(tmp_path)}
    status = auto_memory(repo, config_dir=config, env=env)
    assert status.enabled and status.directory == memory and status.over_cap and status.index_lines == 220
    assert [p.name for p in status.topic_files] == ["testing.md"]
    native = read_native(repo, config_dir=config, env=env)
    index = next(f for f in native.files if f.kind == "auto-memory")
    assert index.text.splitlines()[-1] == f"- note {MEMORY_MAX_LINES - 1}"  # the first 200 lines load, no more
    assert len(loaded_index("x" * 30_000 + "\n" + "y\n")) == 0  # a first line over 25,000 bytes: nothing whole

    off = auto_memory(repo, config_dir=config, env={**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert not off.enabled and "CLAUDE_CODE_DISABLE_AUTO_MEMORY" in off.why
    switched_off = read_native(repo, config_dir=config, env={**env, "CLAUDE_CODE_DISABLE_AUTO_MEMORY": "1"})
    assert not any(f.kind == "auto-memory" for f in switched_off.files)
    (config / "settings.json").write_text(json.dumps({"autoMemoryEnabled": False, "cleanupPeriodDays": 90}))
    assert not auto_memory(repo, config_dir=config, env=env).enabled
    assert cleanup_period_days(settings_layers(config, repo)) == (90, config / "settings.json")
    (config / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "~/notes/mem"}))
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"autoMemoryDirectory": "/tmp/evil"}))
    moved = auto_memory(repo, config_dir=config, env=env)
    assert moved.directory == tmp_path / "notes" / "mem" and moved.configured_by == str(config / "settings.json")
    assert cleanup_period_days(settings_layers(config, repo)) == (30, None)


def _learn(store, lid: str, content: str, kind: str = "workflow") -> None:
    payload = {"content": content, "extractor_version": "t", "concepts": [kind, "app", lid], "edges": [],
               "scope": "project", "kind": kind, "status": "stated"}  # fmt: skip
    store.append(LearningEvent("LearningExtracted", lid, payload, "s1", PROJECT, "historical_backfill", f"k-{lid}",
                               valid_from="2026-02-10T10:00:00Z"))  # fmt: skip


def _packet(conn) -> tuple[str, list[int]]:
    row = conn.execute("SELECT packet_text, memory_ids_json FROM injection_cache WHERE project_id = ?",
                       (PROJECT,)).fetchone()  # fmt: skip
    return (row[0], json.loads(row[1])) if row else ("", [])


def test_a_packet_leaves_out_what_claude_md_and_memory_md_already_say(store, conn, tmp_path, monkeypatch):
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_AUTO_MEMORY", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_DISABLE_CLAUDE_MDS", raising=False)
    repo = _repo(tmp_path)
    settings = load_settings({"HOME": str(tmp_path)})
    (repo / "CLAUDE.md").write_text("# Rules\n@docs/rules.md\n")
    (repo / "docs" / "rules.md").write_text("- Always run `make lint` before every commit.\n")
    memory = _memory_dir(settings.claude_config_dir, repo)
    (memory / "MEMORY.md").write_text("- The staging database is reset every night at 02:00.\n")
    with conn:
        identity.replace_aliases(conn, {("cwd", str(repo)): (PROJECT, "test"), ("folder", PROJECT): (PROJECT, "t")},
                                 now_iso())  # fmt: skip
    _learn(store, "lint", "Always run make lint before every commit")
    _learn(store, "staging", "The staging database is reset every night at 02:00", kind="architecture")
    _learn(store, "pool", "The connection pool holds 20 connections in production", kind="configuration")
    project(conn)
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    ids = dict(conn.execute("SELECT learning_id, id FROM memories").fetchall())
    text, packet_ids = _packet(conn)
    assert packet_ids == [ids["pool"]]
    assert "make lint" not in text and "staging database" not in text
    assert f"2 of them {ALREADY_NATIVE}" in text

    plan = packet_plan(conn, settings, PROJECT, {"branch": None, "stack": [], "terms": []})
    why = dict(plan.packet.left_out)
    assert why[ids["lint"]].startswith(f"{ALREADY_NATIVE} (rules.md:1)")
    assert why[ids["staging"]].startswith(f"{ALREADY_NATIVE} (MEMORY.md:1)")

    (memory / "MEMORY.md").write_text("- Nothing about the database any more.\n")  # no memory changed, the file did
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    assert set(_packet(conn)[1]) == {ids["pool"], ids["staging"]}

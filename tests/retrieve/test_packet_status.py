"""Packets select by evidence: statuses from events, the confidence bar, and citations checked against a real
git checkout (a renamed script and a deleted doc stop being injected and are listed as stale for review)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from nous_assets.retrieve.cache_build import build_cache
from nous_assets.safety.review_items import review_items
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.projection import identity
from nous_assets.store.projection.memory_state import project_in_memory
from nous_assets.store.sqlite.projection import project, replay_events, verify
from nous_assets.timeutil import now_iso

PROJECT = "-home-dev-app"


def _learn(store, lid: str, content: str, status: str | None = None, *, kind: str = "gotcha", again: bool = False,
           **details) -> None:  # fmt: skip
    """A memory learned in one session (``again``: learned again in a second one)."""
    payload = {"content": content, "extractor_version": "t", "concepts": [kind, "app", lid], "edges": [],
               "scope": "project", "kind": kind, **({"status": status} if status else {}), **details}  # fmt: skip
    store.append(LearningEvent("LearningExtracted", lid, payload, "s1", PROJECT, "historical_backfill", f"k-{lid}",
                               valid_from="2026-02-10T10:00:00Z"))  # fmt: skip
    if again:
        store.append(LearningEvent("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "relearned"},
                                   "s3", PROJECT, "historical_backfill", f"again-{lid}"))  # fmt: skip


def _event(store, kind: str, lid: str, payload: dict, key: str) -> None:
    store.append(LearningEvent(kind, lid, payload, "s2", PROJECT, "historical_backfill", key,
                               valid_from="2026-02-11T10:00:00Z"))  # fmt: skip


def _packet(conn) -> tuple[str, list[int]]:
    row = conn.execute("SELECT packet_text, memory_ids_json FROM injection_cache WHERE project_id = ?",
                       (PROJECT,)).fetchone()  # fmt: skip
    return (row[0], json.loads(row[1])) if row else ("", [])


def _ids(conn) -> dict[str, int]:
    return dict(conn.execute("SELECT learning_id, id FROM memories").fetchall())


def test_only_verified_stated_and_observed_memories_are_injected(store, conn, tmp_path):
    _learn(store, "ok-check", "Run `mix ecto.migrate` with MIX_ENV=test before the LiveView tests.", "verified",
           again=True)  # fmt: skip
    _learn(store, "one-fix", "`mix test` failed with a sandbox error; fixed by sharing the sandbox.", "verified")
    _learn(store, "ok-user", "User preference: \"Never mock the database in tests; use a real SQLite file.\"",
           "stated", kind="preference")  # fmt: skip
    _learn(store, "ok-file", "config/dev.exs serves on port 1100 and imports dev.local.exs when present.", "observed",
           kind="configuration")  # fmt: skip
    _event(store, "LearningReinforced", "ok-file", {"reinforcement_delta": 0.1, "reason": "relearned"}, "r-file")
    _learn(store, "once", "config/test.exs sets the endpoint port to 4002.", "observed", kind="configuration")
    _learn(store, "legacy", "The release workflow needs the `contents: write` permission to push tags.")  # no status
    _event(store, "LearningReinforced", "legacy", {"reinforcement_delta": 0.1, "reason": "relearned"}, "r-legacy")
    _learn(store, "guess", "The LiveView test fails because the sandbox is not shared with the process.", "hypothesis")
    _learn(store, "wrong", "The background job runs a cached old version of the merge script.")
    _event(store, "LearningWeakened", "wrong", {"reinforcement_delta": -0.2, "reason": "refuted", "status": "refuted",
           "evidence": [{"status": "refuted", "what": "the user answered: it's not using an old version"}]}, "w1")
    _learn(store, "undone", "scripts/deploy.sh needs the staging token exported first.", "verified")
    _event(store, "LearningWeakened", "undone", {"reinforcement_delta": -0.2, "reason": "superseded",
           "status": "superseded"}, "w2")  # fmt: skip
    _learn(store, "old-port", "The dev server listens on port 4000.", "observed", kind="configuration")
    _learn(store, "new-port", "The dev server listens on port 1100.", "verified", kind="configuration", again=True)
    _event(store, "LearningSuperseded", "old-port", {"superseded_by": "new-port"}, "s1")
    project(conn)
    statuses = dict(conn.execute("SELECT learning_id, status FROM memories").fetchall())
    assert statuses == {"ok-check": "verified", "ok-user": "stated", "ok-file": "observed", "legacy": "observed",
                        "once": "observed", "one-fix": "verified", "guess": "hypothesis", "wrong": "refuted",
                        "undone": "superseded", "old-port": "superseded", "new-port": "verified"}  # fmt: skip
    build_cache(conn, load_settings({"HOME": str(tmp_path)}), lake_dir=tmp_path / "lake")
    text, ids = _packet(conn)
    ids_of = _ids(conn)
    assert set(ids) == {ids_of[k] for k in ("ok-check", "ok-user", "ok-file", "legacy", "new-port")}
    for absent in ("sandbox is not shared", "cached old version", "staging token", "port 4000", "port to 4002",
                   "sharing the sandbox"):
        assert absent not in text  # hypothesis, refuted, superseded (twice), one session's observation and fix
    assert "(verified, 2 sessions · 2026-02-10" in text and "(stated · 2026-02-10" in text
    assert "(observed, 2 sessions · 2026-02-10" in text  # read again in a second session: it clears the bar
    # the footer counts what still holds but is not shown (the hypothesis, the one-session observation and fix);
    # refuted and superseded ones are history
    assert text.splitlines()[-1].startswith("_3 more memories are not shown (hypotheses, stale, or below the")


def test_replay_of_the_log_gives_the_same_statuses(store, conn, tmp_path):
    _learn(store, "a", "Run the tests with `uv run pytest -q`.", "verified")
    _learn(store, "b", "The FTS5 snippet() column index -1 picks the best-matching column.", "hypothesis")
    _event(store, "LearningValidated", "b", {"status": "verified", "reason": "the same check passed"}, "v1")
    _learn(store, "c", "The merge script is cached by bash.", "hypothesis")
    _event(store, "LearningWeakened", "c", {"reinforcement_delta": -0.2, "reason": "refuted", "status": "refuted"},
           "w1")  # fmt: skip
    _event(store, "LearningReinforced", "c", {"reinforcement_delta": 0.1, "reason": "relearned",
                                              "status": "verified"}, "r1")  # fmt: skip
    _learn(store, "d", "User preference: \"Keep answers short.\"", kind="preference")
    project(conn)
    live = dict(conn.execute("SELECT learning_id, status FROM memories").fetchall())
    replayed = {m.learning_id: m.status for m in project_in_memory(replay_events(conn)).active()}
    assert live == replayed == {"a": "verified", "b": "verified", "c": "refuted", "d": "stated"}
    assert verify(conn, scratch_dir=tmp_path).ok


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=cwd, check=True,
                   capture_output=True)  # fmt: skip


def _checkout(tmp_path: Path) -> Path:
    repo = tmp_path / "app"
    (repo / "scripts").mkdir(parents=True)
    (repo / "docs").mkdir()
    (repo / "scripts" / "release.sh").write_text("#!/bin/sh\necho release\n")
    (repo / "docs" / "setup.md").write_text("# Setup\n")
    (repo / "docs" / "index.md").write_text("# Docs\n")
    (repo / "Makefile").write_text("test:\n\tpytest\n")
    _git(repo, "init", "-q")
    _git(repo, "add", ".")
    _git(repo, "commit", "-qm", "init")
    return repo


def test_a_renamed_script_and_a_deleted_doc_stop_being_injected(store, conn, tmp_path):
    repo = _checkout(tmp_path)
    with conn:
        identity.replace_aliases(conn, {("cwd", str(repo)): (PROJECT, "test"), ("folder", PROJECT): (PROJECT, "t")},
                                 now_iso())  # fmt: skip
    _learn(store, "release", "Cut a release with `scripts/release.sh` after `make test` passes.", "verified",
           again=True)  # fmt: skip
    _learn(store, "setup", "docs/setup.md explains how the local database is seeded.", "observed", kind="architecture")
    _event(store, "LearningReinforced", "setup", {"reinforcement_delta": 0.1, "reason": "relearned"}, "r-setup")
    _learn(store, "tests", "Run the tests with `make test` before pushing.", "stated")
    project(conn)
    settings = load_settings({"HOME": str(tmp_path)})
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    ids_of = _ids(conn)
    assert set(_packet(conn)[1]) == {ids_of["release"], ids_of["setup"], ids_of["tests"]}

    _git(repo, "mv", "scripts/release.sh", "scripts/ship.sh")
    _git(repo, "rm", "-q", "docs/setup.md")
    _git(repo, "commit", "-qm", "rename the release script, drop the setup doc")
    _learn(store, "ship", "Cut a release with `scripts/ship.sh` after `make test` passes.", "stated")
    project(conn)
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    text, ids = _packet(conn)
    ids_of = _ids(conn)
    assert set(ids) == {ids_of["tests"], ids_of["ship"]}
    assert "scripts/release.sh" not in text and "docs/setup.md" not in text
    stale = review_items(conn, settings.thresholds, now_iso(), sections=("stale",))["stale"]
    listed = {item.memory_ids[0]: item.data["unresolved"] for item in stale}
    assert listed == {ids_of["release"]: [{"kind": "path", "value": "scripts/release.sh"}],
                      ids_of["setup"]: [{"kind": "path", "value": "docs/setup.md"}]}  # fmt: skip

    (repo / "docs" / "setup.md").write_text("# Setup, again\n")  # the doc comes back: injected again
    build_cache(conn, settings, lake_dir=tmp_path / "lake")
    assert ids_of["setup"] in _packet(conn)[1]

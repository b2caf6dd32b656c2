"""Source-aware SessionStart (resolver/inject.py), one test per Claude Code ``source``: the installed hook command
(``nous hooks install``'s, run through a shell in the project's directory) on a real SQLite store whose packet is
rendered by the pipeline's own ``format_packet``; and ``inject.context_for`` (what ``nous packet`` calls) gives the
same text the hook printed."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.hooks import install_hooks, installed_hooks
from nous_assets.retrieve.packet import format_packet
from nous_assets.store.db import open_db
from resolver import inject
from resolver.project import project_id_from_cwd
from tests.resolver.cache_rows import store_only_packet

MEMORIES = {
    11: {"content": "Run make check before every commit", "kind": "workflow", "type": "procedure",
         "valid_from": "2026-01-02", "source_ref": "Makefile"},
    12: {"content": "Never delete the WAL file of cortex.db by hand", "kind": "gotcha", "type": "knowledge",
         "valid_from": "2026-01-03"},
    13: {"content": "Dagster orchestrates the pipeline", "kind": "decision", "type": "knowledge",
         "valid_from": "2026-01-04"},
    14: {"content": "The user wants short answers without preamble", "kind": "preference", "type": "preference",
         "valid_from": "2026-01-05"},
    15: {"content": "NOUS_DATA_DIR moves the data directory", "kind": "configuration", "type": "knowledge",
         "valid_from": "2026-01-06"},
    16: {"content": "Migrations are numbered SQL files applied in order", "kind": "decision", "type": "knowledge",
         "valid_from": "2026-01-07"},
}  # fmt: skip
RULES = (11, 12, 14)  # workflow, gotcha, preference: what compact brings back
OTHERS = (13, 15)


class Store:
    """A data dir with cortex.db, a project directory and the installed SessionStart command."""

    def __init__(self, tmp_path: Path) -> None:
        self.data_dir = tmp_path / "data"
        self.data_dir.mkdir()
        self.db = self.data_dir / "cortex.db"
        open_db(self.db, create=True).close()
        self.project = tmp_path / "my project"
        self.project.mkdir()
        settings = tmp_path / "claude" / "settings.json"
        install_hooks(settings, sys.executable, data_dir=self.data_dir)
        ((matcher, entry),) = installed_hooks(settings)["SessionStart"]
        assert set(matcher.split("|")) == set(inject.SOURCES)  # fork included
        self.command = entry["command"]
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(("NOUS_", "XDG_"))}
        self.env["HOME"] = str(tmp_path / "home")

    def packet(self, ids: tuple[int, ...]) -> str:
        """Store the pipeline's packet of ``ids`` for the project (replacing the previous one); its text."""
        built = format_packet(list(ids), MEMORIES, budget_chars=4_000, title="Nous memory for this project", known=9)
        store_only_packet(self.db, project_id_from_cwd(str(self.project)), built.text, built.memory_ids)
        return built.text

    def payload(self, source, session_id="sess-1", **extra) -> dict:
        body = {"session_id": session_id, "transcript_path": "", "cwd": str(self.project),
                "hook_event_name": "SessionStart", "source": source}  # fmt: skip
        body.update(extra)
        return body

    def run(self, body: dict) -> str:
        """The installed command as Claude Code runs it; the additionalContext ('' when it printed nothing)."""
        # nous packet's function, before the hook logs anything; without a usable cwd both fall back to their own
        # working directory, which for the hook is the project's
        here = body if isinstance(body.get("cwd"), str) else {**body, "cwd": str(self.project)}
        expected = inject.context_for(here, self.db)
        proc = subprocess.run(self.command, shell=True, input=json.dumps(body), capture_output=True, text=True,
                              env=self.env, cwd=self.project, timeout=30)  # fmt: skip
        assert proc.returncode == 0 and proc.stderr == ""
        context = json.loads(proc.stdout)["hookSpecificOutput"]["additionalContext"] if proc.stdout.strip() else ""
        assert context == expected
        return context

    def logged(self, session_id: str) -> list[tuple[int, str]]:
        conn = sqlite3.connect(self.db)
        try:
            rows = conn.execute("SELECT memory_id, source FROM access_log WHERE session_id = ? ORDER BY id",
                                (session_id,)).fetchall()  # fmt: skip
        finally:
            conn.close()
        return [tuple(r) for r in rows]


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return Store(tmp_path)


def _bullets(text: str) -> set[str]:
    return {line for line in text.split("\n") if line.startswith("- ")}


def _line_of(memory_id: int, text: str) -> str:
    (line,) = [line for line in text.split("\n") if MEMORIES[memory_id]["content"] in line]
    return line


def test_startup_injects_the_full_packet(store: Store) -> None:
    full = store.packet(RULES + OTHERS)
    assert store.run(store.payload("startup")) == full
    assert sorted(store.logged("sess-1")) == sorted((i, "session-start:startup") for i in RULES + OTHERS)


def test_clear_injects_the_full_packet_again(store: Store) -> None:
    """/clear wiped the context: everything again, even for memories this session id already received."""
    full = store.packet(RULES + OTHERS)
    store.run(store.payload("startup"))
    assert store.run(store.payload("clear")) == full
    assert sorted(i for i, source in store.logged("sess-1") if source == "session-start:clear") == sorted(
        RULES + OTHERS
    )


def test_resume_injects_only_lines_not_yet_injected(store: Store) -> None:
    first = store.packet(RULES + OTHERS)
    assert store.run(store.payload("startup")) == first
    assert store.run(store.payload("resume")) == ""  # the resumed transcript already carries all of it
    updated = store.packet(RULES + OTHERS + (16,))  # the pipeline learned something since
    context = store.run(store.payload("resume"))
    assert _bullets(context) == {_line_of(16, updated)}
    assert context.startswith("**Nous memory for this project**") and inject.RESUME_NOTE in context
    assert "### Decisions and architecture" in context and "### Gotchas" not in context
    assert [r for r in store.logged("sess-1") if r[1] == "session-start:resume"] == [(16, "session-start:resume")]
    assert store.run(store.payload("resume")) == ""


def test_resume_of_a_session_nous_never_saw_gets_the_full_packet(store: Store) -> None:
    full = store.packet(RULES + OTHERS)
    assert store.run(store.payload("resume", session_id="from-before-nous")) == full


def test_compact_brings_back_the_rules_and_gotchas(store: Store) -> None:
    full = store.packet(RULES + OTHERS)
    store.run(store.payload("startup"))
    context = store.run(store.payload("compact"))
    assert _bullets(context) == {_line_of(i, full) for i in RULES}
    assert all(MEMORIES[i]["content"] not in context for i in OTHERS)
    assert inject.COMPACT_NOTE in context and "more memories are not shown" not in context
    assert sorted(i for i, s in store.logged("sess-1") if s == "session-start:compact") == sorted(RULES)


def test_fork_is_a_resume_of_its_parent_when_the_input_names_it(store: Store) -> None:
    store.packet(RULES + OTHERS)
    store.run(store.payload("startup", session_id="parent"))
    updated = store.packet(RULES + OTHERS + (16,))
    context = store.run(store.payload("fork", session_id="child", parent_session_id="parent"))
    assert _bullets(context) == {_line_of(16, updated)}
    assert store.logged("child") == [(16, "session-start:fork")]


def test_fork_reads_its_parent_from_the_forked_transcript(store: Store, tmp_path: Path) -> None:
    """Claude Code marks copied records with ``forkedFrom.sessionId`` (``requestSessionId`` in 2.1.330)."""
    store.packet(RULES + OTHERS)
    store.run(store.payload("startup", session_id="parent"))
    transcript = tmp_path / "child.jsonl"
    transcript.write_text(
        json.dumps({"type": "mode", "sessionId": "child"}) + "\n"
        + json.dumps({"type": "user", "sessionId": "child", "forkedFrom": {"sessionId": "parent"}}) + "\n"
    )  # fmt: skip
    assert store.run(store.payload("fork", session_id="child", transcript_path=str(transcript))) == ""


def test_fork_reads_request_session_id_as_2_1_330_writes_it(store: Store, tmp_path: Path) -> None:
    """The shape the real CLI wrote for a fork (after its hooks): copied records under the new ``sessionId`` with
    the parent's ``requestSessionId``."""
    store.packet(RULES + OTHERS)
    store.run(store.payload("startup", session_id="parent"))
    updated = store.packet(RULES + OTHERS + (16,))
    transcript = tmp_path / "child.jsonl"
    transcript.write_text(
        json.dumps({"type": "mode", "mode": "normal", "sessionId": "child"}) + "\n"
        + json.dumps({"type": "assistant", "sessionId": "child", "requestSessionId": "parent"}) + "\n"
    )  # fmt: skip
    context = store.run(store.payload("fork", session_id="child", transcript_path=str(transcript)))
    assert _bullets(context) == {_line_of(16, updated)}


def test_fork_with_a_fifo_for_transcript_does_not_block(store: Store, tmp_path: Path) -> None:
    full = store.packet(RULES + OTHERS)
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    assert store.run(store.payload("fork", session_id="child", transcript_path=str(fifo))) == full


def test_fork_without_a_known_parent_gets_the_full_packet(store: Store) -> None:
    """Claude Code 2.1.330 names no parent in the fork's input and writes the fork's transcript only after its
    SessionStart hooks (checked with the real CLI), so a fork gets everything."""
    full = store.packet(RULES + OTHERS)
    store.run(store.payload("startup", session_id="parent"))
    missing = str(Path(store.data_dir) / "not-yet-written.jsonl")
    assert store.run(store.payload("fork", session_id="child", transcript_path=missing)) == full


@pytest.mark.parametrize(
    "changes",
    [
        {"source": "teleport"},  # a source from a newer Claude Code: startup
        {"source": 7},
        {"source": None},
        {"session_id": ["not", "a", "string"]},
        {"cwd": 42},  # not a string: the hook's own directory (the project, as Claude Code runs it)
        {"source": "fork", "transcript_path": {"x": 1}, "parent_session_id": 3, "forkedFrom": "p", "model": {}},
        {"brand_new_field": {"nested": [1, 2]}, "agent_type": None, "session_title": 5},
    ],
    ids=["unknown-source", "source-int", "source-null", "session-list", "cwd-int", "wrong-types", "new-fields"],
)
def test_input_is_read_defensively(store: Store, changes: dict) -> None:
    full = store.packet(RULES + OTHERS)
    body = store.payload("startup")
    body.update(changes)
    assert store.run(body) == full

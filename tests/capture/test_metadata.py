"""Metadata redaction (issue 20, point 5): the stored form of paths, branches and ids, the hook's agreement with
it, and the rescan of columns that are part of a unique key.

The pipeline test (tests/pipeline/test_metadata_secrets.py) runs a real transcript through every store; these
pin the rules that make it work: the standard-library subset the SessionStart hook applies
(:func:`resolver.project.redact_name`) gives the stored form whenever the name's secrets are of its kinds, ids
are derived the same way from a cwd and from Claude Code's folder, ordinary names are left alone.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest

from nous_assets.capture.metadata import redact_meta, redact_turn_metadata, stored_path
from nous_assets.capture.parser import ToolResult, ToolUse, Turn
from nous_assets.cli import main
from nous_assets.store.db import open_db
from nous_assets.store.ingest import cursors
from nous_assets.store.projection import identity
from resolver.project import lookup, project_id_from_cwd, project_id_from_folder, redact_name

_RNG = random.Random(520)
ALNUM = string.ascii_letters + string.digits
REPO = Path(__file__).resolve().parents[2]


def _rand(n: int, alphabet: str = ALNUM) -> str:
    return "".join(_RNG.choice(alphabet) for _ in range(n))


# Assembled at run time, one per kind the hook knows: (kind, token).
TOKENS = [
    ("aws_access_key", "AKIA" + _rand(16, string.ascii_uppercase + string.digits)),
    ("github_token", "ghp_" + _rand(36)),
    ("github_token", "github_pat_" + _rand(22) + "_" + _rand(59)),
    ("anthropic_api_key", "sk-ant-api03-" + _rand(40)),
    ("openai_api_key", "sk-proj-" + _rand(40)),
    ("gitlab_token", "glpat-" + _rand(20)),
    ("slack_token", "xoxb-" + _rand(11, string.digits) + "-" + _rand(24)),
    ("google_api_key", "AIza" + _rand(35)),
    ("npm_token", "npm_" + _rand(36)),
]
# Tokens without "-" or "_" after their prefix: Claude Code's folder name keeps where they end.
FIXED = [(k, t) for k, t in TOKENS if k in ("aws_access_key", "google_api_key", "npm_token") or t.startswith("ghp_")]


def _encode(path: str) -> str:
    return re.sub(r"[^A-Za-z0-9]", "-", path)


@pytest.mark.parametrize(("kind", "token"), TOKENS, ids=[t[:6] for _, t in TOKENS])
@pytest.mark.parametrize("shape", ["/home/dev/{t}/app", "/srv/{t}", "feature/{t}", "/home/x/{t}.d/y"])
def test_the_hook_computes_the_stored_form_of_a_name_with_a_token(kind: str, token: str, shape: str) -> None:
    name = shape.format(t=token)
    stored = redact_meta(name, path=name.startswith("/"))
    assert token not in stored and f"[REDACTED:{kind}]" in stored
    assert redact_name(name) == stored  # what the hook looks up is what the pipeline stored
    if name.startswith("/"):
        assert project_id_from_cwd(name) == project_id_from_cwd(stored)  # the id of the raw and the stored path
        assert token.replace("_", "-") not in project_id_from_cwd(name)


@pytest.mark.parametrize(("kind", "token"), TOKENS, ids=[t[:6] for _, t in TOKENS])
@pytest.mark.parametrize("shape", ["/home/dev/proj_{t}", "/home/dev/{t}-old/app", "fix/{t}-retry", "wip_{t}_2"])
def test_a_token_glued_to_other_words_is_redacted_on_both_sides(kind: str, token: str, shape: str) -> None:
    """A token glued to other words by ``_`` or ``-``: the full redactor may take the whole run of token
    characters (its entropy and prefix tests) where the hook only knows the token's shape. Neither form holds
    the token; where they differ, the hook finds no alias and falls back to the global packet (the limit
    :mod:`resolver.project` documents)."""
    name = shape.format(t=token)
    stored, looked_up = redact_meta(name, path=name.startswith("/")), redact_name(name)
    assert token not in stored and token not in looked_up
    assert token.replace("_", "-") not in project_id_from_cwd(name) + project_id_from_cwd(stored)


@pytest.mark.parametrize(("kind", "token"), FIXED, ids=[t[:6] for _, t in FIXED])
def test_a_folder_named_after_a_cwd_gives_that_cwds_project_id(kind: str, token: str) -> None:
    cwd = f"/home/dev/{token}/app"
    folder = _encode(cwd)
    assert (
        project_id_from_folder(folder)
        == project_id_from_cwd(cwd)
        == "-home-dev--REDACTED-" + kind.replace("_", "-") + "--app"
    )
    assert project_id_from_folder(project_id_from_folder(folder)) == project_id_from_folder(folder)  # stable


@pytest.mark.parametrize(
    "name",
    [
        "/home/dev/app",
        "/Users/a/Documents/GitHub/projects/example-project/.worktrees/streaming",
        "/private/var/folders/xy/_7t8r5qn3zl6k7vj0w9kcx3m0000gn/T/tmpq1w2e3r4",
        "/home/u/src/Zx9Qp2Lm8Kv4Rt6Yw1Bn3Cd5",
        "/home/u/sk-learn-notes",
        "/home/u/AKIAIOSFODNN7EXAMPLE",  # a placeholder
        "/home/u/ghp_" + "x" * 36,
    ],
)
def test_ordinary_names_and_placeholders_keep_their_ids(name: str) -> None:
    assert redact_name(name) == name
    assert project_id_from_cwd(name) == _encode(name.rstrip("/"))
    assert project_id_from_folder(_encode(name)) == _encode(name)


def test_a_stored_transcript_path_keeps_its_file_name() -> None:
    """Each name of a path is redacted on its own: the marker in the folder name is no "secret word" that makes
    the session's uuid after it look like a secret (every session of the folder would share one cursor)."""
    aws = TOKENS[0][1]
    session = "67a8478e-78dc-44ab-82ea-f65c8ead85f6"
    path = f"/home/dev/.claude/projects/-home-dev-{aws}-app/{session}.jsonl"
    assert stored_path(path) == f"/home/dev/.claude/projects/-home-dev-[REDACTED:aws_access_key]-app/{session}.jsonl"
    assert stored_path(Path(path)) == stored_path(stored_path(path))


def test_ids_keep_their_value_and_metadata_is_counted_per_field() -> None:
    aws, github = TOKENS[0][1], TOKENS[1][1]
    turn = Turn(
        "963d09c0-9aa2-4d33-a97f-63ea51e9cb3b", ("963d09c0-9aa2-4d33-a97f-63ea51e9cb3b",), None,
        "67a8478e-78dc-44ab-82ea-f65c8ead85f6", _encode(f"/home/dev/{aws}/app"), "assistant", "message",
        "2026-03-01T10:00:00.000000Z", "text", "", (ToolUse("toolu_01SiAqicmEKLtY3Qe6a1naV1", "Bash", "{}"),),
        (ToolResult("toolu_01SiAqicmEKLtY3Qe6a1naV1", "out", False, False, "a1b2c3d"),),
        "msg_01SiAqicmEKLtY3Qe6a1naV1", "req_011CVRz7nHiwKk7sXqL9bJtm", "claude-opus-4-6", False, None, False, False,
        f"/home/dev/{aws}/app", f"feature/{github}", "2.1.39", f"/p/-home-dev-{aws}-app/s.jsonl", 0, 10, (0,),
    )  # fmt: skip
    new, fields = redact_turn_metadata(turn)
    assert fields == {
        "cwd": {"aws_access_key": 1},
        "git_branch": {"github_token": 1},
        "source_path": {"aws_access_key": 1},
        "project_id": {"aws_access_key": 1},
    }
    assert (new.uuid, new.session_id, new.message_id, new.request_id, new.model, new.version) == (
        turn.uuid, turn.session_id, turn.message_id, turn.request_id, turn.model, turn.version,
    )  # fmt: skip
    assert new.tool_uses == turn.tool_uses and new.tool_results == turn.tool_results
    assert new.project_id == project_id_from_cwd(f"/home/dev/{aws}/app")
    assert redact_turn_metadata(new) == (new, {})


def test_the_hook_finds_the_alias_stored_for_a_cwd_with_a_token(tmp_path: Path) -> None:
    aws = TOKENS[0][1]
    cwd = f"/home/dev/{aws}/app"
    conn = open_db(tmp_path / "cortex.db", create=True)
    try:
        with conn:
            identity.replace_aliases(
                conn, {("cwd", redact_meta(cwd, path=True)): (project_id_from_cwd(cwd), "branch")},
                "2026-01-01T00:00:00Z",
            )  # fmt: skip
        assert lookup(conn, cwd, None) == project_id_from_cwd(cwd)
        assert lookup(conn, cwd + "/src", None) == project_id_from_cwd(cwd)  # a subdirectory: its recorded parent
    finally:
        conn.close()


def test_pre_compact_writes_the_transcript_path_redacted(tmp_path: Path) -> None:
    aws = TOKENS[0][1]
    payload = {"session_id": "s1", "trigger": "auto", "transcript_path": f"/p/-home-dev-{aws}-app/s1.jsonl"}
    env = {**os.environ, "NOUS_DATA_DIR": str(tmp_path)}
    subprocess.run([sys.executable, "-m", "resolver", "pre-compact"], input=json.dumps(payload), text=True, env=env,
                   cwd=REPO, check=True, timeout=30)  # fmt: skip
    written = (tmp_path / "precompact.jsonl").read_text()
    assert aws not in written and "/p/-home-dev-[REDACTED:aws_access_key]-app/s1.jsonl" in written


def test_rescan_keeps_the_cursor_written_since_the_upgrade(nous_env: dict[str, str], capsys) -> None:
    """A raw-keyed cursor (before the upgrade) and the redacted one a later scan wrote: the rescan cannot give
    the old row the new key (unique), so it drops it and keeps the newer row; run twice, it finds nothing."""
    assert main(["init"]) == 0
    aws = TOKENS[0][1]
    raw = f"/p/-home-dev-{aws}-app/s1.jsonl"
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    try:
        with conn:
            cursors.set_cursor(conn, raw, "1:2", 100, "2026-01-01T00:00:00.000000Z")
            cursors.set_cursor(conn, stored_path(raw), "1:2", 250, "2026-01-02T00:00:00.000000Z")
            cursors.set_cursor(conn, raw.replace("s1", "s2"), "1:3", 70, "2026-01-01T00:00:00.000000Z")
    finally:
        conn.close()
    capsys.readouterr()
    assert main(["redact", "--rescan"]) == 0
    assert re.search(r"ingest_cursors\.transcript_path\s+2 rewritten", capsys.readouterr().out)
    conn = open_db(Path(nous_env["NOUS_DATA_DIR"]) / "cortex.db")
    try:
        rows = conn.execute("SELECT transcript_path, last_offset FROM ingest_cursors ORDER BY 1").fetchall()
    finally:
        conn.close()
    assert [tuple(r) for r in rows] == [(stored_path(raw), 250), (stored_path(raw.replace("s1", "s2")), 70)]
    assert main(["redact", "--rescan"]) == 0
    assert "removed 0 secret(s)" in capsys.readouterr().out

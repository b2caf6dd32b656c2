"""Worktrees joined by what git printed in a session: ``git worktree list`` output joins the listed worktrees
with the main checkout, and the layout those worktrees share joins other gone worktrees of the same repository,
on the real flutter-docker-image transcripts (four sessions, four worktrees, one repository) and hand-made
cases, through the real store and lake. Paths used here do not exist on this machine: only transcripts speak."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections import defaultdict
from itertools import permutations
from pathlib import Path

import pytest

from nous_assets.capture.lake import read_turns, write_partition
from nous_assets.capture.parser import parse_file
from nous_assets.identity.evidence import from_turns, worktree_listing
from nous_assets.identity.resolve import learn_layouts
from nous_assets.identity.update import BOOTSTRAPPED, EVIDENCE_VERSION, observe, refresh
from nous_assets.store.db import open_db
from nous_assets.store.projection.identity import project_map, read_aliases
from nous_assets.store.sqlite.projection import set_checkpoint
from nous_assets.turns import ToolResult, ToolUse, Turn
from resolver.project import project_id_from_cwd

DATA = Path(__file__).resolve().parents[2].parent / "shared" / "data"
FLUTTER = DATA / "transcripts-dev3" / "flutter-docker-image"
FLUTTER_MAIN = "/home/eligio/Code/flutter-docker-image"
FLUTTER_WORKTREES = {
    name: f"/home/eligio/Code/worktrees/flutter-docker-image/{name}/flutter-docker-image"
    for name in ("kind-canyon", "brisk-beam", "sandy-hill", "warm-orbit")
}
HOME = "/home/nous-identity-test"  # a home that does not exist here: every path below is gone


@pytest.fixture(autouse=True)
def _paths_are_gone():
    for path in (HOME, FLUTTER_MAIN, *FLUTTER_WORKTREES.values()):
        if os.path.exists(path):
            pytest.skip(f"{path} exists on this machine: its .git files would decide, not the transcripts")


# ##### the real flutter-docker-image transcripts


def _flutter_files() -> dict[str, Path]:
    if not FLUTTER.is_dir():
        pytest.skip(f"{FLUTTER} is not present (the shared data directory)")
    files = {}
    for name, cwd in FLUTTER_WORKTREES.items():
        found = sorted((FLUTTER / project_id_from_cwd(cwd)).glob("*.jsonl"))
        assert len(found) == 1, (name, found)
        files[name] = found[0]
    return files


def _laid_out(lake: Path, path: Path) -> list[str]:
    """The file's turns written to the lake by day, as capture does; returns its days."""
    turns = parse_file(path, path.parent.name, final=True).turns
    by_day = defaultdict(list)
    for turn in turns:
        by_day[turn.timestamp[:10]].append(turn)
    for day, day_turns in by_day.items():
        write_partition(lake, day, day_turns, ())
    return sorted(by_day)


def _cwd_aliases(conn) -> dict[str, tuple[str, str]]:
    return {alias: value for (kind, alias), value in read_aliases(conn).items() if kind == "cwd"}


def test_the_four_flutter_worktrees_are_one_project_whatever_the_ingestion_order(tmp_path, new_db):
    """Each session's days are observed (and identity refreshed) session after session, in every order: the
    listing in warm-orbit joins it, the layout it shows joins the other three, before or after they arrive."""
    files = _flutter_files()
    project = project_id_from_cwd(FLUTTER_MAIN)
    sessions = {name: path.stem for name, path in files.items()}
    finals = set()
    for i, order in enumerate(permutations(files)):
        lake = tmp_path / f"lake-{i}"
        conn = new_db(tmp_path / f"order-{i}.db")
        try:
            seen: list[str] = []
            for name in order:
                for day in _laid_out(lake, files[name]):
                    observe(conn, [t for t in read_turns(lake, day) if t.session_id == sessions[name]])
                refresh(conn)
                seen.append(name)
                cwds = _cwd_aliases(conn)
                if "warm-orbit" in seen:  # from then on every worktree seen so far is the repository's
                    assert {cwds[FLUTTER_WORKTREES[n]][0] for n in seen} == {project}, (order, seen)
            cwds = _cwd_aliases(conn)
            pmap = project_map(conn)
            assert {pmap.of(project_id_from_cwd(FLUTTER_WORKTREES[n]), sessions[n]) for n in files} == {project}
            assert {pmap.of(project_id_from_cwd(FLUTTER_WORKTREES[n])) for n in files} == {project}
            finals.add(json.dumps(sorted(cwds.items())))
        finally:
            conn.close()
    assert len(finals) == 1  # the same aliases whatever the order
    cwds = dict(json.loads(finals.pop()))
    assert cwds[FLUTTER_WORKTREES["warm-orbit"]] == [project, "worktree-add"]  # listed by `git worktree list`
    for name in ("kind-canyon", "brisk-beam", "sandy-hill"):  # gone before the listing ran: its layout
        assert cwds[FLUTTER_WORKTREES[name]] == [project, "worktree-layout"], name
    assert cwds[FLUTTER_MAIN] == [project, "main-checkout"]
    assert {p for p, _ in cwds.values()} == {project}


def test_a_database_that_ran_the_older_evidence_reader_reads_the_lake_again_once(tmp_path):
    """An upgrade: the listing was in lake days observed before listings were read; refresh re-reads them once."""
    files = _flutter_files()
    lake = tmp_path / "lake"
    for path in files.values():
        _laid_out(lake, path)
    conn = open_db(tmp_path / "cortex.db", create=True)
    try:
        set_checkpoint(conn, 1, BOOTSTRAPPED)  # bootstrapped by evidence version 1, nothing recorded since
        stats = refresh(conn, lake_dir=lake)
        assert stats.bootstrapped_days >= 3
        assert {p for p, _ in _cwd_aliases(conn).values()} == {project_id_from_cwd(FLUTTER_MAIN)}
        assert refresh(conn, lake_dir=lake).bootstrapped_days == 0  # once
        assert (
            conn.execute(
                "SELECT last_event_id FROM projection_checkpoints WHERE projector_name = ?", (BOOTSTRAPPED,)
            ).fetchone()[0]
            == EVIDENCE_VERSION
        )
    finally:
        conn.close()


# ##### hand-made transcripts


def _git(cwd: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True, text=True,
    ).stdout  # fmt: skip


def _turns(session: str, cwd: str, when: str, command: str | None = None, output: str | None = None, *,
           is_error: bool = False, interrupted: bool = False) -> list[Turn]:  # fmt: skip
    """A session turn in ``cwd``; with a command, the assistant's Bash call and the user record of its result."""
    folder = project_id_from_cwd(cwd)

    def turn(uid: str, role: str, kind: str, uses=(), results=()) -> Turn:
        return Turn(uid, (uid,), None, session, folder, role, kind, when, "", "",  # type: ignore[arg-type]
                    tuple(uses), tuple(results), None, None, None, False, None, False, False, cwd, "main", "2.1.0",
                    "t.jsonl", 0, 1, (0,))  # fmt: skip

    out = [turn(f"{session}-u", "user", "message")]
    if command is not None:
        tool = f"toolu_{session}"
        out.append(
            turn(f"{session}-a", "assistant", "message", [ToolUse(tool, "Bash", json.dumps({"command": command}))])
        )
        result = ToolResult(tool, output or "", is_error, interrupted)
        out.append(turn(f"{session}-r", "user", "tool_result", results=[result]))
    return out


def _resolved(conn, *sessions: list[Turn]) -> dict[str, str]:
    for turns in sessions:
        observe(conn, turns)
        refresh(conn)
    return {alias: project for alias, (project, _) in _cwd_aliases(conn).items()}


LISTING = """=== worktrees ===
~/src/shop                         189b49d [main]
~/wt/shop/calm-fox/shop            f006815 (detached HEAD)
~/wt/shop/bold-elk/shop            05b2919 [feat/x] locked
=== status ==="""


OTHER_LISTING = """~/src/other                        289b49d [main]
~/wt/other/red-fox/other           e006815 [fix]"""


def test_a_listing_joins_its_worktrees_with_the_main_checkout(conn):
    here = f"{HOME}/wt/shop/calm-fox/shop"
    fox = _turns("s1", here, "2026-01-01T00:00:00Z", "git status; git worktree list; echo '=== status ==='", LISTING)
    elk = _turns("s2", f"{HOME}/wt/shop/bold-elk/shop/api", "2026-01-02T00:00:00Z")
    aliases = _resolved(conn, elk, fox)
    shop = project_id_from_cwd(f"{HOME}/src/shop")
    assert aliases[here] == aliases[f"{HOME}/wt/shop/bold-elk/shop/api"] == aliases[f"{HOME}/src/shop"] == shop


def test_porcelain_output_and_a_bare_main_repository():
    porcelain = (
        "worktree /srv/git/app.git\nbare\n\nworktree /w/app-a\nHEAD 3f1c2d4e5b6a7980\nbranch refs/heads/a\n\n"
        "worktree /w/app-b\nHEAD 1a2b3c4d5e6f7081\ndetached\nprunable gitdir file points to non-existent location\n"
    )
    assert worktree_listing(porcelain, "/w/app-a/src") == ("/srv/git/app", ["/w/app-a", "/w/app-b"])
    assert worktree_listing(porcelain.replace("\n", "\0"), "/w/app-b") == ("/srv/git/app", ["/w/app-a", "/w/app-b"])
    human = (
        "/srv/git/app.git  (bare)\n/w/app a  3f1c2d4 [a]\n\tlocked: on a usb disk\n/w/app-b  1a2b3c4 (detached HEAD)\n"
    )
    assert worktree_listing(human, "/w/app a") == ("/srv/git/app", ["/w/app a", "/w/app-b"])


@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_what_git_itself_prints_is_read_and_joins_worktrees_that_are_gone(conn, tmp_path):
    main = tmp_path / "code" / "ledger"
    main.mkdir(parents=True)
    _git(main, "init")
    _git(main, "commit", "--allow-empty", "-m", "init")
    worktrees = [tmp_path / "code" / "wt" / "ledger" / name / "ledger" for name in ("fees", "refunds")]
    for wt in worktrees:
        _git(main, "worktree", "add", "--detach", str(wt))
    _git(main, "worktree", "lock", "--reason", "on a usb disk", str(worktrees[1]))
    outputs = [
        _git(worktrees[0], "worktree", "list", *flags)
        for flags in ((), ("-v",), ("--porcelain",), ("--porcelain", "-z"))
    ]
    expected = (str(main), sorted(map(str, worktrees)))
    assert [worktree_listing(out, str(worktrees[0])) for out in outputs] == [expected] * 4
    shutil.rmtree(tmp_path / "code")  # gone, like another machine's: only the transcript says where they belong
    later = tmp_path / "code" / "wt" / "ledger" / "disputes" / "ledger"  # never listed: the layout
    aliases = _resolved(
        conn,
        _turns("s1", str(worktrees[0]), "2026-01-01T00:00:00Z", "git worktree list --porcelain", outputs[2]),
        _turns("s2", str(worktrees[1] / "src"), "2026-01-02T00:00:00Z"),
        _turns("s3", str(later), "2026-01-03T00:00:00Z"),
    )
    project = project_id_from_cwd(str(main))
    assert {aliases[str(p)] for p in (worktrees[0], worktrees[1] / "src", later, main)} == {project}


def test_a_cwd_fitting_the_layout_a_listing_showed_joins_in_either_order(conn, tmp_path):
    """``sandy`` ran before the listing and was gone when it ran: the layout of the listed worktrees joins it."""
    listing = _turns("s1", f"{HOME}/wt/shop/calm-fox/shop", "2026-01-03T00:00:00Z", "git worktree list", LISTING)
    sandy = _turns("s2", f"{HOME}/wt/shop/sandy-hill/shop", "2026-01-01T00:00:00Z")
    sandy_sub = _turns("s3", f"{HOME}/wt/shop/kind-canyon/shop/docs", "2026-01-02T00:00:00Z")
    shop = project_id_from_cwd(f"{HOME}/src/shop")
    first = _resolved(conn, sandy, sandy_sub)
    assert first[f"{HOME}/wt/shop/sandy-hill/shop"] == project_id_from_cwd(f"{HOME}/wt/shop/sandy-hill/shop")
    after = _resolved(conn, listing)
    assert after[f"{HOME}/wt/shop/sandy-hill/shop"] == after[f"{HOME}/wt/shop/kind-canyon/shop/docs"] == shop
    other = open_db(tmp_path / "other-order.db", create=True)
    try:
        assert _resolved(other, listing, sandy_sub, sandy) == after
    finally:
        other.close()


def test_repositories_with_similar_layouts_are_not_joined(conn):
    """Only repository ``a``'s listing was seen: ``~/wt/b/y/b`` fits the same shape but not ``a``'s prefix; a
    layout of a shared folder (``~/pool/<name>``) names no repository and is not learned at all."""
    a_listing = "~/src/a  189b49d [main]\n~/wt/a/x/a  f006815 [x]\n~/wt/a/z/a  05b2919 [z]\n"
    pool_listing = "~/src/c  189b49d [main]\n~/pool/c-one  f006815 [one]\n~/pool/c-two  05b2919 [two]\n"
    aliases = _resolved(
        conn,
        _turns("s1", f"{HOME}/wt/a/x/a", "2026-01-01T00:00:00Z", "git worktree list", a_listing),
        _turns("s2", f"{HOME}/wt/b/y/b", "2026-01-02T00:00:00Z"),
        _turns("s3", f"{HOME}/wt/a/w/a", "2026-01-03T00:00:00Z"),
        _turns("s4", f"{HOME}/pool/c-one", "2026-01-04T00:00:00Z", "git worktree list", pool_listing),
        _turns("s5", f"{HOME}/pool/d-one", "2026-01-05T00:00:00Z"),
    )
    a, c = project_id_from_cwd(f"{HOME}/src/a"), project_id_from_cwd(f"{HOME}/src/c")
    assert aliases[f"{HOME}/wt/a/w/a"] == a  # a's layout
    assert aliases[f"{HOME}/wt/b/y/b"] == project_id_from_cwd(f"{HOME}/wt/b/y/b")  # not a's
    assert aliases[f"{HOME}/pool/c-one"] == c  # listed
    assert aliases[f"{HOME}/pool/d-one"] == project_id_from_cwd(f"{HOME}/pool/d-one")  # the pool is no layout
    assert (
        learn_layouts({(f"{HOME}/src/c", f"{HOME}/pool/c-one"): "", (f"{HOME}/src/c", f"{HOME}/pool/c-two"): ""}) == []
    )


def test_a_directory_fitting_the_layouts_of_two_repositories_joins_neither(conn):
    one = "/x/app  189b49d [main]\n/srv/app-wt/a  f006815 [a]\n/srv/app-wt/b  05b2919 [b]\n"
    two = "/y/app  289b49d [main]\n/srv/app-wt/c  e006815 [c]\n/srv/app-wt/d  e5b2919 [d]\n"
    aliases = _resolved(
        conn,
        _turns("s1", "/srv/app-wt/a", "2026-01-01T00:00:00Z", "git worktree list", one),
        _turns("s2", "/srv/app-wt/c", "2026-01-02T00:00:00Z", "git worktree list", two),
        _turns("s3", "/srv/app-wt/e", "2026-01-03T00:00:00Z"),
    )
    assert aliases["/srv/app-wt/a"] == project_id_from_cwd("/x/app")
    assert aliases["/srv/app-wt/c"] == project_id_from_cwd("/y/app")
    assert aliases["/srv/app-wt/e"] == project_id_from_cwd("/srv/app-wt/e")


@pytest.mark.parametrize(
    ("command", "output", "is_error", "interrupted"),
    [
        ("git worktree list", LISTING, True, False),  # the command failed
        ("git worktree list", LISTING, False, True),  # interrupted
        ("git worktree list; git -C ../other worktree list", LISTING, False, False),  # two listings: whose lines?
        ("echo 'git worktree list'", LISTING, False, False),  # quoted, not run
        ("cat notes.md", LISTING, False, False),  # a listing someone saved is not this command's output
        ("git worktree list", f"{LISTING}\n{OTHER_LISTING}", False, False),  # two listings: whose is whose?
        ("cd /srv/other && git worktree list", LISTING.replace("~", HOME), False, False),  # ran elsewhere
        ("cd /srv/other && git worktree list", LISTING, False, False),  # ~ unknown: no home to expand it
    ],
)
def test_a_listing_that_is_not_plainly_this_commands_output_is_ignored(conn, command, output, is_error, interrupted):
    here = f"{HOME}/wt/shop/calm-fox/shop"
    turns = _turns("s1", here, "2026-01-01T00:00:00Z", command, output, is_error=is_error, interrupted=interrupted)
    assert from_turns(turns).worktree_adds == {}
    aliases = _resolved(conn, turns, _turns("s2", f"{HOME}/wt/shop/bold-elk/shop", "2026-01-02T00:00:00Z"))
    assert aliases[here] == project_id_from_cwd(here)
    assert aliases[f"{HOME}/wt/shop/bold-elk/shop"] == project_id_from_cwd(f"{HOME}/wt/shop/bold-elk/shop")
    assert project_id_from_cwd(f"{HOME}/src/shop") not in aliases.values()


def test_the_worktree_managers_layout_names_the_main_checkout_without_a_listing(conn):
    """``<dir>/worktrees/<repo>/<name>/<repo>``: ``<dir>/<repo>``, even when ``<dir>`` is a directory sessions
    named (which would otherwise make ``<dir>`` the checkout the worktrees belong to)."""
    aliases = _resolved(
        conn,
        _turns("s1", f"{HOME}/Code/worktrees/tool/red-fox/tool", "2026-01-01T00:00:00Z", f"cd {HOME}/Code"),
        _turns("s2", f"{HOME}/Code/worktrees/tool/blue-jay/tool/src", "2026-01-02T00:00:00Z"),
        _turns("s3", f"{HOME}/Code/worktrees/lib/blue-jay/other", "2026-01-03T00:00:00Z"),
    )
    tool = project_id_from_cwd(f"{HOME}/Code/tool")
    assert (
        aliases[f"{HOME}/Code/worktrees/tool/red-fox/tool"]
        == aliases[f"{HOME}/Code/worktrees/tool/blue-jay/tool/src"]
        == tool
    )
    # the repository's name is not repeated: not that layout (the older named-checkout rule decides)
    assert aliases[f"{HOME}/Code/worktrees/lib/blue-jay/other"] != tool

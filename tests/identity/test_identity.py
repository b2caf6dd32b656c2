"""Project identity: real git repositories, worktrees and subdirectories; transcript evidence; the resolver's
lookup; and that no process is ever spawned to decide identity."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from types import SimpleNamespace

import pytest

from nous_assets.identity.evidence import Evidence, from_turns
from nous_assets.identity.resolve import GitFacts, probe_disk, resolve
from nous_assets.identity.update import observe, refresh
from nous_assets.store.db import open_db
from nous_assets.store.projection.identity import project_map
from resolver import cache_read as cache
from resolver.fingerprint import build_fingerprint
from resolver.project import (
    ancestors,
    lookup,
    normalize_remote,
    project_id_from_cwd,
    read_repository,
    worktree_main,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", "-c", "init.defaultBranch=main", *args],
        cwd=cwd, check=True, capture_output=True,
    )  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> dict[str, Path]:
    """A main checkout with a remote, a sibling ``<repo>-worktrees/<name>`` worktree, a worktree at an
    arbitrary path, a subdirectory, and a second clone of the same remote."""
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    main = tmp_path / "code" / "shop"
    (main / "src" / "billing").mkdir(parents=True)
    (main / "src" / "billing" / "pay.py").write_text("x = 1\n")
    _git(main, "init")
    _git(main, "remote", "add", "origin", "git@github.com:Acme/Shop.git")
    _git(main, "add", ".")
    _git(main, "commit", "-m", "init")
    sibling = tmp_path / "code" / "shop-worktrees" / "feat-a"
    _git(main, "worktree", "add", "-b", "feat-a", str(sibling))
    elsewhere = tmp_path / "scratch" / "hotfix"
    _git(main, "worktree", "add", "-b", "hotfix", str(elsewhere))
    clone = tmp_path / "other" / "shop-review"
    clone.parent.mkdir(parents=True)
    subprocess.run(["git", "clone", "-q", str(main), str(clone)], check=True, capture_output=True)
    _git(clone, "remote", "set-url", "origin", "https://github.com/acme/shop")
    return {"main": main, "sibling": sibling, "elsewhere": elsewhere, "sub": main / "src" / "billing",
            "wt_sub": sibling / "src" / "billing", "clone": clone}  # fmt: skip


@pytest.fixture
def no_processes(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make every way of starting a process fail, recording each attempt."""
    attempts: list[str] = []

    def refuse(name: str):
        def fail(*args, **kwargs):
            attempts.append(name)
            raise AssertionError(f"identity must not start a process ({name})")

        return fail

    for name in ("fork", "forkpty", "posix_spawn", "posix_spawnp", "execv", "execve", "system", "popen"):
        if hasattr(os, name):
            monkeypatch.setattr(os, name, refuse(f"os.{name}"))
    monkeypatch.setattr(subprocess, "Popen", refuse("subprocess.Popen"))
    return attempts


# ##### reading .git files


@needs_git
def test_worktrees_subdirectories_and_clones_name_their_main_checkout_without_a_process(repo, no_processes):
    main = str(repo["main"])
    for place in ("main", "sibling", "elsewhere", "sub", "wt_sub"):
        found = read_repository(str(repo[place]))
        assert found is not None and found.main == main, place
        assert found.remote == "github.com/acme/shop"
    assert read_repository(str(repo["sibling"])).root == str(repo["sibling"])
    clone = read_repository(str(repo["clone"]))
    assert clone.main == str(repo["clone"]) and clone.remote == "github.com/acme/shop"
    assert read_repository(str(repo["main"].parent)) is None
    assert no_processes == []


def test_remote_urls_normalise_across_spellings():
    same = {
        normalize_remote(u)
        for u in (
            "git@github.com:Acme/shop.git",
            "ssh://git@GitHub.com:22/Acme/shop.git",
            "https://user@github.com/Acme/shop/",
            "https://github.com/Acme/shop.git",
        )
    }
    assert same == {"github.com/acme/shop"}
    assert normalize_remote("/srv/git/shop.git") == "/srv/git/shop"
    assert normalize_remote("file:///srv/git/shop.git") == "/srv/git/shop"
    assert normalize_remote("  ") is None


def test_worktree_layouts_name_the_main_checkout_and_never_a_home_directory():
    assert worktree_main("/home/u/projects/spotter-worktrees/spotter-gqc") == "/home/u/projects/spotter"
    assert worktree_main("/home/u/projects/spotter-worktrees/spotter-fum/assets") == "/home/u/projects/spotter"
    assert worktree_main("/w/agentv.worktrees/feat/42-embedder") == "/w/agentv"
    assert worktree_main("/Users/t/GitHub/app/.worktrees/streaming/src") == "/Users/t/GitHub/app"
    assert worktree_main("/Users/t/GitHub/app/.claude/worktrees/fix-1") == "/Users/t/GitHub/app"
    assert worktree_main("/Users/t/.worktrees/feature/tool") is None  # a home-wide worktree folder
    assert worktree_main("/home/u/projects/spotter") is None
    assert worktree_main("/home/u/projects/worktrees-guide") is None
    assert ancestors("/home/u/a/b") == ["/home/u/a/b", "/home/u/a"]


# ##### transcript evidence


def _turn(session: str, folder: str, cwd: str | None, ts: str, branch: str | None = "main", command: str | None = None,
          sidechain: bool = False):  # fmt: skip
    tools = ()
    if command is not None:
        tools = (SimpleNamespace(name="Bash", input_json=json.dumps({"command": command})),)
    return SimpleNamespace(session_id=session, project_id=folder, cwd=cwd, git_branch=branch, timestamp=ts,
                           is_sidechain=sidechain, tool_uses=tools)  # fmt: skip


def test_evidence_reads_starts_commands_and_merges_in_any_order():
    turns = [
        _turn("s1", "-r-app", "/r/app", "2026-01-02T10:00:00Z", command="cd ../app-wt && git status"),
        _turn("s1", "-r-app", "/r/app", "2026-01-01T09:00:00Z",
              command="git worktree add -b fix ../wt/fix-1 && cd /r/app/src"),  # fmt: skip
        _turn("s1", "-r-app", "/r/app/src", "2026-01-01T09:05:00Z", command="git -C /r/lib log"),
        _turn("s2", "-x", "/x/sub", "2026-01-03T00:00:00Z", sidechain=True),
        _turn("s3", "-r-app", "/r/app", "2026-01-01T00:00:00Z",
              command="echo 'git worktree add /nowhere' # quoted, not run"),  # fmt: skip
    ]
    ev = from_turns(turns)
    assert ev.sessions["s1"].start_cwd == "/r/app" and ev.sessions["s1"].started_at == "2026-01-01T09:00:00Z"
    assert ev.sessions["s2"].start_cwd == "/x/sub"  # a subagent-only session starts where its file does
    assert ev.worktree_adds == {("/r/app", "/r/wt/fix-1"): "2026-01-01T09:00:00Z"}
    assert ev.paths["/r/app"].as_cwd and not ev.paths["/r/app-wt"].as_cwd and not ev.paths["/r/lib"].as_cwd
    assert ("s1", "/r/lib") in ev.session_paths
    forward, backward = Evidence(), Evidence()
    for t in turns:
        forward.merge(from_turns([t]))
    for t in reversed(turns):
        backward.merge(from_turns([t]))
    assert forward == backward == ev


def _gone(path: str):
    return False, None


def test_transcript_evidence_joins_paths_that_no_longer_exist():
    turns = [
        _turn("a", "-p-shop", "/p/shop", "2026-01-01T00:00:00Z", command="git worktree add /tmp/x/hotfix"),
        _turn("b", "-tmp-x-hotfix", "/tmp/x/hotfix", "2026-01-02T00:00:00Z"),
        _turn("c", "-p-shop-worktrees-feat", "/p/shop-worktrees/feat/web", "2026-01-03T00:00:00Z"),
        _turn("d", "-p-shop", "/p/shop", "2026-01-04T00:00:00Z"),
        _turn("d", "-p-shop", "/p/shop/apps/api", "2026-01-04T00:01:00Z"),
        _turn("e", "-q-tools-worktrees-x", "/q/tools/worktrees/x", "2026-01-05T00:00:00Z", command="cd /q/tools"),
        _turn("f", "-home-u", "/home/u", "2026-01-06T00:00:00Z", branch=None),
        _turn("f", "-home-u", "/home/u/notes", "2026-01-06T00:01:00Z", branch=None),
        _turn("g", "-home-u-lib", "/home/u/lib", "2026-01-07T00:00:00Z", branch="dev"),
        _turn("h", "-home-u-lib", "/home/u/lib/pkg", "2026-01-07T00:00:00Z", branch="dev"),
    ]
    res = resolve(from_turns(turns), probe=_gone)
    shop = project_id_from_cwd("/p/shop")
    assert res.project("cwd", "/tmp/x/hotfix") == shop and res.aliases[("cwd", "/tmp/x/hotfix")][1] == "worktree-add"
    assert res.aliases[("cwd", "/p/shop-worktrees/feat/web")] == (shop, "worktree-path")
    assert res.aliases[("cwd", "/p/shop/apps/api")] == (shop, "subdirectory")
    assert res.aliases[("cwd", "/q/tools/worktrees/x")] == (project_id_from_cwd("/q/tools"), "named-checkout")
    assert res.project("session", "b") == res.project("session", "c") == res.project("folder", "-p-shop") == shop
    # a home directory joins nothing; a repository below it is its own project, its subdirectories join it
    assert res.project("cwd", "/home/u/lib") == project_id_from_cwd("/home/u/lib")
    assert res.project("cwd", "/home/u/lib/pkg") == project_id_from_cwd("/home/u/lib")
    assert res.project("cwd", "/home/u/notes") == project_id_from_cwd("/home/u/notes")


def test_a_repository_seen_through_two_clones_is_one_project_named_by_the_first_seen():
    remote = "github.com/acme/shop"
    facts = {"/a/shop": GitFacts("/a/shop", remote), "/b/shop2": GitFacts("/b/shop2", remote)}
    turns = [_turn("2", "-b-shop2", "/b/shop2", "2026-02-01T00:00:00Z"),
             _turn("1", "-a-shop", "/a/shop", "2026-01-01T00:00:00Z")]  # fmt: skip
    res = resolve(from_turns(turns), facts, probe=_gone)  # both gone now: the stored facts decide
    assert res.project("cwd", "/b/shop2") == res.project("remote", remote) == project_id_from_cwd("/a/shop")


# ##### the store, the projection map and the resolver


@needs_git
def test_pipeline_identity_step_and_resolver_agree_on_real_worktrees_without_a_process(repo, tmp_path, no_processes):
    db = tmp_path / "cortex.db"
    conn = open_db(db, create=True)
    folder = {k: project_id_from_cwd(str(p)) for k, p in repo.items()}
    turns = [
        _turn("s-main", folder["main"], str(repo["main"]), "2026-01-01T00:00:00Z"),
        _turn("s-wt", folder["sibling"], str(repo["sibling"]), "2026-01-02T00:00:00Z", branch="feat-a"),
        _turn("s-else", folder["elsewhere"], str(repo["elsewhere"]), "2026-01-03T00:00:00Z", branch="hotfix"),
        _turn("s-sub", folder["sub"], str(repo["sub"]), "2026-01-04T00:00:00Z"),
        _turn("s-clone", folder["clone"], str(repo["clone"]), "2026-01-05T00:00:00Z"),
    ]
    observe(conn, turns)
    stats = refresh(conn)
    project = project_id_from_cwd(str(repo["main"]))
    pmap = project_map(conn)
    sessions = {"main": "s-main", "sibling": "s-wt", "elsewhere": "s-else", "sub": "s-sub", "clone": "s-clone"}
    assert {pmap.of(folder[k], s) for k, s in sessions.items()} == {project}
    assert {pmap.of(folder[k]) for k in sessions} == {project}  # the folders too
    assert stats.projects == 1
    assert refresh(conn).aliases_changed == 0  # idempotent
    conn.close()

    ro = cache.connect_readonly(db)
    try:
        for place in ("main", "sibling", "elsewhere", "sub", "wt_sub", "clone"):
            cwd = str(repo[place])
            assert lookup(ro, cwd, read_repository(cwd)) == project, place
        new_wt = repo["main"].parent / "shop-worktrees" / "never-seen" / "src"  # gone or never seen: the layout
        assert lookup(ro, str(new_wt), None) == project
        fp = {"project_id": "x", "cwd": str(repo["wt_sub"]), "repository": read_repository(str(repo["wt_sub"]))}
        assert cache.resolve_project(ro, fp) == project and fp["project_id"] == project
    finally:
        ro.close()
    assert no_processes == []


@needs_git
def test_identity_changes_move_memories_and_a_replay_agrees(repo, tmp_path):
    """Events keep their folder; the projection maps them; when evidence joins two folders later, memories move
    and `verify` (a replay under the same aliases) still equals the live projection."""
    from nous_assets.store.log.events import LearningEvent
    from nous_assets.store.sqlite.events import SqliteEventStore
    from nous_assets.store.sqlite.projection import project, verify

    def extracted(lid: str, content: str, session: str, project: str) -> LearningEvent:
        payload = {"content": content, "extractor_version": "test-1", "concepts": ["build"], "edges": []}
        return LearningEvent("LearningExtracted", lid, payload, session, project, "historical_backfill", f"x:{lid}")

    conn = open_db(tmp_path / "cortex.db", create=True)
    gone_main, gone_wt = "/gone/shop", "/gone/shop-x"  # paths that do not exist: only transcripts speak
    store = SqliteEventStore(conn)
    store.append_many([extracted("L1", "use make check", session="s1", project=project_id_from_cwd(gone_main)),
                  extracted("L2", "the api lives in apps/api", session="s2", project=project_id_from_cwd(gone_wt))])
    observe(conn, [_turn("s1", project_id_from_cwd(gone_main), gone_main, "2026-01-01T00:00:00Z"),
                   _turn("s2", project_id_from_cwd(gone_wt), gone_wt, "2026-01-02T00:00:00Z")])  # fmt: skip
    refresh(conn)
    project(conn)
    before = dict(conn.execute("SELECT learning_id, project_id FROM memories").fetchall())
    assert before == {"L1": project_id_from_cwd(gone_main), "L2": project_id_from_cwd(gone_wt)}
    # later evidence: the main checkout created that directory as a worktree
    observe(conn, [_turn("s3", project_id_from_cwd(gone_main), gone_main, "2026-01-03T00:00:00Z",
                         command=f"git worktree add {gone_wt}")])  # fmt: skip
    stats = refresh(conn)
    after = dict(conn.execute("SELECT learning_id, project_id FROM memories").fetchall())
    assert after == {"L1": project_id_from_cwd(gone_main), "L2": project_id_from_cwd(gone_main)}
    assert stats.memories_moved == 1
    assert verify(conn).ok
    folders = {r[0] for r in conn.execute("SELECT project_id FROM learning_events")}
    assert folders == {project_id_from_cwd(gone_main), project_id_from_cwd(gone_wt)}  # events never rewritten
    conn.close()


@needs_git
def test_fingerprint_project_is_the_repository_read_from_files(repo, no_processes):
    fp = build_fingerprint(str(repo["wt_sub"]))
    assert fp["project_id"] == project_id_from_cwd(str(repo["main"]))
    assert fp["branch"] == "feat-a"
    assert no_processes == []


def test_disk_probe_of_a_missing_directory_reports_it_gone(tmp_path):
    assert probe_disk(str(tmp_path / "nope")) == (False, None)
    assert probe_disk(str(tmp_path)) == (True, None)

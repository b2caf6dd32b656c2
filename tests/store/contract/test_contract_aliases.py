"""Project aliases in the projection, on both backends: events are projected under their canonical project
(by session, else by folder, else the folder itself); replacing the aliases moves exactly the memories they
concern and marks both projects' packets stale, so the live projection equals a replay; per tenant."""

from __future__ import annotations

import json

from eventgen import extracted

from nous_assets.store.projection.memory_state import MEMORY_COLUMNS

AT = "2026-01-01T00:00:00.000000Z"
LATER = "2026-01-02T00:00:00.000000Z"


def _projects(backend) -> dict[str, str]:
    """{learning id: project} of the current memories."""
    lid, project = MEMORY_COLUMNS.index("learning_id"), MEMORY_COLUMNS.index("project_id")
    return {m[lid]: m[project] for m in backend.projection.snapshot()["memories"]}


def _fill(backend) -> None:
    backend.events.append_many([
        extracted("L1", "one", key="k1", project="folder-a", session="s1"),
        extracted("L2", "two", key="k2", project="folder-a", session="s-moved"),
        extracted("L3", "three", key="k3", project="folder-b", session="s3"),
        extracted("L4", "four", key="k4", project="folder-c", session="s4"),
    ])  # fmt: skip


def test_events_are_projected_under_their_canonical_project(backend):
    aliases = {
        ("folder", "folder-a"): ("repo-x", "cwd"),
        ("session", "s-moved"): ("repo-y", "start cwd"),
        ("cwd", "/src/x"): ("repo-x", "git main"),
    }
    assert backend.projection.replace_aliases(aliases, now=AT) == {}  # nothing projected yet: nothing moves
    assert backend.projection.aliases() == aliases
    _fill(backend)
    backend.projection.project()
    assert _projects(backend) == {"L1": "repo-x", "L2": "repo-y", "L3": "folder-b", "L4": "folder-c"}
    live = backend.projection.snapshot()
    backend.projection.rebuild()
    assert backend.projection.snapshot() == live


def test_replacing_aliases_moves_memories_like_a_replay(backend):
    backend.projection.replace_aliases({("folder", "folder-a"): ("repo-x", "cwd")}, now=AT)
    _fill(backend)
    backend.projection.project()
    ids = {m[1]: m[0] for m in backend.projection.snapshot()["memories"]}
    row = ("repo-x:fp", "repo-x", "project", "{}", "packet", json.dumps([ids["L1"]]), 6, ids["L4"], AT)
    backend.cache.put("repo-x", [row])
    backend.cache.put("folder-c", [("folder-c:fp", "folder-c", "project", "{}", "p", "[]", 1, ids["L4"], AT)])

    new = {
        ("folder", "folder-b"): ("repo-x", "cwd"),  # folder-a's alias goes, folder-b gets one
        ("session", "s-moved"): ("repo-z", "start cwd"),
    }
    moved = backend.projection.replace_aliases(new, now=LATER)
    assert moved == {
        ids["L1"]: ("repo-x", "folder-a"),
        ids["L2"]: ("repo-x", "repo-z"),
        ids["L3"]: ("folder-b", "repo-x"),
    }
    assert _projects(backend) == {"L1": "folder-a", "L2": "repo-z", "L3": "repo-x", "L4": "folder-c"}
    assert backend.projection.aliases() == new
    versions = backend.cache.built_versions()
    assert versions["repo-x"] == -1 and versions["folder-c"] == ids["L4"]  # only the moved projects go stale
    assert backend.projection.replace_aliases(new, now=LATER) == {}  # the same aliases again: nothing moves

    live = backend.projection.snapshot()
    backend.projection.rebuild()
    assert backend.projection.snapshot() == live


def test_aliases_are_per_tenant(make_backend):
    a, b = make_backend("a"), make_backend("b")
    _fill(a)
    a.projection.project()
    b.projection.replace_aliases({("folder", "folder-a"): ("elsewhere", "cwd")}, now=AT)
    assert a.projection.aliases() == {}
    assert _projects(a)["L1"] == "folder-a"
    a.projection.project()
    a.projection.rebuild()
    assert _projects(a)["L1"] == "folder-a"

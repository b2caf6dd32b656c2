"""The stack and the top-level folders, deleted and moved paths replayed (brief/layout.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.layout import mine_layout
from nous_assets.brief.manifests import read_manifests
from nous_assets.brief.timeline import build_timeline


def _layout(*batches):
    views = build_timeline(list(batches))
    items = mine_layout(views, read_manifests(views))
    return items[0] if items else None


def test_real_wakil_stack_and_folders():
    item = _layout(*real("transcripts-dev3", "wakil"))
    assert item.content.startswith("About: wakil is a local-first Python CLI agent")
    assert "Stack: Python (uv). Layout: `src/wakil/` (cli/, app/, llm/" in item.content
    assert "`tests/` (unit/, integration/" in item.content and "`docs/`" in item.content
    assert item.status == "observed" and len(item.content) <= 500


def test_real_deleted_files_never_show():
    # flutter-docker-image: brisk-beam `git rm`s three script/latest_*.sh, warm-orbit `rm`s a research note and
    # `git status` shows another one deleted; sandy-hill `git mv`s a change folder into archive/
    item = _layout(*real("transcripts-dev3", "flutter-docker-image"))
    for gone in ("latest_android", "loud-deb-pin-resolution", "renovate-pin-provenance"):
        assert gone not in item.content
    assert "`script/` (renovate_validate.sh" in item.content


def test_a_removed_folder_never_shows_and_a_moved_file_shows_under_its_new_name():
    s = Sess()
    for _ in range(2):
        s.edit("src/app/main.py")
        s.edit("old/legacy.py")
        s.read("tests/test_main.py", "def test(): pass")
        s.read("drafts/plan.md", "# plan")
    s.bash("rm -rf old", "")
    s.bash("git mv drafts/plan.md docs/plan.md", "")
    item = _layout(s.batch())
    # as used as each other: by name; each folder's one file named
    assert item.content == "Layout: `docs/plan.md`, `src/app/main.py`, `tests/test_main.py`."
    assert "old/" not in item.paths and "drafts/" not in item.paths


def test_a_path_written_again_after_its_removal_is_back_and_worktrees_count_as_the_root():
    s = Sess()
    s.write("gen/a.py")
    s.bash("rm gen/a.py", "")
    s.write("gen/a.py")
    s.write("gen/b.py")
    s.edit("/home/dev/proj/.claude/worktrees/agent-1/lib/x.py")
    s.edit("/home/dev/proj/.claude/worktrees/agent-1/lib/y.py")
    assert _layout(s.batch()).content == "Layout: `gen/` (a.py, b.py), `lib/` (x.py, y.py)."


def test_stack_from_manifests_read():
    s = Sess()
    s.read("pyproject.toml", '[project]\nrequires-python = ">=3.11"\ndependencies = ["fastapi"]\n')
    s.read("api/main.py", "app = 1")
    s.read("api/deps.py", "x = 1")
    item = _layout(s.batch())
    assert item.content == "Stack: Python >=3.11; fastapi. Layout: `api/` (deps.py, main.py)."
    assert item.evidence[0]["what"] == "read `pyproject.toml`"


def test_dated_and_long_names_are_not_listed():
    s = Sess()
    for name in ("2026-02-21-deploy-notes.md", "summary-of-the-whole-quarter-planning.md", "README.md"):
        s.read(f"notes/{name}", "x")
        s.read(f"notes/{name}", "x")
    s.edit("src/main.py")
    s.edit("src/main.py")
    assert _layout(s.batch()).content == "Layout: `notes/` (README.md, …), `src/main.py`."


def test_a_folder_whose_one_used_entry_is_a_file_is_shown_as_that_file():
    s = Sess()
    for _ in range(2):
        s.read(".claude-plugin/plugin.json", "{}")
        s.edit("src/a.py")
        s.edit("src/b.py")
    assert _layout(s.batch()).content == "Layout: `src/` (a.py, b.py), `.claude-plugin/plugin.json`."


def test_real_duet_plugin_manifest_and_script():
    item = _layout(*real("transcripts-dev3", "duet"))
    assert "`.claude-plugin/plugin.json`" in item.content and "`scripts/generate-readme.sh`" in item.content


def test_a_manifest_moved_or_removed_no_longer_speaks_for_the_stack():
    # episodic-memory's long conversation: docker/Dockerfile written with one base image, then `mv` to
    # docker/Containerfile and its image bumped; only the Containerfile's image is the stack now
    s = Sess()
    s.read("docker/Dockerfile", "FROM mcr.microsoft.com/playwright:v1.48.0-jammy\n")
    s.bash("mv docker/Dockerfile docker/Containerfile", "")
    s.read("docker/Containerfile", "FROM mcr.microsoft.com/playwright:v1.56.0-arm64\n")
    s.read("Containerfile.old", "FROM alpine:3.18\n")
    s.bash("rm Containerfile.old", "")
    s.edit("src/main.py")
    item = _layout(s.batch())
    assert "v1.56.0-arm64 (docker/Containerfile)" in item.content, item.content
    assert "1.48.0" not in item.content and "alpine" not in item.content

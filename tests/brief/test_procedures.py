"""Release, deploy and publish procedures (brief/procedures.py)."""

from __future__ import annotations

from brief_turns import WAKIL_RELEASES, Sess, real

from nous_assets.brief.procedures import mine_procedures
from nous_assets.brief.timeline import build_timeline


def _mine(*sessions: Sess) -> dict[str, object]:
    return {i.key: i for i in mine_procedures(build_timeline([s.batch() for s in sessions]))}


def test_real_wakil_release_through_a_workflow():
    # wakil e2ec427b: `gh workflow run release.yml -f bump=minor`, later `-f bump=patch`, watched, then verified
    (item,) = mine_procedures(build_timeline(real("transcripts-dev3", "wakil")))
    assert item.key == "procedure:release" and item.status == "verified"
    assert item.content.startswith("To release: `gh workflow run release.yml -f bump=<major|minor|patch>`, then ")
    assert "`gh run watch <run-id> --exit-status`" in item.content and "`gh release view v<version>`" in item.content
    assert "minor" not in item.content.replace("<major|minor|patch>", "") and "0.2" not in item.content
    assert item.sessions == (WAKIL_RELEASES,) and item.runs == 2
    assert item.paths == (".github/workflows/release.yml",)


def test_manual_release_with_numbers_generalised():
    s = Sess()
    s.edit("pyproject.toml", 'version = "1.2.2"', 'version = "1.2.3"')
    s.bash("uv run pytest -q", "40 passed")
    s.bash('git add -A && git commit -m "chore(release): v1.2.3"', "[main abc1234] chore(release): v1.2.3")
    s.bash('git tag -a v1.2.3 -m "Release 1.2.3"', "")
    s.bash("git push origin main --tags", "To github.com:o/r.git\n * [new tag] v1.2.3 -> v1.2.3")
    s.bash("uv publish", "Uploading r-1.2.3.tar.gz")
    (item,) = _mine(s).values()
    assert item.content == (
        "To release: bump the version in `pyproject.toml`, then `uv run pytest -q`, then "
        '`git commit -m "chore(release): v<version>"`, then `git tag -a v<version>`, then '
        "`git push origin main --tags`, then `uv publish`."
    )
    assert "1.2.3" not in item.content and item.paths == ("pyproject.toml",)


def test_deploy_script_in_a_sibling_repository():
    s = Sess(cwd="/home/dev/app")
    s.bash("npm run build", "built")
    s.bash("cd ../infra && ./deploy.sh --env staging", "deployed")
    (item,) = _mine(s).values()
    assert item.key == "procedure:deploy"
    assert item.content == "To deploy: `npm run build`, then `../infra/deploy.sh --env staging`."
    assert item.paths == ("../infra/deploy.sh",)


def test_a_procedure_that_never_succeeded_or_a_lone_step_is_not_one():
    failed = Sess()
    failed.bash("git tag v2.0.0", "")
    failed.bash("npm publish", "npm ERR! 403 Forbidden", fail=True)
    assert _mine(failed) == {}
    lone = Sess()
    lone.bash("git tag v2.0.0", "")
    assert _mine(lone) == {}


def test_listing_tags_and_ordinary_commits_are_not_releases():
    s = Sess()
    s.bash("git tag --sort=-creatordate | head -3", "v0.2.0\nv0.1.0")
    s.bash('git commit -m "fix: handle empty input"', "[main abc1234] fix")
    s.bash("git push", "To github.com:o/r.git")
    assert _mine(s) == {}


def test_a_commit_that_only_mentions_release_is_not_a_release():
    s = Sess()
    s.bash('git commit -m "Release notes: explain the new flag"', "[main abc1234] Release notes")
    s.bash("git push", "To github.com:o/r.git")
    assert _mine(s) == {}


def test_github_release_and_a_deploy_task():
    s = Sess()
    s.bash("git tag v3.1.0 && git push origin v3.1.0", "")
    s.bash(
        'gh release create v3.1.0 --generate-notes --title "v3.1.0" --repo o/r',
        "https://github.com/o/r/releases/tag/v3.1.0",
    )
    s.bash("make deploy ENV=prod", "deployed")
    s.bash("make deploy ENV=prod", "deployed")
    items = _mine(s)
    assert items["procedure:release"].content == (
        "To release: `git tag v<version>`, then `git push origin v<version>`, then "
        "`gh release create v<version> --generate-notes`."
    )
    assert items["procedure:deploy"].content == "To deploy: `make deploy ENV=prod`."
    assert items["procedure:deploy"].runs == 1 and len(items["procedure:deploy"].evidence) == 2  # one episode

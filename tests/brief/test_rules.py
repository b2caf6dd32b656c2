"""Repository rules learned from failures, resolutions and the user's words (brief/rules.py)."""

from __future__ import annotations

from brief_turns import Sess, real

from nous_assets.brief.rules import mine_rules
from nous_assets.brief.timeline import build_timeline


def _rules(*sessions: Sess) -> dict[str, object]:
    return {i.key: i for i in mine_rules(build_timeline([s.batch() for s in sessions]))}


def _real(set_name: str, repo: str) -> dict[str, object]:
    return {i.key: i for i in mine_rules(build_timeline(real(set_name, repo)))}


def test_real_protected_main_from_the_protection_api_and_a_refused_merge():
    # ironclaw 2d5b5c7c reads branches/main/protection; 69ab36dd: "the base branch policy prohibits the merge"
    rule = _real("transcripts-dev3", "ironclaw")["rule:protected-branch"]
    assert rule.content.startswith("`main` is protected: changes need a pull request with 1 approving review;")
    assert "`gh pr merge` is refused until its required checks and reviews pass" in rule.content
    assert rule.status == "verified" and len(rule.sessions) == 2


def test_real_branch_prefixes_and_squash_merges():
    rules = _real("transcripts-dev3", "wakil")
    assert rules["rule:branch-prefix"].content.startswith("New branches are named `<type>/<topic>` (`refactor/…`")
    assert rules["rule:pr-flow"].content == (
        "Changes land through pull requests (`gh pr create`), merged with `gh pr merge <number> --squash "
        "--delete-branch`."
    )


def test_real_refused_merges_piped_into_tee_teach_no_merge_style():
    # ironclaw: `gh pr merge 87 --squash --delete-branch … 2>&1 | tee /tmp/…` exits 0 but prints "X Pull request
    # anchapin/ironclaw#87 is not mergeable": no merge succeeded, so no "merged with …" rule
    assert "rule:pr-flow" not in _real("transcripts-dev3", "ironclaw")
    def flow(merge_output: str) -> str:
        sessions = [Sess(f"s{n}", start=f"2026-03-0{n}T10:00:00") for n in (1, 2)]
        for n, s in enumerate(sessions):
            s.bash("gh pr create --fill", f"https://github.com/o/r/pull/{n}")
            s.bash(f"gh pr merge {n} --squash --delete-branch 2>&1 | tee /tmp/m.log", merge_output.format(n=n))
        return str(getattr(_rules(*sessions).get("rule:pr-flow"), "content", ""))

    assert "merged with `gh pr merge <number> --squash" in flow("✓ Squashed and merged pull request o/r#{n}")
    assert "merged with" not in flow("X Pull request o/r#{n} is not mergeable: the base branch policy prohibits it")


def test_real_ignored_but_tracked_file():
    rule = _real("transcripts", "spotter")["rule:force-add"]
    assert rule.paths == ("priv/static/assets/spotter.css",) and len(rule.sessions) == 3
    assert rule.content == (  # what git says when it refuses, so the line is recognised when it happens again
        "`priv/static/assets/spotter.css` is git-ignored but tracked: `git add` refuses it (\"The following paths are "
        "ignored by one of your .gitignore files\"); stage with `git add -f priv/static/assets/spotter.css`."
    )


def test_real_direct_push_to_main_is_no_protection():
    # agentv acc53d32: `git push origin main` rejected (remote ahead), rebased, then pushed to main
    assert "rule:protected-branch" not in _real("transcripts-dev2", "agentv")


def test_rejected_push_to_main_becomes_a_rule_until_a_later_push_succeeds():
    s = Sess()
    s.bash(
        "git push origin main", "remote: error: GH006: Protected branch update failed for refs/heads/main.", fail=True
    )
    rule = _rules(s)["rule:protected-branch"]
    assert rule.content == "`main` is protected: direct pushes are rejected, so changes land through a pull request."
    assert rule.status == "verified"
    s.bash("git push origin main", "To github.com:o/r.git\n   abc..def  main -> main")
    assert "rule:protected-branch" not in _rules(s)


def test_signed_commits_verified_by_a_failure_or_stated_by_the_user():
    s = Sess()
    s.bash(
        'git commit -m "feat: x"', "error: gpg failed to sign the data\nfatal: failed to write commit object", fail=True
    )
    assert _rules(s)["rule:signed-commits"].status == "verified"
    t = Sess()
    t.user("Commits must be signed, so I'll do the commits myself.")
    rule = _rules(t)["rule:signed-commits"]
    assert rule.status == "stated"
    assert rule.content == (
        "Commits must be signed: the user runs `git commit` themselves: stage the changes and leave the commit to them."
    )
    u = Sess()
    u.user("I'll commit it myself")
    assert _rules(u)["rule:signed-commits"].content.startswith("Commits are the user's: ")  # not said to be signed
    v = Sess()
    v.user("let me know when the commit is done")
    assert "rule:signed-commits" not in _rules(v)


def test_branch_prefix_needs_a_shared_prefix():
    one_offs = Sess()
    one_offs.bash("git checkout -b renovate/reconfigure", "Switched to a new branch")
    one_offs.bash("git checkout -b chore/cleanup", "Switched to a new branch")
    assert "rule:branch-prefix" not in _rules(one_offs)
    one_offs.bash("git switch -c chore/docs", "Switched to a new branch")
    assert _rules(one_offs)["rule:branch-prefix"].content == (
        "New branches are named `<type>/<topic>` (`chore/…`, `renovate/…`)."
    )


def test_files_left_out_of_commits():
    a, b = Sess("a", start="2026-03-01T09:00:00"), Sess("b", start="2026-03-02T09:00:00")
    a.bash("git restore --staged .env.local", "")
    assert "rule:leave-out" not in _rules(a)  # once is a one-off
    b.bash("git reset HEAD .env.local", "Unstaged changes after reset:")
    rule = _rules(a, b)["rule:leave-out"]
    assert rule.content == "Leave `.env.local` out of commits." and rule.status == "verified"
    c = Sess()
    c.user("don't commit `notes/scratch.md`, it's mine")
    assert _rules(c)["rule:leave-out"].status == "stated"
    d = Sess()
    d.bash("git reset HEAD~1", "Unstaged changes after reset")  # undoing a commit names no file
    d.bash("git reset HEAD~1", "Unstaged changes after reset")
    assert "rule:leave-out" not in _rules(d)


def test_real_gh_needs_the_repository_named():
    # flutter-docker-image: the remote is an entire:// proxy, `gh pr …` fails until `-R owner/name` is passed;
    # wakil passes `--repo ebridges/wakil` in every session, no failure needed
    flutter = _real("transcripts-dev3", "flutter-docker-image")["rule:gh-repo"]
    assert flutter.content == ("Run `gh` with `--repo gmeligio/flutter-docker-image` (`-R`): gh cannot tell the "
                               "repository from this checkout's remote.")  # fmt: skip
    assert _real("transcripts-dev3", "wakil")["rule:gh-repo"].content == "Run `gh` with `--repo ebridges/wakil` (`-R`)."
    assert "rule:gh-repo" not in _real("transcripts-dev2", "agentv")


def test_gh_with_and_without_the_repository_named_is_no_rule():
    s = Sess()
    s.bash("gh pr view 1 --repo o/r", "title: x")
    s.bash("gh pr list", "1 open")
    s.bash("gh pr checks 1", "ok")
    assert "rule:gh-repo" not in _rules(s, Sess("s2"))

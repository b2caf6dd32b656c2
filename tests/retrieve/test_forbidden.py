"""A lesson that does what the project's own rules forbid says so: the rule is read from the store's conventions,
preferences and corrections, and the packet build (a real SQLite store) marks the lesson's line with it."""

from __future__ import annotations

import json

from nous_assets.retrieve.cache_build import build_cache
from nous_assets.retrieve.forbidden import Prohibition, breaks, broken_rule, prohibitions, rules_from
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project

PROJECT = "-home-dev-app"
NEVER_MAIN = "AGENTS.md: IMPORTANT: Never push directly to `main`. Always use branches and PRs."
PUSH_LESSON = ('`git push origin main` failed with "error: failed to push some refs"; fixed by running '
               "`git pull --rebase origin main`")  # fmt: skip


def test_a_prohibition_is_a_verb_and_what_it_acts_on_up_to_the_end_of_the_clause():
    assert prohibitions(NEVER_MAIN) == [Prohibition("push", frozenset({"main"}))]
    assert prohibitions(NEVER_MAIN)[0].said == "Never push directly to `main`."  # the rule's sentence, for the mark
    assert prohibitions("Never use `npm` here; use pnpm.") == [Prohibition("use", frozenset({"npm"}))]
    assert prohibitions("Don't force-push to shared branches unless asked") == [
        Prohibition("force-push", frozenset({"shar", "branch"}))
    ]
    # too broad to test a command with: a verb alone, or a generic verb without a quoted name
    assert prohibitions("Don't commit unless the user asks.") == []
    assert prohibitions("Do not manually run these checks before pushing — just push.") == []
    assert prohibitions("Always use branches and PRs.") == []


def test_a_command_breaks_a_prohibition_only_when_it_holds_the_verb_and_every_word_named():
    never_main, never_npm = prohibitions(NEVER_MAIN)[0], prohibitions("Never use `npm`.")[0]
    assert breaks(never_main, PUSH_LESSON)
    assert breaks(never_main, "Then `git push -f origin main` again.")
    assert not breaks(never_main, "`git push -u origin feat/main-menu` failed")  # another branch
    assert not breaks(never_main, "`git pull --rebase origin main` brings main up to date")  # no push
    assert not breaks(never_main, "Never push directly to main.")  # prose is no command
    assert breaks(never_npm, "If the install fails: run `npm install --legacy-peer-deps`.")
    assert not breaks(never_npm, "run `pnpm install`")
    rules = rules_from([(1, NEVER_MAIN), (2, "Never use `npm`.")])
    assert broken_rule(PUSH_LESSON, rules) == rules[0][1] and broken_rule("run `npm ci`", rules) == rules[1][1]
    assert broken_rule(NEVER_MAIN + " (`git push origin main` is rejected)", rules, own_id=1) is None


def _learn(store, lid: str, content: str, status: str, kind: str, session: str) -> None:
    payload = {"content": content, "extractor_version": "t", "concepts": [kind, "git", "push", lid], "edges": [],
               "scope": "project", "kind": kind, "status": status}  # fmt: skip
    store.append(LearningEvent("LearningExtracted", lid, payload, session, PROJECT, "historical_backfill",
                               f"k-{lid}-{session}", valid_from="2026-02-10T10:00:00Z"))  # fmt: skip


def test_the_packet_marks_a_lesson_that_breaks_a_project_rule_with_the_rule(store, conn, tmp_path):
    _learn(store, "rule", NEVER_MAIN, "observed", "convention", "s1")
    _learn(store, "push-main", PUSH_LESSON, "verified", "gotcha", "s1")
    _learn(store, "push-branch", '`git push -u origin feat/x` failed with "pre-push hook: lint"; fixed by running '
           "`bun run lint --fix`", "verified", "gotcha", "s1")  # fmt: skip
    for lid in ("push-main", "push-branch"):  # learned again: both clear the evidence bar on their own
        store.append(LearningEvent("LearningReinforced", lid, {"reinforcement_delta": 0.1, "reason": "relearned"},
                                   "s2", PROJECT, "historical_backfill", f"again-{lid}"))  # fmt: skip
    project(conn)
    ids = dict(conn.execute("SELECT learning_id, id FROM memories").fetchall())
    build_cache(conn, load_settings({"HOME": str(tmp_path)}), lake_dir=tmp_path / "lake")
    text, injected = conn.execute("SELECT packet_text, memory_ids_json FROM injection_cache WHERE project_id = ?",
                                  (PROJECT,)).fetchone()  # fmt: skip
    assert {ids["push-main"], ids["push-branch"]} <= set(json.loads(injected))
    lines = {line for line in text.splitlines() if "`git push" in line}
    marked = [line for line in lines if "pull --rebase" in line]
    assert len(marked) == 1 and marked[0].startswith(
        '- [against the rule "Never push directly to `main`.": only when the user asks for it] If `git push origin'
    )
    assert all("against the rule" not in line for line in lines - set(marked))  # a push to a branch breaks nothing

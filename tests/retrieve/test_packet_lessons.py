"""What one session's evidence may put in a packet (retrieve/confidence.py): a verified workaround, rendered as a
lesson; a rule the project wrote down for its agents. Not one session's fix by editing files, not a rule quoted
from a dated incident note, not what a hook runs or git printed (replay: later sessions did not use those lines),
not a sentence lifted from its prose, never a hypothesis. The contents are what
the pipeline learned from the shared transcripts (the file each comes from is named)."""

from __future__ import annotations

import json

from nous_assets.retrieve.cache_build import build_cache
from nous_assets.retrieve.confidence import confidence
from nous_assets.retrieve.packet import NAMED_ELSEWHERE, TOLD, format_packet
from nous_assets.settings import load_settings
from nous_assets.store.log.events import LearningEvent
from nous_assets.store.sqlite.projection import project

PROJECT = "-home-christso-projects-agentv"

# context-evaluator 8ecab05f (transcripts-dev2) L270-500: the lint script fails, its fixer fixes it
WORKAROUND = '`bun run lint` failed with "error: script "lint" exited with code 1"; fixed by running `bun run lint:fix`'
# agentv acc53d32 (transcripts-dev2): a push rejected, pulled with rebase; the source names the one-off branch
PUSH = ('`git push -u origin <branch>` failed with "error: failed to push some refs"; fixed by running '
        "`git pull --rebase origin main`")  # fmt: skip
# spotter ae4a77f8 (transcripts) L485: the fix edited the config of the code at hand
EDITED = ('`mix test --seed 0` failed with "** (Mix) Could not start application opentelemetry: exited in: '
          ':opentelemetry_app.start(:normal, [])"; fixed by editing config/config.exs, config/dev.exs, config/test.exs '
          "and more and running `mix compile`")  # fmt: skip
# agentv acc53d32: a rule read from AGENTS.md, and what the pre-push hook printed when it ran
RULE = "CONTRIBUTING.md: *IMPORTANT: Never push directly to `main`. Always use branches and PRs."
LOADED = "AGENTS.md: Always run `bun run validate` before opening a pull request."  # Claude Code loads AGENTS.md
GATE = ("`git push` runs a pre-push hook (pre-commit): Build, Typecheck, Lint, Test, Validate eval YAML files; it "
        "blocks until they pass; fix what it reports rather than skipping it.")  # fmt: skip
# cipher-box (transcripts-dev2): a rule quoted from a dated note of one day's deploy
DATED = ("2026-02-09-staging-deployment-first-deploy.md rule: Jobs must declare `environment: staging` or they can't "
         "access environment-scoped secrets/vars.")  # fmt: skip
# spotter (transcripts): git said so when a session compared against `main`
BRANCH = ("The default branch is `master`, not `main`: `git log main..HEAD` fails with 'unknown revision'; compare "
          "against `master` (or `origin/master`).")  # fmt: skip
# lifted from the assistant's prose in one session (context-evaluator 8ecab05f), and a guess nothing confirmed
PROSE = "`buildMinimalContext()`: Shared context block (target agent, context files) used by all plan-first prompts"
GUESS = "Project rule (from the instruction files): CLAUDE.md paths are removed from `contextFilePaths`."


def _learn(store, lid: str, content: str, status: str, kind: str, **details) -> None:
    payload = {"content": content, "extractor_version": "t", "concepts": [kind, "agentv", lid], "edges": [],
               "scope": "project", "kind": kind, "status": status, **details}  # fmt: skip
    store.append(LearningEvent("LearningExtracted", lid, payload, "s1", PROJECT, "historical_backfill", f"k-{lid}",
                               valid_from="2026-03-25T10:00:00Z"))  # fmt: skip


def _packet(conn) -> tuple[str, set[str]]:
    text, ids = conn.execute("SELECT packet_text, memory_ids_json FROM injection_cache WHERE project_id = ?",
                             (PROJECT,)).fetchone()  # fmt: skip
    names = dict(conn.execute("SELECT id, learning_id FROM memories").fetchall())
    return text, {names[i] for i in json.loads(ids)}


def test_one_session_earns_a_line_only_with_evidence_beyond_its_own_words(store, conn, tmp_path):
    _learn(store, "workaround", WORKAROUND, "verified", "gotcha", applies_when="when running `bun run`")
    _learn(store, "push", PUSH, "verified", "gotcha", applies_when="when running `git push`",
           source_ref="git push -u origin chore/enable-entire")  # fmt: skip
    _learn(store, "edited", EDITED, "verified", "gotcha", applies_when="when running `mix test`")
    _learn(store, "rule", RULE, "observed", "convention", source_ref="CONTRIBUTING.md")
    _learn(store, "loaded", LOADED, "observed", "convention", source_ref="AGENTS.md")
    _learn(store, "gate", GATE, "observed", "workflow", slot="tool:hook-pre-push")
    _learn(store, "dated", DATED, "observed", "convention")
    _learn(store, "branch", BRANCH, "observed", "gotcha", slot="tool:git-default-branch")
    _learn(store, "prose", PROSE, "observed", "architecture")
    _learn(store, "guess", GUESS, "hypothesis", "convention")
    project(conn)
    rows = {r[0]: r for r in conn.execute("SELECT learning_id, status, kind, content, slot FROM memories")}
    bar = load_settings({"HOME": str(tmp_path)}).thresholds.packet_min_confidence
    scores = {lid: confidence({"status": s, "kind": k, "content": c, "slot": sl}) for lid, s, k, c, sl in rows.values()}
    assert {lid for lid, value in scores.items() if value >= bar} == {"workaround", "push", "rule", "loaded"}

    build_cache(conn, load_settings({"HOME": str(tmp_path)}), lake_dir=tmp_path / "lake")
    text, injected = _packet(conn)
    assert injected == {"workaround", "push", "rule"}
    lines = text.splitlines()
    # the incident reads as a lesson: when, what to do; no "when running …:" prefix before its own "If"
    assert ('- If `bun run lint` fails with "error: script "lint" exited with code 1": run `bun run lint:fix`, then '
            "`bun run lint` again. (verified · 2026-03-25)") in lines  # fmt: skip
    assert any(line.startswith("- If `git push -u origin <branch>` fails with") and
               "run `git pull --rebase origin main`, then `git push -u origin <branch>` again." in line
               for line in lines)  # fmt: skip
    assert "chore/enable-entire" not in text  # the line names the command; the trailer drops one run's branch
    assert "fixed by" not in text and "when running" not in text
    for absent in ("opentelemetry", "buildMinimalContext", "contextFilePaths", "pre-push hook", "environment: staging",
                   "default branch"):  # fmt: skip
        assert absent not in text  # a fix by editing, prose, a hypothesis, a hook, a dated note, git's output
    assert f"- {RULE} (observed" in text
    assert "bun run validate" not in text  # its evidence earns a line, but the session has AGENTS.md already
    assert lines[-1].startswith("_7 more memories are not shown")



# ironclaw (transcripts-dev3): the format check failed and the formatter fixed it; the brief names the formatter
FORMAT_FIX = ('`cd orchestrator && cargo fmt -- --check` failed with "- assert!(whitelist.contains(&sys));"; fixed by '
              "running `cd orchestrator && cargo fmt` instead")  # fmt: skip
FORMAT_LINE = "Format the code with `cargo fmt --all` from `orchestrator/`."


def test_a_lesson_whose_fix_is_the_formatter_the_brief_gives_is_not_said_twice(store, conn, tmp_path):
    _learn(store, "format-fix", FORMAT_FIX, "verified", "gotcha")
    _learn(store, "workaround", WORKAROUND, "verified", "gotcha")  # its fixer (lint:fix) is in no brief line
    project(conn)
    build_cache(conn, load_settings({"HOME": str(tmp_path)}), lake_dir=tmp_path / "lake")
    assert _packet(conn)[1] == {"format-fix", "workaround"}  # no brief: the lesson is all there is
    _learn(store, "brief-format", FORMAT_LINE, "verified", "command", slot="brief:cmd:format")
    project(conn)
    build_cache(conn, load_settings({"HOME": str(tmp_path)}), lake_dir=tmp_path / "lake")
    text, injected = _packet(conn)
    assert injected == {"brief-format", "workaround"} and "cargo fmt -- --check" not in text


def _line(content: str, kind: str, status: str, slot: str | None = None) -> dict:
    """A memory row as ``format_packet`` reads it."""
    return {"content": content, "kind": kind, "status": status, **({"slot": slot} if slot else {})}


# spotter 4d5611e5 and fa812bfe (transcripts): the hook's line, and a commit it rejected until `mix format` ran
HOOK = ('`git commit` runs a pre-commit hook: [FORMAT], [CREDO], [DIALYZER]; it blocks until they pass (the commit '
        'fails with "Pre-commit validation failed"); it says to run `mix format` to fix.')  # fmt: skip
HOOK_FIX = ('`git add lib/spotter/services/transcript_tail_adapter.ex…` failed with "pre-commit validation failed '
            '(FORMAT)"; fixed by running `mix format`')  # fmt: skip


def test_a_lesson_a_git_hooks_line_already_tells_is_left_out():
    hook = _line(HOOK, "workflow", "observed", "tool:hook-pre-commit")
    lesson = _line(HOOK_FIX, "gotcha", "verified")
    other = _line(HOOK_FIX.replace("`mix format`", "`mix credo --strict`"), "gotcha", "verified")  # not the hook's fix
    packet = format_packet([1, 2, 3], {1: hook, 2: lesson, 3: other}, budget_chars=4000)
    assert packet.memory_ids == (1, 3) and (2, TOLD) in packet.left_out
    assert format_packet([2], {2: lesson}, budget_chars=4000).memory_ids == (2,)  # without the hook's line it is news


# spotter 8463c716 (transcripts): `git add` refused the tracked stylesheet; the brief's rule from three sessions
FORCE_ADD = ("`priv/static/assets/spotter.css` is git-ignored but tracked: `git add` refuses it (\"The following paths "
             "are ignored by one of your .gitignore files\"); stage with `git add -f priv/static/assets/spotter.css`.")
REFUSED = ('`git add lib/spotter_web/live/session_live.ex lib/spotter_web/components/layouts/root.html…` failed with '
           '"The following paths are ignored by one of your .gitignore files:"; fixed by running '
           "`git add -f priv/static/assets/spotter.css && git add…` instead")  # fmt: skip


def test_a_lesson_the_briefs_rule_already_tells_is_left_out():
    rule = _line(FORCE_ADD, "convention", "verified", "brief:rule:force-add")
    lesson = _line(REFUSED, "gotcha", "verified")
    packet = format_packet([1, 2], {1: rule, 2: lesson}, budget_chars=4000)
    assert packet.memory_ids == (1,) and (2, TOLD) in packet.left_out
    elsewhere = {**lesson, "content": REFUSED.replace("spotter.css", "app.css")}  # a file the rule does not name
    assert format_packet([1, 2], {1: rule, 2: elsewhere}, budget_chars=4000).memory_ids == (1, 2)


# spotter (transcripts): the brief's recurring commands beside the line that says how work is tracked with `bd`
RECURRING = ("Commands this project's sessions run again and again: `bd show`, `bd close`, `bd ready`, `mix deps.get`, "
             "`mix ash.codegen`.")  # fmt: skip
TRACKED = ("Work is tracked with `bd`: `bd ready` (find), `bd show <id>` (read), `bd close <id> --reason=…` (finish); "
           "at the end: sync, commit, `git push`.")  # fmt: skip


def test_the_recurring_commands_line_leaves_out_what_other_lines_name():
    more = _line(RECURRING, "command", "verified", "brief:cmd:more")
    tracked = _line(TRACKED, "workflow", "verified", "tool:tasks")
    packet = format_packet([1, 2], {1: more, 2: tracked}, budget_chars=4000)
    assert packet.memory_ids == (1, 2)
    assert "again and again: `mix deps.get`, `mix ash.codegen`. (" in packet.text and packet.text.count("`bd show") == 1
    assert "`bd close`" in format_packet([1], {1: more}, budget_chars=4000).text  # alone, it says them all
    only_bd = {**more, "content": RECURRING.replace(", `mix deps.get`, `mix ash.codegen`", "")}
    packet = format_packet([1, 2], {1: only_bd, 2: tracked}, budget_chars=4000)
    assert packet.memory_ids == (2,) and (1, NAMED_ELSEWHERE) in packet.left_out
    # a lesson's fix: not a command the sessions run routinely
    lesson = _line('If `bd ready` fails with "no database": run `bd show x` instead.', "gotcha", "verified")
    assert format_packet([1, 2], {1: only_bd, 2: lesson}, budget_chars=4000).memory_ids == (1, 2)


def test_what_ci_runs_says_neither_a_recurring_command_nor_a_lessons_fix():
    # ironclaw (transcripts-dev3): CI checks formatting; the sessions' own `cargo fmt` and the lesson that fixes a
    # failed check with it stay
    ci = _line("CI on pull requests: `.github/workflows/ci.yml` runs `cargo test --verbose`, `cargo fmt --all -- "
               "--check` (in `orchestrator/`).", "workflow", "observed", "brief:gate:ci")
    more = _line("Commands this project's sessions run again and again: `cargo fmt`.", "command", "verified",
                 "brief:cmd:more")
    lesson = _line('If `cargo fmt -- --check` fails with "Diff in src/lib.rs": run `cargo fmt` instead.', "gotcha",
                   "verified")
    assert format_packet([1, 2, 3], {1: ci, 2: more, 3: lesson}, budget_chars=4000).memory_ids == (1, 2, 3)


def test_the_layout_naming_a_script_does_not_say_the_sessions_run_it():
    # duet (transcripts-dev3): the layout shows `scripts/generate-readme.sh`, the one file used in that folder
    layout = _line("Layout: `notes/` (philosophy.md, riffs.md), `scripts/generate-readme.sh`.", "architecture",
                   "observed", "brief:layout")
    more = _line("Commands this project's sessions run again and again: `bash scripts/generate-readme.sh`.", "command",
                 "verified", "brief:cmd:more")
    assert format_packet([1, 2], {1: layout, 2: more}, budget_chars=4000).memory_ids == (1, 2)


def test_a_rule_pointing_back_at_the_sentence_before_it_does_not_stand_alone(tmp_path):
    # flutter-docker-image (transcripts-dev3): two sentences of AGENTS.md quoted one by one; the first names no branch
    bar = load_settings({"HOME": str(tmp_path)}).thresholds.packet_min_confidence
    back = ("AGENTS.md (text cut from the file later): Renovate validates that branch on its next scheduled run and "
            "posts a status to it.")  # fmt: skip
    alone = ("AGENTS.md (text cut from the file later): `.github/renovate.json` sets `\"mode\": \"full\"`. Mend's "
             "hosted app injects `mode=silent` as global config; the repository value overrides it.")  # fmt: skip
    here = "CONTRIBUTING.md: Pull requests from this repository get a fixup commit when the lock is stale."
    scores = {text: confidence({"status": "observed", "kind": "convention", "content": text})
              for text in (back, alone, here)}  # fmt: skip
    assert scores[back] < bar <= scores[alone] and scores[here] >= bar

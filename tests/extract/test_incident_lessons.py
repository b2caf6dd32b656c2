"""Incidents as lessons (retrieve/lessons.py) on what the heuristic extractor writes from real transcripts: a fix
that was only a command is a workaround, rendered "if X fails with E: run Y"; a fix that edited files is not."""

from __future__ import annotations

from excerpts import EVAL_TREE, FASTHOOKS, SPOTTER_FUM, excerpt, extract, of_kind

from nous_assets.retrieve.lessons import as_lesson, command_families, fixer_remedy, is_workaround, parse


def _incident(rel: str, first: int, last: int, command: str = "") -> str:
    (content,) = [g["content"] for g in of_kind(extract(excerpt(rel, first, last)), "gotcha")
                  if " failed with " in g["content"] and g["content"].startswith(command)]  # fmt: skip
    return content


def test_a_command_run_instead_is_a_workaround_rendered_as_a_lesson():
    # spotter 8463c716 L784 `node assets/build.js` fails; L797 `cd assets && node build.js` passes; Claude explains
    content = _incident(SPOTTER_FUM, 780, 830)
    assert is_workaround(content)
    lesson = as_lesson(content)
    assert lesson.startswith('If `node assets/build.js` fails with "Error: Build failed with 1 error:": run '
                             "`cd assets && node build.js` instead. Why: The build script expects")  # fmt: skip
    assert "fixed by" not in lesson


def test_a_step_before_the_same_command_says_to_run_it_again():
    # context-evaluator 8ecab05f L270-500: `bun run lint` fails (its error quotes "lint"), `bun run lint:fix` fixes it
    content = _incident(EVAL_TREE, 270, 500, "`bun run lint`")
    incident = parse(content)
    assert incident is not None and incident.error == '"error: script "lint" exited with code 1"'
    assert is_workaround(content)
    assert as_lesson(content) == ('If `bun run lint` fails with "error: script "lint" exited with code 1": run '
                                  "`bun run lint:fix`, then `bun run lint` again.")  # fmt: skip


def test_a_wrapper_that_cannot_run_the_command_is_a_workaround_the_next_wrapped_call_is_not_its_rerun():
    # context-evaluator 8ecab05f: `rtk bun run test` fails ("unrecognized subcommand 'bun'"), `bun run test` passes;
    # the `rtk git status` run later is another command, not the failing one passing
    content = _incident(EVAL_TREE, 270, 500, "`cd agents-md-evaluator && rtk bun run test`")
    assert as_lesson(content) == (
        'If `cd agents-md-evaluator && rtk bun run test` fails with "error: unrecognized subcommand \'bun\'": '
        "run `cd agents-md-evaluator && bun run test` instead."
    )


def test_command_not_found_is_a_workaround():
    # fasthooks sample_main_transcript: `python …` exits 127 (python: command not found); `python3 …` works
    content = next(g["content"] for g in of_kind(extract(excerpt(FASTHOOKS, 1, 63)), "gotcha")
                   if g["content"].startswith("`python "))  # fmt: skip
    assert is_workaround(content)
    assert as_lesson(content).endswith(": run `python3 number_generator.py` instead.")


def test_a_fix_that_edited_files_is_no_workaround_and_reads_as_edit_then_run():
    # the extractor's sentence for a setup fix (tests/extract/test_rules_gotchas.py builds one from turns)
    content = ('`mix test --seed 0` failed with "** (Mix) Could not start application opentelemetry"; fixed by '
               "editing config/config.exs, config/test.exs and running `mix compile`")  # fmt: skip
    assert not is_workaround(content)
    assert as_lesson(content) == ('If `mix test --seed 0` fails with "** (Mix) Could not start application '
                                  'opentelemetry": edit config/config.exs, config/test.exs and run `mix compile`.')


def test_a_loop_typed_for_the_moment_is_no_workaround():
    content = ('`gh run view 21882337247 --log` failed with "error: Cannot find module"; fixed by running '
               "`for pr in 51 50 48; do gh pr checks $pr; done`")  # fmt: skip
    assert parse(content) is not None and not is_workaround(content)


def test_other_text_is_left_as_it_is():
    for text in ("Run the tests with `uv run pytest -q`.",
                 'Error: "python: command not found" (exit code 127). Fixed by Retried using `python3`',
                 "`mix test` failed with a sandbox error; fixed by sharing the sandbox."):  # fmt: skip
        assert parse(text) is None and not is_workaround(text) and as_lesson(text) == text


def test_an_error_about_the_sessions_own_branch_is_no_workaround():
    # cipher-box (transcripts-dev2) 2026-02-13: the branch the session wanted to recreate already existed
    content = ('`git checkout main && git branch -D <branch> && git checkout -b…` failed with "fatal: a branch named '
               "'<branch>' already exists\"; fixed by running `git checkout <branch>` instead")  # fmt: skip
    assert parse(content) is not None and not is_workaround(content)



def test_a_command_about_one_ci_run_is_told_for_any_run():
    # cipher-box (transcripts-dev2): one CI run's failed log, fixed by re-running that run's failed jobs
    rerun = ('`gh run view 22268187205 --log-failed` failed with "failed to get run log"; fixed by running '
             "`gh run rerun 22268187205 --failed`")  # fmt: skip
    assert is_workaround(rerun)
    assert as_lesson(rerun) == ('If `gh run view <id> --log-failed` fails with "failed to get run log": run `gh '
                                "run rerun <id> --failed`, then `gh run view <id> --log-failed` again.")  # fmt: skip


def test_a_fix_that_only_ran_a_formatter_or_fixer_names_its_families():
    fmt = '`cd orchestrator && cargo fmt -- --check` failed with "- x"; fixed by running `cd orchestrator && cargo fmt`'
    lint = '`bun run lint` failed with "error: script "lint" exited with code 1"; fixed by running `bun run lint:fix`'
    assert fixer_remedy(fmt) == {"cargo fmt"} and fixer_remedy(lint) == {"bun run lint:fix"}
    other = ('`rtk bun run test` failed with "error: unrecognized subcommand \'bun\'"; fixed by running `bun run test`'
             ", `bun run lint` (then `rtk git status` passed)")  # fmt: skip
    edited = '`mix format --check-formatted` failed with "x"; fixed by editing mix.exs and running `mix format`'
    assert fixer_remedy(other) == fixer_remedy(edited) == fixer_remedy("Format with `mix format`.") == frozenset()
    hook = ('`git add -A && git commit -m "…"` failed with "pre-commit validation failed (FORMAT)"; fixed by '
            "running `mix format`")  # fmt: skip
    assert fixer_remedy(hook) == frozenset()  # the commit failed: that its hook checks formatting is the news
    assert command_families("Format the code with `cargo fmt --all` from `orchestrator/`.") == {"cargo fmt"}


def test_a_fix_naming_a_dated_file_is_no_workaround():
    # spotter (transcripts) 2026-02-12: a staging slip over that day's migration, reached through a symlink in _build
    content = ("`git add lib/spotter/transcripts/jobs/sync_transcripts.ex…` failed with \"fatal: pathspec '_build/dev/"
               "lib/spotter/priv/repo/migrations/20260212155510_add_message_upsert_identity.exs' is beyond a symbolic "
               "link\"; fixed by running `git add priv/repo/migrations/20260212155510_add_message_upsert_identity"
               ".exs…` instead")  # fmt: skip
    assert parse(content) is not None and not is_workaround(content)
    dated_note = content.replace("20260212155510_add_message_upsert_identity.exs", "2026-02-12-notes.md")
    assert not is_workaround(dated_note)
    undated = content.replace("20260212155510_add_message_upsert_identity.exs", "add_message_upsert_identity.exs")
    assert is_workaround(undated)  # the same fix over a file that stays is one

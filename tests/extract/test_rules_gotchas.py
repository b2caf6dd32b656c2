"""Gotchas (rules/gotchas.py): failing commands and their fixes, confirmed diagnoses, why-comments."""

from __future__ import annotations

from excerpts import (
    AGENTV_DOCS,
    EPISODIC_LARGE,
    FASTHOOKS,
    FLUTTER_REVIEW,
    SPOTTER_4TE,
    SPOTTER_A0Y,
    SPOTTER_DOV,
    SPOTTER_FUM,
    assistant,
    bash,
    edit,
    excerpt,
    extract,
    of_kind,
    result,
    run,
    stream_of,
    whole,
)

from nous_assets.extract.rules import gotchas
from nous_assets.extract.rules.shell import error_line, family
from nous_assets.retrieve.lessons import as_lesson


def test_real_error_then_fix_names_command_error_fix_and_cause():
    # spotter 8463c716 L784 `node assets/build.js` fails ('Could not resolve "js/app.js"'); L797 `cd assets && node
    # build.js` passes; Claude explains the entry point is relative
    (g,) = of_kind(extract(excerpt(SPOTTER_FUM, 780, 830)), "gotcha")
    assert g["content"].startswith("`node assets/build.js` failed with")
    assert "`cd assets && node build.js`" in g["content"] and "Cause:" in g["content"]
    assert g["applies_when"].startswith("when running") and g["source_ref"]


def test_real_command_not_found_fix():
    # fasthooks sample_main_transcript: `python …` exits 127 (python: command not found); `python3 …` works
    fixes = [g for g in of_kind(extract(excerpt(FASTHOOKS, 1, 63)), "gotcha") if g["content"].startswith("`python ")]
    assert len(fixes) == 1 and "python3" in fixes[0]["content"]


def test_real_bypass_is_never_a_fix():
    # spotter ae4a77f8 L1457: after repeated pre-commit failures Claude runs `git commit --no-verify` (still blocked)
    out = extract(excerpt(SPOTTER_4TE, 1380, 1480))
    assert not any("fixed by" in g["content"] and "--no-verify" in g["content"] for g in of_kind(out, "gotcha"))
    assert not any("false positive" in r["content"].lower() for r in out)  # the refuted diagnosis of that run


def test_real_confirmed_diagnosis_is_kept_whole():
    # spotter ae4a77f8 L1599: "`current_span_ctx()` returns a `#span_ctx{}` record (not `{:ok, ...}`) …", then
    # compile, format, credo and dialyzer pass (L1640-L1711)
    diags = gotchas.diagnoses(stream_of(excerpt(SPOTTER_4TE, 1590, 1720)))
    assert any("`current_span_ctx()` returns a `#span_ctx{}` record (not `{:ok, ...}`)" in c.content for c in diags)


def test_real_hypothesis_blaming_the_tool_is_not_kept():
    # spotter fa812bfe L545: "This is a known Elixir compiler bug — aliases used only inside `rescue` blocks …"
    # (the real cause was the compile hook running between two edits)
    out = extract(excerpt(SPOTTER_A0Y, 530, 570))
    assert not any("compiler bug" in r["content"] for r in out)


def test_diagnosis_the_same_check_disproves_is_refuted_confirmed_one_kept():
    t = [
        assistant("", bash("make test", "b1")),
        result("b1", "Exit code 2\nerror: cannot import name 'Client' from 'httpx'", is_error=True),
        assistant("The issue is that `httpx.Client` requires the `http2` extra to be installed.",
                  edit("/home/dev/proj/pyproject.toml", "e1")),  # fmt: skip
        result("e1", "The file has been updated successfully."),
        assistant("", bash("make test", "b2")),
        result("b2", "Exit code 2\nerror: cannot import name 'Client' from 'httpx'", is_error=True),
        assistant("The issue is that `src/http.py` shadows the `httpx` package because of its module name.",
                  edit("/home/dev/proj/src/http.py", "e2")),  # fmt: skip
        result("e2", "The file has been updated successfully."),
        assistant("", bash("make test", "b3")),
        result("b3", "12 passed"),
    ]
    diags = {c.content: c for c in gotchas.diagnoses(stream_of_turns(t))}
    (kept,) = [c for d, c in diags.items() if "shadows the `httpx` package" in d]
    (wrong,) = [c for d, c in diags.items() if "http2" in d]
    assert kept.basis == "check"  # the check that failed before it passed after it
    assert wrong.status == "refuted" and "failed again" in wrong.evidence[-1]["what"]


def test_real_why_comment_in_code():
    # spotter 4d5611e5 L1291: the edit adds "# MapSet is opaque by design; dialyzer warns about …"
    (g,) = gotchas.why_comments(stream_of(excerpt(SPOTTER_DOV, 1285, 1330)))
    assert g.content.startswith("lib/spotter/services/waiting_summary/slice_builder.ex: MapSet is opaque by design")


def test_comment_without_a_reason_is_not_a_gotcha():
    t = [assistant("", edit("/home/dev/proj/src/app.py", "e1", "x = 1", "# set up the application state here\nx = 2")),
         result("e1", "updated")]  # fmt: skip
    assert gotchas.why_comments(stream_of_turns(t)) == []


def test_plain_rerun_and_other_target_are_not_fixes():
    assert of_kind(run(
        assistant("", bash("make test", "b1")), result("b1", "Exit code 2\nerror: flaky", is_error=True),
        assistant("", bash("make test", "b2")), result("b2", "ok"),
    ), "gotcha") == []  # fmt: skip
    assert of_kind(run(
        assistant("", bash("npx biome check src/a.ts", "b1")),
        result("b1", "Exit code 1\n× Unexpected any", is_error=True),
        assistant("", edit("/home/dev/proj/src/a.ts", "e1")), result("e1", "updated"),
        assistant("", bash("npx biome check .", "b2")), result("b2", "Checked 3 files in 2ms."),
    ), "gotcha") == []  # fmt: skip


def test_a_wrapped_commands_family_is_the_command_it_runs():
    # a later `rtk git status` passing is not `rtk bun run test` passing: both were family "rtk"
    assert family("rtk bun run test 2>&1") == "bun run test" and family("rtk git status") == "git status"
    assert family("timeout 120 npm test") == family("env CI=1 npm test") == family("nice -n 5 npm test") == "npm test"
    assert family("rtk proxy grep -r foo src") == "grep"


def test_a_rejected_push_names_gits_reason_not_the_line_every_failed_push_adds():
    # agentv acc53d32 L47: `git push origin main` prints "! [rejected] main -> main (fetch first)", then "error: failed
    # to push some refs"; L111 `git pull --rebase origin main`, L130 the push passes. The second line is also all a
    # push blocked by a failing pre-push hook says (f6b7329a L35), which rebasing does not fix
    (g,) = [g for g in of_kind(extract(whole(AGENTV_DOCS)), "gotcha") if "git pull --rebase" in g["content"]]
    assert '`git push origin main` failed with "! [rejected] main -> main (fetch first)"' in g["content"]
    hook = "Lint....Failed\nerror: script \"lint\" exited with code 1\nerror: failed to push some refs to 'x.git'"
    assert error_line(hook) == 'error: script "lint" exited with code 1'


def stream_of_turns(turns):
    from nous_assets.extract.base import SessionBatch

    return stream_of(SessionBatch("proj", "sess-1", "2026-02-12", turns))


def test_real_fallout_of_a_conflicted_rebase_is_no_gotcha():
    # episodic-memory large L139-L163: `git rebase origin/main` stops on conflicts ("could not apply …"); L166-L178
    # the push then fails on duplicate interfaces the merge left in ClientChart.tsx, fixed by deleting them: that
    # resolution's fallout. A later, unrelated failure (`npx knip` rejecting a knip.json key) is still a gotcha.
    s = stream_of(excerpt(EPISODIC_LARGE, 130, 240))
    fixes = gotchas.error_fixes(s)
    texts = [c.content for c in fixes + gotchas.diagnoses(s)]
    assert not any("ClientChart" in t for t in texts)
    assert any(t.startswith("`npx knip` failed with") for t in texts)


def test_a_why_comment_taken_out_later_in_the_session_is_not_kept():
    path = "/home/dev/proj/src/app.py"
    why = "# Keep the retry loop because the API drops the first request after a deploy\nretry(3)"
    later = [assistant("", edit(path, "e2", why, "# Retry once: the API is stable now\nretry(1)")),
             result("e2", "updated")]  # fmt: skip
    first = [assistant("", edit(path, "e1", "retry(0)", why)), result("e1", "updated")]
    assert gotchas.why_comments(stream_of_turns(first + later)) == []
    unrelated = [assistant("", edit(path, "e3", "x = 1", "x = 2")), result("e3", "updated")]
    (g,) = gotchas.why_comments(stream_of_turns(first + unrelated))
    assert "drops the first request" in g.content


def test_real_rewritten_task_comments_are_not_kept():
    # flutter-docker-image 4382554b writes a comment above mise.toml's [tasks.lint] three times ("Static checks that
    # need no image build …", "Local-only pre-flight …", then "Not in CI: …"); only the code's last word may stay
    found = [g.content for g in gotchas.why_comments(stream_of(whole(FLUTTER_REVIEW)))]
    assert not any(c.startswith("mise.toml:") for c in found)
    assert any(c.startswith("config/debian_13_trixie.sources:") for c in found)  # written once, never taken out


def test_a_comment_wrapped_over_lines_is_read_whole():
    lines = ["[tasks.lint]", "# Not in CI: Renovate validates the config on its own branch, so a", "# local check",
             "# is the only one that runs before pushing.", 'run = "npx renovate-config-validator"']  # fmt: skip
    assert gotchas.comments(lines) == [
        "Not in CI: Renovate validates the config on its own branch, so a local check is the only one that runs "
        "before pushing."
    ]


def test_a_bug_fixed_in_the_code_at_hand_is_no_gotcha_a_setup_fix_is():
    def session(path: str) -> list:
        return [
            assistant("", bash("uv run pytest -q", "b1")),
            result("b1", "E   KeyError: 'owner' in build_index", is_error=True),
            assistant("", edit(path, "e1", "x = row['owner']", "x = row.get('owner')")),
            result("e1", "The file has been updated successfully."),
            assistant("", bash("uv run pytest -q", "b2")),
            result("b2", "12 passed"),
        ]

    assert of_kind(run(*session("/home/dev/proj/src/app/index.py")), "gotcha") == []
    (g,) = of_kind(run(*session("/home/dev/proj/tests/conftest.py")), "gotcha")
    assert g["status"] == "verified" and "conftest.py" in g["content"]


def test_a_run_whose_summary_says_nothing_failed_is_no_failure():
    # context-evaluator: a passing test prints "error: Item 3 failed" on purpose; the run ends "0 fail"
    printed = "error: Item 3 failed\n(expected: the limiter reports it)\n 42 pass\n 0 fail"
    out = run(
        assistant("", bash("bun run test", "b1")),
        result("b1", printed),
        assistant("", edit("/home/dev/proj/bunfig.toml", "e1", "a = 1", "a = 2")),
        result("e1", "The file has been updated successfully."),
        assistant("", bash("bun run test", "b2")),
        result("b2", " 42 pass\n 0 fail"),
    )
    assert of_kind(out, "gotcha") == []
    failing = run(
        assistant("", bash("bun run test", "b1")),
        result("b1", printed.replace("0 fail", "1 fail")),
        assistant("", edit("/home/dev/proj/bunfig.toml", "e1", "a = 1", "a = 2")),
        result("e1", "The file has been updated successfully."),
        assistant("", bash("bun run test", "b2")),
        result("b2", " 42 pass\n 0 fail"),
    )
    assert len(of_kind(failing, "gotcha")) == 1


def test_a_lookup_that_shows_a_failure_elsewhere_did_not_fail():
    # cipher-box: `gh run view <id> --log-failed` prints a CI run's failed E2E test: the lookup worked
    def steps(lookup: str, looked_again: bool = True):
        return run(
            assistant("", bash(lookup, "b1")),
            result("b1", "E2E Tests\tRun E2E tests\t2026-02-22T01:41:26Z 1 failed\nerror: expect(locator) failed"),
            assistant("", bash("gh run rerun 22268187205 --failed", "b2")), result("b2", "Requested rerun"),
            *([assistant("", bash(lookup, "b3")), result("b3", "E2E Tests\tRun E2E tests\t 12 passed")]
              if looked_again else []),
        )  # fmt: skip

    shown = [c["content"] for c in of_kind(steps("gh run view 22268187205 --log-failed"), "gotcha")]
    assert len(shown) == 1 and shown[0].startswith("`gh run view 22268187205 --log-failed` showed \"")
    assert "fixed by running `gh run rerun 22268187205 --failed`" in shown[0]
    assert as_lesson(shown[0]).startswith("If `gh run view <id> --log-failed` shows \"")
    assert of_kind(steps("gh run view 22268187205 --log-failed"), "gotcha")[0]["status"] == "verified"
    # the re-run only starts the check again: without a later look showing it pass, it is what was done, not a fix
    rerun_only = of_kind(steps("gh run view 22268187205 --log-failed", looked_again=False), "gotcha")
    assert [c["status"] for c in rerun_only] == ["observed"]
    assert "; tried running `gh run rerun 22268187205 --failed` instead (its outcome not checked)" in rerun_only[0][
        "content"]
    acted = [c["content"] for c in of_kind(steps("gh workflow run e2e.yml"), "gotcha")]
    assert len(acted) == 1 and acted[0].startswith("`gh workflow run e2e.yml` failed with \"")


def test_steps_labels_and_run_together_cells_are_no_diagnoses():
    said = (
        "Update AGENTS.md to reference the script rather than the dropped mise task. "
        "Outer frame — the content area is wrapped in a single card container instead of three. "
        "`openjdk-17-jdk-headless` doesn't exist there `no-result` no PR `main` broke. "
        "Added the entry to `docs/TROUBLESHOOTING.md`, matching the file's existing format. "
        "The regex expects a `## Timeline / Log` heading, but this file's heading is just `## Timeline`."
    )
    diags = [c.content for c in gotchas.diagnoses(stream_of_turns([assistant(said)]))]
    assert diags == ["The regex expects a `## Timeline / Log` heading, but this file's heading is just `## Timeline`."]


def test_a_diagnosis_of_code_the_session_then_changed_is_history():
    # wakil 8dac3fcf: "`_merge_entity_note` treats an empty `compiled_truth` as …" — then the function is fixed:
    # the sentence described the code before the fix, and is no longer true of it
    t = [
        assistant("`merge_note` wipes the top section because it reads an empty `compiled_truth` as a deletion."),
        assistant("", edit("/home/dev/proj/src/app/notes.py", "e1", "def merge_note(a):\n    pass",
                           "def merge_note(a):\n    keep = a.compiled_truth or previous")),
        result("e1", "The file has been updated successfully."),
        assistant("", bash("uv run pytest -q", "b1")),
        result("b1", "40 passed"),
    ]
    (d,) = gotchas.diagnoses(stream_of_turns(t))
    assert d.status == "superseded" and "notes.py" in d.evidence[-1]["what"]


def test_a_log_lines_run_prefix_is_not_part_of_the_error():
    log = (
        "E2E Tests\tRun E2E tests\t2026-02-22T01:41:26.4913743Z   1 failed\n"
        "E2E Tests\tRun E2E tests\t2026-02-22T01:41:26.4924117Z ##[error]Process completed with exit code 1.\n"
    )
    line = error_line(log)
    assert "2026" not in line and "E2E Tests" not in line and line  # what failed, not when or in which step

"""Re-learning decisions (pure): near-duplicates reinforce, slots order by validity time."""

from __future__ import annotations

from nous_assets.reconcile.relearn import (
    Held,
    Incoming,
    changed_value,
    decide,
    file_paths,
    jaccard,
    restates,
    same_template,
    signature,
    tokens,
)

GATE = "Before committing run mix compile --warnings-as-errors, then mix test, then mix credo --strict."


def test_tokens_ignore_case_punctuation_and_function_words():
    assert tokens("Run `mix test` -- in the repo.") == {"run", "mix", "test", "repo"}
    assert tokens("") == frozenset() and jaccard(frozenset(), frozenset({"a"})) == 0.0
    assert "日本語のテスト" in tokens("日本語のテスト です")


def test_a_reworded_repeat_reinforces_the_memory_already_held():
    held = [Held("old", GATE, "2026-02-10T10:00:00.000000Z"), Held("other", "Use uv, never pip.", None)]
    repeat = Incoming("new", "Before committing: run mix compile --warnings-as-errors, then mix test, then "
                      "mix credo --strict!", "2026-02-12T09:00:00.000000Z")  # fmt: skip
    decision = decide(repeat, held)
    assert decision.reinforces and decision.target == "old" and decision.similarity >= 0.75


def test_a_different_learning_is_new_and_a_near_miss_is_reported():
    held = [Held("old", GATE, "2026-02-10T10:00:00.000000Z")]
    different = decide(Incoming("new", "The dev server listens on port 4000 (config/dev.exs).", None), held)
    assert different.action == "new" and different.near is None and not different.supersessions
    # part of the gate (7 of its 11 words): not the same learning, close enough to log as a near miss
    near = Incoming("n2", "Before committing run mix compile, then mix test.")
    decision = decide(near, held, threshold=0.75, near_miss=0.6)
    assert decision.action == "new" and decision.near == "old" and decision.similarity == 7 / 11


def test_the_same_learning_quoting_other_evidence_is_one_learning():
    keep_going = "User preference: keep working through all remaining tasks without stopping to ask"
    held = [Held("a", keep_going + ' ("tackle them")')]
    again = Incoming("b", keep_going + ' ("continue until all are done")')
    assert decide(again, held).reinforces
    # a learning that is mostly its quote is compared by the quote: other quotes are other learnings
    quoted = [Held("q", 'User preference: "we do container-first."')]
    assert decide(Incoming("r", 'User preference: "we want typescript or rust."'), quoted).action == "new"
    assert signature('Prefer (always) "this"') == tokens('Prefer (always) "this"')
    # mostly quotes in the same frame: what the quotes say is the learning
    frame = 'User correction: "{}" — after Claude said "Understood, I will keep that in mind for this project."'
    held = [Held("pr", frame.format("Never force-push to main; we open a PR for every change instead."))]
    other = Incoming("hook", frame.format("Don't use --no-verify here, fix whatever the hook complains about."))
    assert decide(other, held).action == "new"


def test_one_template_filled_with_other_names_is_another_learning():
    ruff = 'User preference: "From now on always run ruff before committing any change to the billing module."'
    vulture = 'User preference: "From now on always run vulture before committing any change to the billing module."'
    assert jaccard(signature(ruff), signature(vulture)) >= 0.75  # alike by words ...
    assert same_template(ruff, vulture) and decide(Incoming("v", vulture), [Held("r", ruff)]).action == "new"
    # ... while a restatement moves or adds words, and stays one learning
    again = 'User preference: "From now on, before committing any change to the billing module, always run ruff."'
    assert not same_template(ruff, again) and decide(Incoming("r2", again), [Held("r", ruff)]).reinforces
    # a slot's new value in the same sentence supersedes, it does not reinforce
    npm = [Held("a", "Install dependencies with pnpm install.", "2026-01-01T00:00:00Z", slot="cmd:install:js")]
    later = Incoming("b", "Install dependencies with bun install.", "2026-02-01T00:00:00Z", slot="cmd:install:js")
    decision = decide(later, npm)
    assert decision.action == "new" and [(s.old, s.new) for s in decision.supersessions] == [("a", "b")]


def test_alike_words_about_another_file_are_another_learning():
    held = [Held("api", "Configuration change in apps/api/.env.example: added `GOOGLE_CLIENT_ID`.")]
    other_file = Incoming("web", "Configuration change in apps/web/.env.example: added `GOOGLE_CLIENT_ID`.")
    assert file_paths(other_file.content) == {"apps/web/.env.example"}
    assert decide(other_file, held).action == "new"
    same_file = Incoming("api2", "Configuration change in apps/api/.env.example: added `GOOGLE_CLIENT_ID`!")
    assert decide(same_file, held).reinforces


def test_alike_words_about_another_command_are_another_learning():
    held = [Held("dev", "Run migrations/codegen with `mix ecto.migrate`.")]
    test_db = Incoming("test", "Run migrations/codegen with `MIX_ENV=test mix ecto.migrate`.")
    assert decide(test_db, held).action == "new"
    assert decide(Incoming("again", "Run migrations and codegen with `mix ecto.migrate`."), held).reinforces


def test_closed_memories_and_excluded_ones_are_never_merged_into():
    closed = [Held("old", GATE, "2026-02-10T10:00:00.000000Z", "2026-02-11T10:00:00.000000Z")]
    assert decide(Incoming("new", GATE), closed).action == "new"
    assert decide(Incoming("new", GATE), [Held("v1", GATE)], exclude=frozenset({"v1"})).action == "new"


def test_a_later_slot_value_closes_the_earlier_one_at_its_own_valid_from():
    held = [Held("a", "The test command is `mix test`.", "2026-02-01T00:00:00.000000Z", None, "cmd:test")]
    newer = Incoming("b", "The test command is `make check` (runs lint and tests).", "2026-02-05T00:00:00.000000Z",
                     "cmd:test")  # fmt: skip
    decision = decide(newer, held)
    assert decision.action == "new"
    assert [(s.old, s.new, s.at) for s in decision.supersessions] == [("a", "b", "2026-02-05T00:00:00.000000Z")]


def test_an_older_slot_value_ingested_late_is_closed_by_the_newer_one_never_the_reverse():
    held = [Held("b", "The test command is `make check`.", "2026-02-05T00:00:00.000000Z", None, "cmd:test")]
    older = Incoming("a", "The test command is `mix test --cover`.", "2026-02-01T00:00:00.000000Z", "cmd:test")
    decision = decide(older, held)
    assert [(s.old, s.new, s.at) for s in decision.supersessions] == [("a", "b", "2026-02-05T00:00:00.000000Z")]


def test_a_value_ingested_between_two_known_values_is_placed_between_them():
    held = [
        Held("a", "The test command is `mix test`.", "2026-02-01T00:00:00.000000Z", "2026-02-09T00:00:00.000000Z",
             "cmd:test"),
        Held("c", "The test command is `just test`.", "2026-02-09T00:00:00.000000Z", None, "cmd:test"),
    ]  # fmt: skip
    middle = Incoming("b", "The test command is `make check`.", "2026-02-05T00:00:00.000000Z", "cmd:test")
    decision = decide(middle, held)
    assert [(s.old, s.new, s.at) for s in decision.supersessions] == [
        ("a", "b", "2026-02-05T00:00:00.000000Z"),
        ("b", "c", "2026-02-09T00:00:00.000000Z"),
    ]


def test_the_same_slot_value_stated_again_reinforces_instead_of_superseding():
    held = [Held("a", "The test command is `mix test`.", "2026-02-01T00:00:00.000000Z", None, "cmd:test")]
    again = Incoming("b", "The test command is mix test.", "2026-02-05T00:00:00.000000Z", "cmd:test")
    decision = decide(again, held)
    assert decision.reinforces and decision.target == "a" and not decision.supersessions


def test_a_later_partial_observation_of_a_tool_fact_reinforces_the_fuller_value():
    # spotter (transcripts): the hook printed three failing checks in one session, only [FORMAT] in a later one
    full = ("`git commit` runs a pre-commit hook: [FORMAT], [CREDO], [DIALYZER]; it blocks until they pass; "
            "it runs even when git hooks are skipped, so fix what it reports.")  # fmt: skip
    part = "`git commit` runs a pre-commit hook: [FORMAT]; it blocks until they pass; fix what it reports."
    held = [Held("a", full, "2026-02-11T00:00:00.000000Z", None, "tool:hook-pre-commit")]
    decision = decide(Incoming("b", part, "2026-02-12T00:00:00.000000Z", "tool:hook-pre-commit"), held)
    assert decision.reinforces and decision.target == "a" and not decision.supersessions
    again = "A pre-commit hook checks [FORMAT], [CREDO] and [DIALYZER] before `git commit` lands."  # the same names
    assert decide(Incoming("d", again, "2026-02-13T00:00:00.000000Z", "tool:hook-pre-commit"), held).target == "a"
    added = part.replace("[FORMAT]", "[FORMAT], [TEST]")  # names a check the held value does not: a new value
    assert decide(Incoming("c", added, "2026-02-12T00:00:00.000000Z", "tool:hook-pre-commit"), held).action == "new"
    brief = [Held("a", "Layout: `src/` (app/, old/), `docs/`.", "2026-02-11T00:00:00.000000Z", None, "brief:layout")]
    moved = Incoming("b", "Layout: `src/` (app/).", "2026-02-12T00:00:00.000000Z", "brief:layout")
    assert decide(moved, brief).action == "new"  # the brief is recomputed whole: a path it drops is gone


def test_a_hook_list_that_names_other_checks_is_a_new_value_one_that_names_fewer_is_seen_in_part():
    # cipher-box (transcripts-dev2): lint-staged printed eslint in one session, only markdownlint and prettier in others
    more = "`git commit` runs a pre-commit hook (lint-staged): eslint --fix, markdownlint --fix, prettier --write."
    some = ("`git commit` runs a pre-commit hook (lint-staged): markdownlint --fix, prettier --write; it blocks until "
            "they pass; fix what it reports rather than skipping it.")  # fmt: skip
    other = "`git commit` runs a pre-commit hook (lint-staged): stylelint --fix; it blocks until they pass."
    slot = "tool:hook-pre-commit"
    first = [Held("a", "`git commit` runs a pre-commit hook (lint-staged): markdownlint --fix, prettier --write.",
                  "2026-02-13T00:00:00.000000Z", None, slot)]  # fmt: skip
    fuller = decide(Incoming("b", more, "2026-02-21T00:00:00.000000Z", slot), first)  # alike words, one check more
    assert fuller.action == "new" and [s.old for s in fuller.supersessions] == ["a"]
    held = [Held("b", more, "2026-02-21T00:00:00.000000Z", None, slot)]
    assert decide(Incoming("c", some, "2026-02-22T00:00:00.000000Z", slot), held).target == "b"
    assert decide(Incoming("d", other, "2026-02-22T00:00:00.000000Z", slot), held).action == "new"


def test_a_fuller_value_restates_the_one_it_closes_another_value_does_not():
    # duet (transcripts-dev3): one session saw the pre-commit hook run prettier, a later one saw it run the README
    # script first: the fuller value restates the partial one (its sessions count); ingested the other way round,
    # the partial one reinforces the fuller
    slot = "tool:hook-pre-commit"
    part = "`git commit` runs a pre-commit hook: `prettier --write README.md`, then `git add README.md`."
    full = ("`git commit` runs a pre-commit hook: `scripts/generate-readme.sh`, then `prettier --write README.md`, "
            "then `git add README.md`.")  # fmt: skip
    early, late = "2026-02-17T00:00:00.000000Z", "2026-02-19T00:00:00.000000Z"
    (closing,) = decide(Incoming("b", full, late, slot), [Held("a", part, early, None, slot)]).supersessions
    assert (closing.old, closing.new, closing.restates) == ("a", "b", True)
    assert decide(Incoming("a", part, early, slot), [Held("b", full, late, None, slot)]).target == "b"  # seen again
    other = "`git commit` runs a pre-commit hook: `npx lint-staged`."  # another hook: a new value, not the same fact
    (closing,) = decide(Incoming("c", other, late, slot), [Held("a", part, early, None, slot)]).supersessions
    assert not closing.restates
    assert restates(full, part, slot) and not restates(full, part, "config:config/dev.exs#read")  # a file changed


def test_a_setting_quoted_with_another_literal_is_a_new_value_whatever_the_alike_words():
    # spotter (transcripts): a 2026-02-10 subagent read `ip: {127, 0, 0, 1}`; the sessions of the next days read
    # `ip: {0, 0, 0, 0}`, in other words (no note on the overrides, clauses swapped)
    slot = "config:config/dev.exs#read"
    note = "(Per-worktree overrides (gitignored - generated by scripts/setup_worktree.sh))"
    local, anywhere = "`http: [ip: {127, 0, 0, 1}, port: 1100],`", "`http: [ip: {0, 0, 0, 0}, port: 1100],`"
    first = f"config/dev.exs: serves on port 1100 ({local}); imports `dev.local.exs` when present {note}."
    later = f"config/dev.exs: serves on port 1100 ({anywhere}); imports `dev.local.exs` when present."
    swapped = f"config/dev.exs: imports `dev.local.exs` when present {note}; serves on port 1100 ({anywhere})."
    held = [Held("a", first, "2026-02-10T22:16:00.000000Z", None, slot)]
    decision = decide(Incoming("b", later, "2026-02-11T20:40:00.000000Z", slot), held)
    assert decision.action == "new" and [(s.old, s.new) for s in decision.supersessions] == [("a", "b")]
    held = [Held("a", first, "2026-02-10T22:16:00.000000Z", "2026-02-11T20:40:00.000000Z", slot),
            Held("b", later, "2026-02-11T20:40:00.000000Z", None, slot)]  # fmt: skip
    assert decide(Incoming("c", swapped, "2026-02-11T21:45:00.000000Z", slot), held).target == "b"  # the same value
    assert changed_value('`"mode": "full"`', '`"mode": "silent"`') and changed_value("`PORT=4000`", "`PORT=4001`")
    assert not changed_value("sets `config :logger,`", "sets `config :otel,`")  # other settings, not other values

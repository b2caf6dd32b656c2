"""Commands (rules/commands.py): project-specific commands that worked; toolchain defaults and counts left out."""

from __future__ import annotations

from excerpts import EVAL_TREE, SPOTTER_A0Y, assistant, bash, excerpt, extract, of_kind, result, run

from nous_assets.extract.rules import shell

CIPHER_REGISTRY = "cipher-box/-Users-michael-Code-cipher-box/d110ba2f-b38e-4e1a-ac4d-d2ad0164b1e9.jsonl"


def test_real_command_with_an_environment():
    # spotter fa812bfe L985-L986: `MIX_ENV=test mix ecto.migrate` migrates the test database
    (c,) = of_kind(extract(excerpt(SPOTTER_A0Y, 980, 1000)), "command")
    assert c["content"] == "Run migrations/codegen with `MIX_ENV=test mix ecto.migrate`."
    # run in another environment, it is another command than `mix ecto.migrate`: its own slot
    assert c["slot"] == "cmd:migration:MIX_ENV=test mix ecto.migrate"
    assert c["applies_when"] == "when changing the database schema"


def test_real_migration_name_is_a_placeholder():
    # spotter fa812bfe L828: `mix ash.codegen --name add_message_upsert_identity` — the name is this change's
    found = of_kind(extract(excerpt(SPOTTER_A0Y, 820, 840)), "command")
    codegen = [r["content"] for r in found if "codegen" in r["content"]]
    assert codegen == ["Run migrations/codegen with `mix ash.codegen --name <name>`."]


def test_real_workspace_scripts_are_known_by_their_script():
    # cipher-box d110ba2f L102: `pnpm --filter @cipherbox/crypto test -- --run registry` (a workspace's tests)
    (c,) = of_kind(extract(excerpt(CIPHER_REGISTRY, 95, 110)), "command")
    assert c["content"] == "Run tests with `pnpm --filter @cipherbox/crypto test -- --run registry`."
    assert c["slot"] == "cmd:test:pnpm test --filter @cipherbox/crypto"
    # context-evaluator 8ecab05f L294: `bun run css:build` in frontend/ builds, by the script's own name
    builds = [r["content"] for r in of_kind(extract(excerpt(EVAL_TREE, 285, 300)), "command")]
    assert "Build with `bun run css:build` (from frontend/)." in builds
    # a script whose name says nothing is no command to remember; another workspace is another slot
    assert shell.category("npm run foo") is None
    assert shell.family("pnpm --filter web dev") != shell.family("pnpm --filter api dev")


def test_default_commands_and_output_counts_are_not_memories():
    out = run(assistant("", bash("mix test 2>&1 | tail -5", "b1")), result("b1", "14 doctests, 87 tests, 0 failures"))
    assert out == []
    out = run(assistant("", bash("npm run check", "b1")), result("b1", "Tests: 12 passed, 12 total"))
    (c,) = of_kind(out, "command")
    assert c["content"] == "Check/lint with `npm run check`." and "12" not in c["content"]


def test_read_only_commands_are_not_learnings():
    out = run(assistant("", bash("ls -la", "b1")), result("b1", "total 0"), assistant("", bash("git status", "b2")),
              result("b2", "clean"))  # fmt: skip
    assert out == []

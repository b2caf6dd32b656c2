"""Conventions (rules/conventions.py): rules the session writes to (or reads from) instruction files."""

from __future__ import annotations

from excerpts import AGENTV_DOCS, CIPHER_MIGRATION, assistant, contents, edit, excerpt, result, stream_of

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules import conventions
from nous_assets.extract.rules.conventions import _rule_lines, blocks


def test_real_rules_written_to_the_memory_file():
    # cipher-box 1cd4e81e L228-L230: Claude adds a "TypeORM Migration Discipline" section to memory/MEMORY.md
    texts = contents(conventions.conventions(stream_of(excerpt(CIPHER_MIGRATION, 215, 240))))
    assert any(t.startswith("MEMORY.md: Every new `@Entity()` MUST have a corresponding `CREATE TABLE`") for t in texts)
    assert any("IF NOT EXISTS" in t for t in texts)


def test_real_rules_restored_into_agents_md():
    # agentv acc53d32 L19: the issue-claiming rules are written back into AGENTS.md
    texts = contents(conventions.conventions(stream_of(excerpt(AGENTV_DOCS, 15, 25))))
    assert any("in-progress" in t and t.startswith("AGENTS.md: ") for t in texts)


def test_rules_written_into_a_file_claude_code_loads_are_marked_as_such():
    memory = contents(conventions.conventions(stream_of(excerpt(CIPHER_MIGRATION, 215, 240))))
    agents = contents(conventions.conventions(stream_of(excerpt(AGENTV_DOCS, 15, 25))))
    index = [t for t in memory if t.startswith("MEMORY.md: ")]  # memory/MEMORY.md: in every session
    assert index and all(conventions.loaded_rule(t) for t in index)
    assert not any(conventions.loaded_rule(t) for t in memory if t not in index)  # a topic file: read on demand
    assert agents and all(conventions.loaded_rule(t) for t in agents)  # agentv's CLAUDE.md is `@AGENTS.md`
    assert conventions.loaded_rule(conventions.CITED_PREFIX + "Never push to main.")
    assert conventions.loaded_rule("AGENTS.md rule: Don't reference external projects, PRs, or issues in comments.")
    assert not conventions.loaded_rule("CONTRIBUTING.md rule: *IMPORTANT: Never push directly to `main`.")


def test_a_rule_the_session_took_out_of_the_file_again_is_not_one_claude_code_loads():
    rule = "- Never run `npm publish` from a feature branch; releases go through the release workflow.\n"
    other = "- Always run `npm test` before pushing a branch to the remote repository.\n"
    path = "/home/dev/proj/AGENTS.md"
    turns = [assistant("", edit(path, "e1", "", rule + other)), result("e1", "updated"),
             assistant("", edit(path, "e2", rule + other, other)), result("e2", "updated")]  # fmt: skip
    texts = contents(conventions.conventions(stream_of(SessionBatch("p", "s", "d", turns))))
    taken_out = [t for t in texts if "npm publish" in t]
    kept = [t for t in texts if "npm test" in t]
    assert taken_out and taken_out[0].startswith("AGENTS.md (text cut from the file later): ")
    assert not conventions.loaded_rule(taken_out[0])  # the file no longer says it: the packet may
    assert kept and kept[0].startswith("AGENTS.md: ") and conventions.loaded_rule(kept[0])


def test_headings_and_vague_lines_are_not_rules():
    new = "## Notes\n\nSome thoughts about the project.\n- Nice ideas for later\n"
    turns = [assistant("", edit("/home/dev/proj/CLAUDE.md", "e1", "", new)), result("e1", "updated")]
    assert conventions.conventions(stream_of(SessionBatch("p", "s", "d", turns))) == []


def test_a_rule_wrapped_over_lines_is_one_rule_not_fragments():
    text = (
        "## Working agreement\n\n"
        "- Never hand-edit `CHANGELOG.md`: it is generated from commit\n"
        "  messages by `git-cliff`, see `cliff.toml`.\n"
        "- Read `docs/TROUBLESHOOTING.md` before starting: it exists precisely so a\n"
        "  known bug is not debugged twice.\n"
    )
    assert blocks(text)[1] == ("- Never hand-edit `CHANGELOG.md`: it is generated from commit messages by `git-cliff`, "
                               "see `cliff.toml`.")  # fmt: skip
    rules = _rule_lines(text, strong_only=True)
    assert rules == ["Never hand-edit `CHANGELOG.md`: it is generated from commit messages by `git-cliff`, see "
                     "`cliff.toml`."]  # fmt: skip


def test_a_memory_files_frontmatter_is_not_a_rule():
    text = ("---\nname: feedback_validator\ndescription: `renovate-config-validator` must run before every push\n"
            "metadata: type: feedback\n---\n\n"
            "Never push `.github/renovate.json` without running `npx renovate-config-validator` first.\n")  # fmt: skip
    assert _rule_lines(text, strong_only=True) == [
        "Never push `.github/renovate.json` without running `npx renovate-config-validator` first."
    ]


def test_a_rule_carries_the_command_of_the_code_block_after_it():
    text = (
        "## Pull Requests\n\n**Always use squash merge** when merging PRs to main.\n\n"
        "```bash\n# Using GitHub CLI to squash merge a PR\ngh pr merge <PR_NUMBER> --squash --delete-branch\n\n"
        "# Or with auto-merge enabled\ngh pr merge <PR_NUMBER> --squash --auto\n```\n\n"
        "- Always run `make test` before pushing, every time.\n"
    )
    assert _rule_lines(text, strong_only=True) == [
        "Always use squash merge when merging PRs to main (`gh pr merge <PR_NUMBER> --squash --delete-branch`).",
        "Always run `make test` before pushing, every time.",  # no code block after it
    ]
    # the bold that opens a line is no bullet: no stray "*" is left of it
    assert _rule_lines("**Never** commit `.env` files to the repository.\n", strong_only=True) == [
        "Never commit `.env` files to the repository."
    ]

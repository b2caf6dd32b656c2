"""Memory texts as the dev transcripts' stores hold them (spotter's hook failures, agentv's AGENTS.md rules), shared
by the consolidation tests."""

HOOK_1 = ('`git add lib/spotter/services/transcript_tail_adapter.ex…` failed with "pre-commit validation failed '
          '(FORMAT)"; fixed by running `mix format`')  # fmt: skip
HOOK_2 = ('`git add -A && git commit -m "…"` failed with "pre-commit validation failed (FORMAT)"; fixed by running '
          '`mix format`')  # fmt: skip
HOOK_3 = '`git commit -m "wip"` failed with "pre-commit validation failed (FORMAT)"; fixed by running `mix format`'
LABEL_1 = "AGENTS.md: If the issue has the `in-progress` label, do not work on it — pick a different issue."
LABEL_2 = "AGENTS.md: `in-progress` marks an issue as claimed by an agent — do not start work on it."
PORT = "The dev server listens on port 4000 when started with mix phx.server."
CHAKRA = "Chakra UI v3 components crash without a ChakraProvider, so the tree view uses headless Ark UI."

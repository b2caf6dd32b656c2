"""Project brief: what a senior engineer wants to know before the next session, mined from tool calls.

Memories extracted from prose miss the things a newcomer needs first: the canonical task runner and
quality gate, the release and deploy procedure, the branch/commit/PR rules, and a one-paragraph layout of
the repository. This package mines them from structured evidence — the commands every session of one
project ran and how they ended, the manifests it read, the files it touched — across sessions.

Pure and offline: no LLM, no SQLite, no dagster; the same sessions give the same items whatever their order.

Entry point::

    from nous_assets.brief import BriefItem, mine_brief

    items: list[BriefItem] = mine_brief(sessions)  # every SessionBatch of ONE repository

Sections and keys (one module each):

* ``commands`` (:mod:`.commands`) — ``cmd:<purpose>`` for build, test, lint, format, typecheck, check, run;
  (:mod:`.recurring`) ``cmd:more``: the other commands the sessions ran successfully again and again;
* ``gate`` (:mod:`.gate`) — ``gate``: the ordered checks before commits; (:mod:`.ci`) ``gate:ci``: the checks the
  CI workflows the sessions read run on pull requests;
* ``procedures`` (:mod:`.procedures`) — ``procedure:release`` / ``procedure:deploy`` / ``procedure:publish``;
* ``rules`` (:mod:`.rules`) — ``rule:protected-branch``, ``rule:signed-commits``, ``rule:branch-prefix``,
  ``rule:pr-flow``, ``rule:leave-out``, ``rule:force-add``;
* ``layout`` (:mod:`.layout`) — ``layout``: the stack and the top-level folders.

Shared machinery: :mod:`.item` (the item and its evidence), :mod:`.timeline` (sessions as one ordered
timeline of tool calls under their repository root), :mod:`.shell_split` (a Bash call's simple commands),
:mod:`.runners` (what a command is for and its canonical form), :mod:`.manifests` (manifest entries and
stack facts).
"""

from typing import Any

from nous_assets.brief.item import BriefItem

__all__ = ["BriefItem", "mine_brief"]


def __getattr__(name: str) -> Any:
    """``mine_brief`` on first use: importing any submodule runs this package first, and the miners' rule
    tables (hundreds of regexes) are not what the packet rules need from :mod:`.item` (``nous search``)."""
    if name == "mine_brief":
        from nous_assets.brief.mine import mine_brief

        return mine_brief
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""An incident as a lesson: what to do, when, and why — not a log of an error and its fix.

The heuristic extractor writes a command that failed and what then made it pass as one sentence
(:func:`nous_assets.extract.rules.gotchas._error_fix`)::

    `CMD` failed with "ERROR" (later "ERROR2"); fixed by editing F1, F2 and running `FIX` (then `OK` passed). Cause: WHY

(``showed`` instead of ``failed with`` when CMD is a lookup that printed a failure elsewhere, a CI run's log.)

A fresh reader judged such lines mostly noise (the failure of the day), but the same evidence says something
the next session can act on: *if CMD fails with ERROR, do FIX* — and, when the fix was only a command run
instead (no file edited), the lesson applies as it stands in any later session: a **workaround**. This module
parses that sentence (:func:`parse`), says whether it is a workaround (:func:`is_workaround`, which the
packet's evidence bar rewards, :mod:`~nous_assets.retrieve.confidence`) and renders it as a lesson
(:func:`as_lesson`, the packet's line). Text of any other shape is left as it is.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from nous_assets.extract.rules.text import BACKTICKED_RE

if TYPE_CHECKING:
    from nous_assets.brief.runners import Use

_INCIDENT_RE = re.compile(
    r'^`(?P<cmd>[^`]+)` (?P<verb>failed with|showed) (?P<err>".*?"(?: \(later ".*?"\))?)'
    r"; fixed by (?P<fix>.+?)(?P<then> \(then `[^`]+` passed\))?(?:\. Cause: (?P<cause>.+))?$",
    re.DOTALL,
)
_EDITING_RE = re.compile(r"^editing (?P<files>.+?)(?: and (?P<rest>running .+))?$", re.DOTALL)
_RUNNING_RE = re.compile(r"^running (?P<cmds>`.+`)(?P<instead> instead)?$", re.DOTALL)
_LOOP_RE = re.compile(r"^`(?:for|while|until|if)\s")  # a loop or a condition typed for one moment
BRANCH = "<branch>"  # the session's own branch (extract/rules/render.py): an error naming it is that branch's state
_RUN_ID_RE = re.compile(r"(?<![\w.-])\d{6,}(?![\w.-])")
"""A run or job id of six digits or more: the lesson names the kind of command, ``<id>`` for that one run."""


@dataclass(frozen=True)
class Incident:
    """A failed command and what fixed it, as the extractor wrote them."""

    command: str  # the command that failed, without backticks
    error: str  # the quoted error line(s)
    edited: str  # the files edited ("" when none)
    ran: str  # the backticked commands run to fix it ("" when none)
    instead: bool  # the fix was the same step run another way
    cause: str  # the assistant's one-sentence explanation ("" when none)
    then: str = ""  # the command that passed afterwards, when it was not the failed one
    shown: bool = False  # a lookup that showed a failure elsewhere (a CI run's log), not a command that failed


def parse(content: str) -> Incident | None:
    """The incident ``content`` records, or None when it is not an error→fix sentence."""
    found = _INCIDENT_RE.match(content.strip())
    if found is None:
        return None
    fix = found["fix"].strip()
    edited, ran, instead = "", "", False
    editing = _EDITING_RE.match(fix)
    if editing:
        edited = editing["files"].strip()
        fix = (editing["rest"] or "").strip()
    if fix:
        running = _RUNNING_RE.match(fix)
        if running is None:
            return None
        ran, instead = running["cmds"].strip(), bool(running["instead"])
    if not edited and not ran:
        return None
    then = found["then"].strip()[len("(then `"):-len("` passed)")] if found["then"] else ""
    return Incident(found["cmd"], found["err"], edited, ran, instead, (found["cause"] or "").strip(), then,
                    found["verb"] == "showed")  # fmt: skip


_DATED_FILE_RE = re.compile(r"(?<![\w-])(?:\d{4}-\d{2}-\d{2}|\d{8,})[\w-]*\.[A-Za-z]\w*")
"""A file named for the day or moment it was made (``20260212155510_add_message_upsert_identity.exs``, a dated
note): a fix that names one is about that file, which no later session meets again."""


def is_workaround(content: str) -> bool:
    """Whether ``content`` is an incident fixed by a command alone (no file edited, no loop typed for the
    moment, no error about the session's own branch, such as "a branch named '<branch>' already exists", no dated
    file): a step a later session can take as it stands. A fresh reader judged "if `git add …` fails with "pathspec
    '_build/…/20260212155510_add_….exs' is beyond…": run `git add priv/repo/migrations/20260212155510_add_….exs`"
    noise in every packet it entered: a staging slip over one day's migration."""
    incident = parse(content)
    return bool(incident and incident.ran and not incident.edited and not _LOOP_RE.match(incident.ran)
                and BRANCH not in incident.error and not _DATED_FILE_RE.search(incident.ran))  # fmt: skip


def as_lesson(content: str) -> str:
    """``content`` as a lesson (if CMD fails with ERROR: do FIX; why), or unchanged when it is not an incident."""
    incident = parse(content)
    if incident is None:
        return content
    if incident.edited and incident.ran:
        todo = f"edit {incident.edited} and run {incident.ran}"
    elif incident.edited:
        todo = f"edit {incident.edited}"
    elif incident.instead:
        todo = f"run {incident.ran} instead"
    else:  # a step before the same command passed
        todo = f"run {incident.ran}, then " + (f"`{incident.then}`" if incident.then else f"`{incident.command}` again")
    why = f" Why: {incident.cause}" if incident.cause else ""
    verb = "shows" if incident.shown else "fails with"
    return _RUN_ID_RE.sub("<id>", f"If `{incident.command}` {verb} {incident.error}: {todo}.{why}")


def command_families(text: str) -> frozenset[str]:
    """The project commands ``text`` names in backticks, by family (``cargo fmt``, ``bun run lint:fix``)."""
    return frozenset(use.family for span in BACKTICKED_RE.findall(text) for use in _uses(span))


def fixer_remedy(content: str) -> frozenset[str]:
    """The families of the commands that fixed an incident when the command that failed was one of the project's
    checks run directly (``cargo fmt -- --check``, ``bun run lint``) and every fix is a fixer — a formatter, or a
    linter run to fix (``cargo fmt``, ``bun run lint:fix``) — with no file edited; else empty. Such a lesson says
    "the check failed: run its fixer", which a brief line naming that fixer already says (a fresh reader judged each
    of them trivial where the packet had the format command or the quality gate). Not when a commit or a push
    failed: "the commit hook rejects unformatted code" is news the formatter's line does not tell (dev's replay lost
    that error need when such a lesson was dropped)."""
    incident = parse(content)
    if incident is None or incident.edited or not incident.ran:
        return frozenset()
    from nous_assets.brief.runners import CHECK_PURPOSES

    if not any(use.purpose in CHECK_PURPOSES for use in _uses(incident.command)):
        return frozenset()
    uses = [use for span in BACKTICKED_RE.findall(incident.ran) for use in _uses(span)]
    if not uses or not all(use.purpose == "format" or (use.purpose == "lint" and "fix" in use.form) for use in uses):
        return frozenset()
    return frozenset(use.family for use in uses)


def _uses(command: str) -> list[Use]:
    """The project commands of a command line. The brief's classifier is imported here, not with the module: the
    MCP server renders lessons through the packet module and never classifies (it cost its start ~25 ms)."""
    from nous_assets.brief.runners import classify
    from nous_assets.brief.shell_split import segments

    return [use for seg in segments(command, "/") if (use := classify(seg)) is not None]

"""Redacting a turn's metadata: every string field besides its text, shared by capture and the rescan.

Why: a secret reaches a transcript's metadata as easily as its text (a token pasted into a branch name, an
access key in a directory name), and from there the lake, cortex.db (project ids, aliases, cursors, queue
items, chunks), ``_files.json`` and every listing that prints a project or a path. So capture stores each
such field redacted, and ``nous redact --rescan`` applies the same treatment to what was stored before:

* names a person or a tool chose (``cwd``, ``git_branch``, ``source_path``, ``model``, ``version``) go through
  :func:`redact_meta`, the full redactor then the hook's subset (paths one name at a time);
* ids (uuids, session, agent, message and request ids, tool ids and names) only through the hook's subset
  (:func:`~resolver.project.redact_name`): they are random by nature, so the full redactor's high-entropy
  test would take them for secrets and break the links between records;
* ``project_id`` through :func:`~resolver.project.project_id_from_folder`, the id the hook derives for the
  same directory, so a redacted id is the same on every run and on both sides.

The transcript file itself is still read through its real path, which is kept in memory only
(:class:`~nous_assets.capture.discovery.TranscriptFile`); what is stored is :func:`stored_path`.

Why the hook's subset runs after the full redactor: the SessionStart hook looks a session's cwd up in the
aliases and cannot import the full redactor (standard library only), so it finds a project whose path holds a
token only if both sides agree on the stored form. Running the subset last makes them agree whenever the
subset's kinds are the only secrets in the name, and it also catches ``ghp-…``, a token whose ``_`` Claude
Code's folder encoding turned into ``-`` (:mod:`resolver.project` says what the hook does otherwise).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import replace
from functools import lru_cache
from typing import TypeVar

from nous_assets.capture.redact import RedactionResult, redact_text
from nous_assets.turns import ToolResult, ToolUse, Turn
from resolver.project import project_id_from_folder, redact_name

__all__ = [
    "FieldCounts",
    "project_id_text",
    "redact_meta",
    "redact_meta_text",
    "redact_name_text",
    "redact_turn_metadata",
    "stored_path",
    "stored_path_text",
]

PATH_FIELDS = ("cwd", "source_path")
META_FIELDS = ("git_branch", "model", "version")
ID_FIELDS = ("uuid", "parent_uuid", "session_id", "message_id", "request_id", "agent_id", "subtype",
             "logical_parent_uuid")  # fmt: skip

FieldCounts = dict[str, dict[str, int]]  # field -> kind -> redactions
_MARKER = re.compile(r"\[REDACTED:([a-z0-9_]+)\]")


@lru_cache(maxsize=8192)  # a file's turns repeat its cwd, branch, path, model and version
def redact_meta_text(text: str, *, path: bool = False) -> RedactionResult:
    """:func:`~nous_assets.capture.redact.redact_text`, then the hook's :func:`~resolver.project.redact_name`
    (module doc), counted by kind.

    ``path``: each ``/``-separated name is redacted on its own. A path's names are separate names, and read as
    one text a marker in one folder name is a "secret word" next to the following name: the file name of
    ``[REDACTED:aws_access_key]-app/<session uuid>.jsonl`` would go, and every session of that folder would
    share one stored path (and one cursor).
    """
    if path and "/" in text:
        parts = [redact_text(name) for name in text.split("/")]
        counts = sum((Counter(p.counts) for p in parts if p.counts), Counter())
        first = RedactionResult("/".join(p.text for p in parts), dict(counts))
    else:
        first = redact_text(text)
    second = redact_name_text(first.text)
    if not second.counts:
        return first
    return RedactionResult(second.text, dict(Counter(first.counts) + Counter(second.counts)))


def redact_meta(text: str, *, path: bool = False) -> str:
    """Just the redacted text of :func:`redact_meta_text`: the stored form of a path, branch or other name."""
    return redact_meta_text(text, path=path).text


def redact_name_text(text: str) -> RedactionResult:
    """Only :func:`~resolver.project.redact_name`, counted: for ids, which are random by nature (the full
    redactor's high-entropy test would take a message id for a secret), so only provider tokens are looked for."""
    named = redact_name(text)
    if named == text:
        return RedactionResult(text)
    return RedactionResult(named, dict(_kinds(named) - _kinds(text)))


def _kinds(text: str) -> Counter[str]:
    """How many markers of each kind ``text`` holds."""
    return Counter(_MARKER.findall(text))


def stored_path(path: object) -> str:
    """The form in which a transcript's path is stored: lake rows, ``_files.json``, cursors, queue items.

    Cursors are keyed by it too, not by the real path nor by a digest of it (a digest of a path holding a
    weak secret is a way to test guesses of it). It is as unique as the real path unless two transcripts'
    paths differ only inside a secret: those two share a cursor key, each then looks rotated to the other and
    is read again from its start (queue idempotency keys and uuid de-duplication keep that from storing
    anything twice); nothing is ever skipped.
    """
    return stored_path_text(str(path)).text


def stored_path_text(path: str) -> RedactionResult:
    """:func:`stored_path`, counted by kind (for the rescan's audit)."""
    return redact_meta_text(path, path=True)


def project_id_text(project_id: str) -> RedactionResult:
    """``project_id`` as :func:`~resolver.project.project_id_from_folder` stores it, counted by kind."""
    named = redact_name_text(project_id)
    if not named.counts:
        return RedactionResult(project_id)
    return RedactionResult(project_id_from_folder(project_id), named.counts)


_S = TypeVar("_S", str, str | None)


class _Fields:
    """Redacts field values and notes, per field, what each one held."""

    def __init__(self) -> None:
        self.counts: FieldCounts = {}

    def _note(self, name: str, result: RedactionResult) -> str:
        if result.counts:
            mine = Counter(self.counts.get(name, {}))
            mine.update(result.counts)
            self.counts[name] = dict(mine)
        return result.text

    def meta(self, value: _S, name: str, *, path: bool = False) -> _S:
        return self._note(name, redact_meta_text(value, path=path)) if value else value

    def ident(self, value: _S, name: str) -> _S:
        return self._note(name, redact_name_text(value)) if value else value

    def project(self, value: str) -> str:
        return self._note("project_id", project_id_text(value))


def redact_turn_metadata(turn: Turn) -> tuple[Turn, FieldCounts]:
    """``turn`` with every metadata field redacted (module doc), and what each field held; its text fields
    (``text``, tool inputs and outputs) are left to the caller, which redacts them as text."""
    f = _Fields()
    changes: dict[str, object] = {name: f.meta(getattr(turn, name), name, path=True) for name in PATH_FIELDS}
    changes.update({name: f.meta(getattr(turn, name), name) for name in META_FIELDS})
    changes.update({name: f.ident(getattr(turn, name), name) for name in ID_FIELDS})
    changes["uuids"] = tuple(f.ident(u, "uuids") for u in turn.uuids)
    changes["project_id"] = f.project(turn.project_id)
    changes["tool_uses"] = tuple(
        ToolUse(f.ident(u.id, "tool_uses.id"), f.ident(u.name, "tool_uses.name"), u.input_json) for u in turn.tool_uses
    )
    changes["tool_results"] = tuple(
        ToolResult(
            f.ident(r.tool_use_id, "tool_results.tool_use_id"),
            r.text,
            r.is_error,
            r.interrupted,
            f.ident(r.agent_id, "tool_results.agent_id"),
        )
        for r in turn.tool_results
    )
    if not f.counts:
        return turn, {}
    return replace(turn, **changes), f.counts  # type: ignore[arg-type]

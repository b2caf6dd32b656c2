"""A project's sessions as one timeline: every tool call placed in time, under the repository root it ran in.

Sessions arrive in any order; they are sorted by start time (then id), their streams (main session first,
then subagents) by first timestamp, and every call gets an order key ``(timestamp, session, stream, call)``
so "the latest use" means the same whatever order the caller passed. Paths are made relative to the
session's repository root: the cwd the session started in (the shortest such cwd when another session of
the project started in a parent folder), plus the git worktrees it worked in (``.claude/worktrees/<x>``,
``.worktrees/<x>`` under the root, and any ``git worktree add <path>``), which count as the same root.

This module reuses :func:`nous_assets.extract.rules.session.build_streams` (streams, calls paired with
their results, user messages that are not task prompts) and adds nothing project-specific.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from nous_assets.brief.item import Order, Proof, Source
from nous_assets.brief.runners import Use, classify, outcome
from nous_assets.brief.shell_split import Segment, segments
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules.session import Call, Stream, build_streams
from nous_assets.extract.rules.text import strip_noise

_NESTED_WORKTREE_RE = re.compile(r"^(?:\.claude/worktrees|\.worktrees)/[^/]+(?:/|$)")


@dataclass
class Step:
    """One tool call of a session, with where it ran and how it ended."""

    session: str
    order: Order
    call: Call
    cwd: str  # absolute directory of the call
    roots: tuple[str, ...]  # repository roots, longest first (worktrees, then the session root)
    sidechain: bool
    parts: list[tuple[Segment, Use | None]] = field(default_factory=list)  # a Bash call's commands
    cache: dict[str, object] = field(default_factory=dict, repr=False, compare=False)  # per-step derived values

    @property
    def ts(self) -> str:
        return self.order[0]

    @property
    def status(self) -> str:
        """``ok`` / ``fail`` / ``unknown``: a Bash call's exit code and check output, another tool's result.
        Computed on first use: reading outputs is the costly part, and most calls are never asked."""
        if "status" not in self.cache:
            if self.call.command:
                self.cache["status"] = outcome(self.call, [use for _, use in self.parts])
            elif self.call.result is not None:
                self.cache["status"] = "fail" if self.call.result.is_error else "ok"
            else:
                self.cache["status"] = "unknown"
        return self.cache["status"]  # type: ignore[return-value]

    @property
    def uuid(self) -> str:
        return self.call.turn.uuid

    @property
    def command(self) -> str:
        return self.call.command

    @property
    def output(self) -> str:
        return self.call.result.text if self.call.result is not None else ""

    @property
    def background(self) -> bool:
        return bool(self.call.inp.get("run_in_background")) or "running in background" in self.output[:300]

    def rel(self, path: str, *, sibling: bool = False) -> str | None:
        """``path`` relative to the repository root ('' for the root), or None when it lies outside it
        (``../name/…`` for a sibling repository when ``sibling``)."""
        return relative(path, self.cwd, self.roots, sibling=sibling)

    def where(self, seg: Segment) -> str | None:
        """The repository folder a command ran in ('' for the root; None: outside the repository)."""
        return self.rel(seg.cwd)

    def proof(self, what: str) -> Proof:
        turn = self.call.turn
        return Proof(self.session, self.uuid, self.order, what, (turn.source_path, turn.line_offsets, turn.uuids))


@dataclass(frozen=True)
class Said:
    """Something the user wrote (not a task prompt, not a subagent's brief)."""

    session: str
    uuid: str
    order: Order
    text: str
    source: Source = ("", (), ())

    def proof(self, what: str) -> Proof:
        return Proof(self.session, self.uuid, self.order, what, self.source)


@dataclass
class SessionView:
    """One session of the project: its root, its tool calls in time order, what the user said."""

    id: str
    start: str
    root: str
    steps: list[Step]
    said: list[Said]


def build_timeline(sessions: Sequence[SessionBatch]) -> list[SessionView]:
    """Every session of one project, sorted by start time, with its steps and user messages."""
    batches = sorted(sessions, key=lambda b: (b.started_at or "", b.session_id, len(b.turns)))
    starts = [_start_cwd(b) for b in batches]  # by position: one session may come as several batches (days)
    known = sorted({c for c in starts if c}, key=len)
    views = []
    for batch, start in zip(batches, starts, strict=True):
        root = next((k for k in known if start == k or start.startswith(k + "/")), start)
        views.append(_view(batch, root))
    return views


def relative(path: str, cwd: str, roots: Sequence[str], *, sibling: bool = False) -> str | None:
    """``path`` (absolute, or relative to ``cwd``) relative to the first root holding it, '' for a root itself;
    a worktree nested in the root (``.claude/worktrees/<x>/``) counts as the root. None outside the roots,
    except ``../<repo>/…`` for a sibling of the main root when ``sibling``."""
    if not path or path.startswith("~") or "$" in path:
        return None
    full = posixpath.normpath(posixpath.join(cwd or "/", path))
    for root in roots:
        if full == root:
            return ""
        if root and full.startswith(root.rstrip("/") + "/"):
            return _NESTED_WORKTREE_RE.sub("", full[len(root.rstrip("/")) + 1 :])
    parent = posixpath.dirname(roots[-1]) if roots and roots[-1] else ""
    if sibling and parent and full.startswith(parent + "/"):
        return "../" + full[len(parent) + 1 :]
    return None


def under(path: str, root: str) -> bool:
    """Whether repository path ``path`` is ``root`` or lies inside it."""
    return path == root or path.startswith(root.rstrip("/") + "/")


def removed(path: str, gone: set[str]) -> bool:
    """Whether ``path`` is, or lies inside, a path removed or moved away (``gone``)."""
    return any(under(path, g) for g in gone)


def _start_cwd(batch: SessionBatch) -> str:
    main = [t.cwd for t in batch.turns if t.cwd and not t.is_sidechain and not t.agent_id]
    cwds = main or [t.cwd for t in batch.turns if t.cwd]
    return posixpath.normpath(cwds[0]) if cwds else ""


def _view(batch: SessionBatch, root: str) -> SessionView:
    streams = sorted(build_streams(batch), key=_stream_key)
    start = batch.started_at or ""
    roots = tuple(sorted({root, *_worktrees(streams, root)}, key=len, reverse=True))
    steps: list[Step] = []
    said: list[Said] = []
    for si, stream in enumerate(streams):
        steps.extend(_step(batch.session_id, si, stream, call, start, roots) for call in stream.calls)
        said.extend(_said(batch.session_id, si, stream, start))
    steps.sort(key=lambda s: s.order)
    said.sort(key=lambda s: s.order)
    return SessionView(batch.session_id, start, root, steps, said)


def _stream_key(stream: Stream) -> tuple[bool, str, str, str]:
    first = stream.turns[0]
    stamp = next((t.timestamp for t in stream.turns if t.timestamp), "") or ""
    return (stream.sidechain, stamp, first.source_path, first.agent_id or "")


def _worktrees(streams: Sequence[Stream], root: str) -> set[str]:
    """Worktree folders the session created with ``git worktree add <path>`` (they hold the same repository)."""
    out: set[str] = set()
    for stream in streams:
        for call in stream.bash():
            if "worktree" not in call.command:
                continue
            for seg in segments(call.command, call.turn.cwd or root):
                words = list(seg.tokens)
                if words[:3] == ["git", "worktree", "add"]:
                    path = _worktree_path(words[3:])
                    if path and "$" not in path:
                        out.add(posixpath.normpath(posixpath.join(seg.cwd, path)))
    return out


def _worktree_path(args: list[str]) -> str:
    i = 0
    while i < len(args):
        if args[i] in ("-b", "-B", "--reason"):
            i += 2
        elif args[i].startswith("-"):
            i += 1
        else:
            return args[i]
    return ""


def _step(session: str, si: int, stream: Stream, call: Call, start: str, roots: tuple[str, ...]) -> Step:
    cwd = posixpath.normpath(call.turn.cwd or stream.cwd or roots[-1] or "/")
    order = (call.turn.timestamp or start, session, si, call.seq)
    step = Step(session, order, call, cwd, roots, stream.sidechain)
    if call.command:
        segs = [_localise(seg, roots) for seg in segments(call.command, cwd)]
        step.parts = [(seg, classify(seg)) for seg in segs]
    return step


def _localise(seg: Segment, roots: tuple[str, ...]) -> Segment:
    """Absolute paths inside the repository written relative to the command's folder (``/r/scripts/x.sh``
    → ``scripts/x.sh``), so the same command reads the same whoever typed the full path."""
    words = []
    for word in seg.tokens:
        inside = word.startswith("/") and relative(word, seg.cwd, roots) is not None
        words.append(posixpath.relpath(word, seg.cwd) if inside else word)
    return Segment(tuple(words), seg.cwd, seg.guarded, seg.text, seg.assigned)


def _said(session: str, si: int, stream: Stream, start: str) -> list[Said]:
    if stream.sidechain:
        return []
    out = []
    for pos in stream.user_positions:
        if pos in stream.task_positions:
            continue
        turn = stream.turns[pos]
        text = strip_noise(turn.text).strip()
        if text:
            order = (turn.timestamp or start, session, si, -1 - pos)
            out.append(Said(session, turn.uuid, order, text, (turn.source_path, turn.line_offsets, turn.uuids)))
    return out

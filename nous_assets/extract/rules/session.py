"""The session as the rules see it: streams of turns, tool calls paired with their results, user messages.

A batch holds one session (or one subagent) for one day. It is cut into *streams* (one per transcript
file and agent), and each stream knows its tool calls with their results and which of its user turns
are things the user said. Two kinds of user turns are not: the *opening task prompt* (the first thing
said in a main session, or a slash command's arguments, or an expanded command/plan prompt), which
says what to do once and must never come back as a standing rule, and queued copies of messages that
were also written as ordinary user records.

Rules produce :class:`Cand` (candidate learnings); :mod:`nous_assets.extract.rules.render` turns the
chosen ones into records.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from nous_assets.extract.base import SessionBatch
from nous_assets.extract.rules import shell
from nous_assets.extract.rules.text import I, loads, short_path, strip_noise
from nous_assets.turns import ToolResult, ToolUse, Turn

EDIT_TOOLS = frozenset({"Edit", "Write", "MultiEdit", "NotebookEdit", "str_replace_based_edit_tool", "create_file"})
TOOL_NAMES = frozenset({"Bash", "Edit", "Write", "MultiEdit", "NotebookEdit", "Read", "Grep", "Glob", "Task"})

_STANDING_RE = re.compile(
    r"\b(?:always|never|from now on|going forward|in the future|i prefer|don'?t ever|lately|i'?ve noticed|"
    r"you keep|you always|stop (?:doing|using|asking))\b",
    I,
)
_EXPANDED_PROMPT_RE = re.compile(
    r"^(?:#{1,3} |\*\*|<objective>|<command|base directory for this skill|you are |your task|# [A-Z])", I
)


@dataclass
class Call:
    """One tool call and, once seen, its result."""

    pos: int  # stream position of the assistant turn
    turn: Turn
    use: ToolUse
    inp: dict[str, Any]
    seq: int = 0  # order among the stream's calls (several calls share one assistant turn)
    result_pos: int | None = None
    result_turn: Turn | None = None
    result: ToolResult | None = None

    @property
    def name(self) -> str:
        return self.use.name

    @property
    def command(self) -> str:
        value = self.inp.get("command")
        return value if isinstance(value, str) and self.use.name == "Bash" else ""

    @property
    def path(self) -> str:
        for key in ("file_path", "path", "notebook_path"):
            value = self.inp.get(key)
            if isinstance(value, str) and value:
                return value
        return ""

    @property
    def ok(self) -> bool:
        return self.result is not None and not self.result.is_error

    def turns(self) -> list[Turn]:
        return [self.turn] + ([self.result_turn] if self.result_turn is not None else [])


@dataclass
class Stream:
    """One transcript file's turns for one agent (the main session or a subagent), in file order."""

    turns: list[Turn]
    gpos: list[int]  # batch index of each turn
    sidechain: bool
    calls: list[Call] = field(default_factory=list)
    by_use: dict[str, Call] = field(default_factory=dict)
    user_positions: list[int] = field(default_factory=list)  # things the user said (queued ones included)
    task_positions: set[int] = field(default_factory=set)  # of those: task prompts, never mined as rules
    _status: dict[int, str] = field(default_factory=dict)

    @property
    def cwd(self) -> str | None:
        return next((t.cwd for t in self.turns if t.cwd), None)

    def status(self, call: Call) -> str:
        """``ok`` / ``fail`` / ``unknown`` of a Bash call (cached: several rules ask)."""
        key = id(call)
        if key not in self._status:
            self._status[key] = shell.status(call)
        return self._status[key]

    def bash(self) -> list[Call]:
        return [c for c in self.calls if c.command]

    def later_edits(self, call: Call) -> list[Call]:
        """The successful edits of ``call``'s file after it, in order."""
        return [c for c in self.calls if c.seq > call.seq and c.path == call.path and c.name in EDIT_TOOLS and c.ok]

    def assistant_texts(self, start: int = 0, end: int | None = None) -> list[tuple[int, Turn]]:
        """(position, turn) of assistant turns with text between two positions."""
        stop = len(self.turns) if end is None else end
        return [
            (p, self.turns[p])
            for p in range(max(0, start), stop)
            if self.turns[p].role == "assistant" and self.turns[p].text.strip()
        ]


@dataclass
class Cand:
    """A candidate learning: what a rule found, before selection and rendering."""

    kind: str
    content: str
    anchor: Turn
    pos: int  # batch index of the anchor
    sub: int
    turns: list[Turn]
    concept_text: str = ""
    hints: list[str] = field(default_factory=list)
    score: float = 0.0
    weakens: str | None = None
    temporal: str = "medium"
    scope: str = "project"
    applies_when: str = ""
    source_ref: str = ""
    slot: str | None = None
    domain: str | None = None
    families: frozenset[str] = frozenset()
    basis: str = "prose"  # what the candidate rests on (:mod:`~nous_assets.extract.rules.evidence`)
    status: str = ""  # set by evidence.assess: the basis's status, then what the rest of the session showed
    evidence: list[dict[str, str]] = field(default_factory=list)


def cand(
    kind: str,
    content: str,
    anchor: Turn,
    pos: int,
    turns: Sequence[Turn],
    concept_text: str = "",
    *,
    sub: int = 0,
    temporal: str = "medium",
    scope: str = "project",
    applies_when: str = "",
    source_ref: str = "",
    score: float = 1.0,
    basis: str,
) -> Cand:
    """A candidate; ``basis`` says what it rests on (the user's words, a passing check, a file, an edit, the
    assistant's prose, a compaction summary), which decides its status (:mod:`.evidence`)."""
    return Cand(
        kind, content, anchor, pos, sub, list(turns), concept_text or content, temporal=temporal, scope=scope,
        applies_when=applies_when, source_ref=source_ref, score=score, basis=basis,
    )  # fmt: skip


# ---------------------------------------------------------------------------------------------------------
# user turns


def takes_out(edits: Sequence[Call], holds: Callable[[str], bool]) -> bool:
    """Whether one of ``edits`` took out of its file what ``holds`` finds in a text: a whole rewrite without it, or
    an edit whose old text held it and whose new text does not (the file no longer says it)."""
    for call in edits:
        inp = call.inp
        before = str(inp.get("old_string") or "") if "content" not in inp else ""
        after = str(inp.get("content") or inp.get("new_string") or "")
        if isinstance(inp.get("edits"), list):
            before = "\n".join(str(e.get("old_string") or "") for e in inp["edits"] if isinstance(e, dict))
            after = "\n".join(str(e.get("new_string") or "") for e in inp["edits"] if isinstance(e, dict))
        if ("content" in inp and not holds(after)) or (before and holds(before) and not holds(after)):
            return True
    return False


def is_user_text(t: Turn) -> bool:
    """A user turn that carries typed text (not meta, summary, interrupt marker or notification)."""
    if t.role != "user" or t.kind != "message" or t.is_meta or t.is_compact_summary:
        return False
    text = t.text.lstrip()
    return bool(text) and not text.startswith(("[Request interrupted", "<task-notification", "<local-command"))


def is_interrupt(t: Turn) -> bool:
    return t.role == "user" and t.text.lstrip().startswith("[Request interrupted")


def is_task_prompt(text: str, *, opening: bool) -> bool:
    """What to do once, not how to work: the session's opening request, an expanded command or plan prompt.

    The opening message of a session states its task ("Implement X", "Work on bead Y. Run …"); it is
    kept out of standing rules unless it is itself phrased as one ("always …", "from now on …").
    Expanded slash-command and plan prompts are long structured documents, wherever they appear.
    """
    body = strip_noise(text).strip()
    if not body:
        return True
    if "<command-args>" in text or "<command-name>" in text:
        return True
    if len(body) > 1200 and (_EXPANDED_PROMPT_RE.match(body) or body.count("\n#") >= 2):
        return True
    if not opening:
        return bool(re.match(r"^implement the following plan\b", body, I))
    return not _STANDING_RE.search(body)


# ---------------------------------------------------------------------------------------------------------
# building streams


def build_streams(batch: SessionBatch) -> list[Stream]:
    """Cut the batch into streams and pair every tool call with its result; mark user messages."""
    groups: dict[tuple[str, str], Stream] = {}
    for gi, t in enumerate(batch.turns):
        agent = t.agent_id or ""
        if agent.startswith("acompact"):
            continue  # compaction side-calls repeat the session; they are not the user's
        key = (t.source_path, agent)
        stream = groups.get(key)
        if stream is None:
            stream = groups[key] = Stream([], [], sidechain=bool(agent) or t.is_sidechain)
        stream.sidechain = stream.sidechain or t.is_sidechain
        stream.turns.append(t)
        stream.gpos.append(gi)
    for stream in groups.values():
        _pair_calls(stream)
        _mark_users(stream)
    return list(groups.values())


def _pair_calls(stream: Stream) -> None:
    for pos, t in enumerate(stream.turns):
        if t.role == "assistant":
            for use in t.tool_uses:
                call = Call(pos, t, use, loads(use.input_json), len(stream.calls))
                stream.calls.append(call)
                if use.id:
                    stream.by_use.setdefault(use.id, call)
        elif t.role == "user" and t.tool_results:
            for tr in t.tool_results:
                call = stream.by_use.get(tr.tool_use_id)
                if call is not None and call.result is None:
                    call.result, call.result_turn, call.result_pos = tr, t, pos


def _mark_users(stream: Stream) -> None:
    texts = [(p, t) for p, t in enumerate(stream.turns) if is_user_text(t)]
    seen_real = False
    for i, (pos, t) in enumerate(texts):
        if t.subtype == "queued":
            later = [u for _, u in texts[i + 1 : i + 4] if u.subtype != "queued"]
            if any(" ".join(u.text.split()) == " ".join(t.text.split()) for u in later):
                continue  # delivered later as an ordinary user record: count it once
        stream.user_positions.append(pos)
        if stream.sidechain:
            stream.task_positions.add(pos)  # a subagent's prompt is Claude's brief, not the user's words
            continue
        opening = not seen_real and _starts_session(stream, pos)
        if is_task_prompt(t.text, opening=opening):
            stream.task_positions.add(pos)
        seen_real = True


OPENING_BYTES = 100_000  # the opening prompt sits in a file's first records (after snapshots and hook output)


def _starts_session(stream: Stream, pos: int) -> bool:
    """True when this user turn opens the session: nothing said before it, near the start of its file.

    A batch holds one day of a session, so the first message of a later day is not an opening; neither is
    the first message after a compaction summary or an old-style resumed conversation's title.
    """
    turn = stream.turns[pos]
    if turn.subtype == "queued" or turn.byte_start > OPENING_BYTES:
        return False
    before = stream.turns[:pos]
    return not any(
        t.role == "assistant" or t.is_compact_summary or t.kind in ("compact_summary", "summary") for t in before
    )


# ---------------------------------------------------------------------------------------------------------
# describing what Claude did


def describe_uses(uses: Sequence[ToolUse], cwd: str | None) -> str:
    """'edit a.py and run `pytest`' — what an assistant turn's tool calls did, briefly."""
    edits: list[str] = []
    cmds: list[str] = []
    other: list[str] = []
    for u in uses:
        inp = loads(u.input_json)
        if u.name in EDIT_TOOLS:
            p = inp.get("file_path") or inp.get("path") or inp.get("notebook_path")
            if isinstance(p, str):
                sp = short_path(p, cwd)
                if sp not in edits:
                    edits.append(sp)
        elif u.name == "Bash":
            c = inp.get("command")
            if isinstance(c, str):
                cmds.append(f"`{shell.clean_cmd(c, cwd, 70)}`")
        elif u.name in ("Task", "Agent"):
            other.append("delegate to a subagent")
        elif u.name in ("WebFetch", "WebSearch"):
            other.append("search the web")
    parts = []
    if edits:
        parts.append("edit " + ", ".join(edits[:2]))
    if cmds:
        parts.append("run " + ", ".join(cmds[:1]))
    parts.extend(other[:1])
    return " and ".join(parts)


def repo_name(cwd: str | None) -> str:
    """The repository a cwd belongs to, by name (worktree folders name their repository)."""
    if not cwd:
        return "repo"
    path = cwd.rstrip("/")
    m = re.search(r"/([^/]+?)[-_.]worktrees?/[^/]+$|/([^/]+)/\.(?:worktrees|claude/worktrees)/[^/]+$", path)
    if m:
        return m.group(1) or m.group(2)
    return path.rsplit("/", 1)[-1] or "repo"

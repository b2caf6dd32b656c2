"""`nous bench replay`: does the injected packet anticipate what the next session needs? No labels needed.

The transcripts are replayed in the order their sessions started, in one scratch home and data dir, with
nothing mocked: before session *k* starts, the scratch ``projects/`` tree holds exactly the sessions that
*ended* before *k*'s start (laid out as Claude Code does, by :func:`~nous_assets.evaluate.memories.lay_out`,
subagents with their session, mtimes kept), ``nous backfill`` has taken their days (a real Dagster run; it is
incremental, so each run only reads the new bytes; skipped when nothing new ended), and the installed
SessionStart hook is run for *k*'s cwd. Its ``additionalContext`` is "the packet as it would have been at
that session's start". After the last session every remaining session is ingested too, only to map each
session to the project the pipeline gives its cwd (the hook's own lookup); the packets are already taken.

What session *k* needed is read from its own transcript (main session and subagents) and counts only when
an *earlier* session of the same project (one that ended before *k* started: what the store could know)
showed the same thing, so a need is something a memory could have taught:

* **commands** — Bash commands that succeeded (:func:`shell.status` ``ok``), by normalised form
  (:mod:`nous_assets.extract.rules.forms`: program plus subcommand or script, e.g. ``mise run test:ci``,
  ``uv run pytest``, ``gh pr create``, ``bash scripts/x.sh``; each ``&&``/``;``/``|`` stage counts; exploration,
  version-control porcelain, housekeeping and inline code are no needs: every session runs those).
* **files** — files edited successfully (Edit/Write/MultiEdit/NotebookEdit), relative to the session cwd
  when inside it (:func:`short_path`), so worktrees of one repository compare.
* **errors** — failed tool calls (Bash with status ``fail``; any other tool result with ``is_error``), bar the
  user's rejections and interrupts and Claude Code's refusals of how a tool was called (``<tool_use_error>``:
  file not read yet, sibling call failed), by signature: the telling line (:func:`shell.error_line`, the
  exception line of a traceback) with timestamps, URLs, quoted values, paths, uuids, hex ids, line:col and
  numbers stripped, lowercased; two content words at least.
* **corrections** — what the user said to correct Claude (``no, …``, ``don't …``, ``stop …``, ``that's not
  …``, ``actually …``, ``instead …``, ``you should have …``, ``why did you …``, ``I told you …``), the opening
  prompt and slash-command/expanded prompts excluded (:func:`session.is_task_prompt`), repeating an earlier
  correction (Jaccard of content words ≥ 0.3).

Figures per scored session (a session with an earlier session of its project), summed over sessions (micro):

* **coverage** — needs the packet mentions / needs. A command is mentioned when its normalised form is in
  the packet (case-insensitive) or equals the normalised form of a backticked span; a file when its relative
  path is, or its basename when specific (≥ 6 characters, an extension); an error when one packet line holds
  ≥ 60 % of its signature's content words; a correction when one packet line holds ≥ 40 % of its words.
* **uptake** — packet bullet lines (``- …``) that name something the session used (a backticked command
  it ran OK, normalised and filtered as above; a path it edited or read; an error it hit, by the coverage
  rule) / bullet lines.
* **mean packet characters**.

The same figures are given for two packets built without Nous: an empty one, and the *last session's
commands*: one bullet per distinct normalised successful command of the project's most recent session that
ended before *k* (``- `cmd```). The JSON report (``replay-<stamp>.json`` in ``--out-dir``) holds every
session's needs, what each packet covered, the packets and the baseline packet. The last line printed is
``replay coverage: 0.xxx uptake: 0.xxx`` (Nous's micro figures).
"""

from __future__ import annotations

import json
import posixpath
import re
import shutil
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from nous_assets.capture.parser import parse_file
from nous_assets.errors import NousError
from nous_assets.evaluate.memories import (
    Score,
    _nous,
    _prepare_workdir,
    _project_mapper,
    activity_span,
    first_cwd,
    lay_out,
    run_hook,
    scratch_env,
    session_start_command,
)
from nous_assets.extract.base import SessionBatch
from nous_assets.extract.concepts import STOP_WORDS
from nous_assets.extract.rules import shell
from nous_assets.extract.rules.forms import EXTENSION_RE, command_forms
from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Stream, build_streams, repo_name
from nous_assets.extract.rules.text import short_path, strip_noise
from nous_assets.turns import Turn

NEED_TYPES = ("commands", "files", "errors", "corrections")
SYSTEMS = ("nous", "last_session", "empty")
_BACKTICK_RE = re.compile(r"`([^`\n]+)`")
_PATH_TOKEN_RE = re.compile(r"[\w.@~/+-]+")
_WORD_RE = re.compile(r"[a-z][a-z']{2,}")
_CORRECTION_RE = re.compile(
    r"(?:^|[.!?\n]\s*)(?:no|nope|stop|actually|instead)\b[\s,.!:—-]"
    r"|(?:^|[.!?\n]\s*|\bplease\s+)(?:don'?t|do not|never)\b"
    r"|\bthat'?s not\b|\bthat is not\b|\bnot what i\b|\byou should(?:'ve| have)\b|\bwhy did you\b"
    r"|\bi told you\b|\bi said\b|\byou didn'?t\b|\byou forgot\b|\bshould(?:n'?t| not) have\b",
    re.IGNORECASE,
)
CORRECTION_MAX_CHARS = 1500  # a longer user message is a brief or a paste, not a correction
REPEAT_JACCARD = 0.3
ERROR_LINE_SHARE = 0.6
CORRECTION_LINE_SHARE = 0.4
MIN_BASENAME = 6


# ---------------------------------------------------------------- sessions


@dataclass(frozen=True)
class Session:
    """One main-session transcript (with its subagents) and when it ran."""

    key: str  # its path relative to the transcripts folder: unique, unlike session ids
    path: Path
    subagents: tuple[Path, ...]
    cwd: str
    start: datetime
    end: datetime

    @property
    def id8(self) -> str:
        return self.path.stem[:8]

    def files(self) -> tuple[Path, ...]:
        return (self.path, *self.subagents)


def _when(value: str) -> datetime:
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def session_turns(path: Path, subagents: Iterable[Path] = ()) -> list[Turn]:
    """The parsed turns of a session's main file, then of its subagents (the capture parser's reading)."""
    turns: list[Turn] = []
    for file in (path, *subagents):
        turns.extend(parse_file(file, "replay", final=True).turns)
    return turns


def find_sessions(transcripts: Path) -> tuple[list[Session], list[str]]:
    """Main sessions under ``transcripts`` in start order, and the files left out (with why).

    A main session is a ``*.jsonl`` not under ``subagents/``; its ``<stem>/subagents/*.jsonl`` belong to it.
    Its cwd is :func:`first_cwd` (else ``/<source folder>``, the folder :func:`lay_out` files it under); its
    start and end are its first and last record timestamps, subagents included. A file without timestamps
    cannot be placed in time, and subagents without their main file (or a top-level file holding sidechain
    records only) are no session: they are left out.
    """
    files = sorted(p for p in transcripts.rglob("*.jsonl") if p.is_file())
    mains = [p for p in files if p.parent.name != "subagents"]
    stems = {p.with_suffix("") for p in mains}
    skipped = [f"{p.relative_to(transcripts)}: subagent without its session file"
               for p in files if p.parent.name == "subagents" and p.parent.parent not in stems]  # fmt: skip
    sessions = []
    for path in mains:
        subagents = tuple(sorted((path.with_suffix("") / "subagents").glob("*.jsonl")))
        turns = session_turns(path, subagents)
        stamps = [t.timestamp for t in turns if t.timestamp]
        rel = str(path.relative_to(transcripts))
        if not stamps:
            skipped.append(f"{rel}: no timestamped records")
            continue
        if all(t.is_sidechain for t in turns):
            skipped.append(f"{rel}: sidechain records only (a subagent's transcript, not a session)")
            continue
        cwd = first_cwd(path) or "/" + (Path(rel).parts[0] if len(Path(rel).parts) > 1 else "unknown")
        sessions.append(Session(rel, path, subagents, cwd, _when(min(stamps)), _when(max(stamps))))
    sessions.sort(key=lambda s: (s.start, s.end, s.key))
    return sessions, skipped


def ended_before(sessions: Sequence[Session], session: Session) -> list[Session]:
    """The sessions whose transcripts were complete when ``session`` started: what the store could hold."""
    return [s for s in sessions if s.end < session.start]


# ---------------------------------------------------------------- normalisation


_EXCEPTION_RE = re.compile(r"^[\w.]*(?:Error|Exception)\b.*$", re.M)
_TIMESTAMP_RE = re.compile(r"\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2})?(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?")
_URL_RE = re.compile(r"\b[a-z][\w+.-]*://\S+", re.IGNORECASE)
_UUID_RE = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.IGNORECASE)
_HEX_RE = re.compile(r"\b0x[0-9a-f]+\b|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{6,}\b", re.IGNORECASE)
_QUOTED_RE = re.compile(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`|‘[^’\n]*’|“[^”\n]*”")
_PATHLIKE_RE = re.compile(r"(?:[\w.@~+-]*/[\w.@~+/-]*|\b[\w-]+\.[A-Za-z][A-Za-z0-9]{0,5}\b)(?::\d+)*")
_LINECOL_RE = re.compile(r":\d+(?::\d+)?\b")


def error_signature(text: str) -> str:
    """The telling error line of a failure output, with what varies between occurrences stripped."""
    line = shell.error_line(text or "")
    if line.startswith("Traceback"):  # the exception is the telling line (a dotted name error_line passes by)
        line = next((m for m in reversed(_EXCEPTION_RE.findall(text)) if m), line)
    line = _TIMESTAMP_RE.sub(" ", line)
    line = _URL_RE.sub(" ", line)
    line = _UUID_RE.sub(" ", line)
    line = _QUOTED_RE.sub(" ", line)
    line = _PATHLIKE_RE.sub(" ", line)
    line = _LINECOL_RE.sub(" ", line)
    line = _HEX_RE.sub(" ", line)
    line = re.sub(r"\d+", " ", line).lower()
    line = re.sub(r"[^\w\s:()-]+", " ", line)
    return " ".join(line.split()).strip(" :-")


def content_words(text: str) -> set[str]:
    """Lowercased words of three letters or more, common words out (the concept extractor's stop list)."""
    return {w.strip("'") for w in _WORD_RE.findall(text.lower())} - STOP_WORDS - {""}


def is_correction(text: str) -> bool:
    """Whether a user message (not a task prompt) corrects what Claude did or said."""
    body = strip_noise(text).strip()
    return bool(body) and len(body) <= CORRECTION_MAX_CHARS and bool(_CORRECTION_RE.search(body))


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


# ---------------------------------------------------------------- what a session did


@dataclass(frozen=True)
class Facts:
    """What one session did, normalised: the raw material of its needs and of uptake."""

    commands: tuple[str, ...] = ()  # normalised successful commands, in first-use order
    edited: frozenset[str] = frozenset()
    read: frozenset[str] = frozenset()
    errors: tuple[str, ...] = ()  # signatures
    corrections: tuple[str, ...] = ()


def session_facts(session: Session) -> Facts:
    """Read ``session``'s transcript (main and subagents) into :class:`Facts`."""
    return facts_of(session_turns(session.path, session.subagents), session.cwd)


def facts_of(turns: Sequence[Turn], cwd: str | None) -> Facts:
    """Commands, edits, reads, errors and corrections of a session's turns (streams as the rules see them)."""
    seen = _Seen()
    for stream in build_streams(SessionBatch("replay", "replay", "", list(turns))):
        for call in stream.calls:
            seen.take(stream, call, cwd)
        if not stream.sidechain:
            seen.corrections.update(dict.fromkeys(_corrections(stream)))
    return Facts(tuple(seen.commands), frozenset(seen.edited), frozenset(seen.read), tuple(seen.errors),
                 tuple(seen.corrections))  # fmt: skip


@dataclass
class _Seen:
    """What :func:`facts_of` collects, in first-seen order (dicts as ordered sets)."""

    commands: dict[str, None] = field(default_factory=dict)
    edited: set[str] = field(default_factory=set)
    read: set[str] = field(default_factory=set)
    errors: dict[str, None] = field(default_factory=dict)
    corrections: dict[str, None] = field(default_factory=dict)

    def take(self, stream: Stream, call: Call, cwd: str | None) -> None:
        result = call.result
        if call.command:
            status = stream.status(call)
            if status == "ok":
                self.commands.update(dict.fromkeys(command_forms(call.command, cwd)))
            elif status == "fail" and not _refused(result.text):
                self.error(result.text)
        elif result is None:
            return
        elif result.is_error:
            if not result.interrupted and not _refused(result.text):
                self.error(result.text)
        elif call.path and call.name in EDIT_TOOLS:
            self.edited.add(short_path(call.path, cwd))
        elif call.path and call.name in ("Read", "NotebookRead"):
            self.read.add(short_path(call.path, cwd))

    def error(self, text: str) -> None:
        signature = error_signature(text)
        if len(content_words(signature)) >= 2:  # "error: failed" names nothing
            self.errors[signature] = None


def _corrections(stream: Stream) -> list[str]:
    """The user's corrections in a main stream: neither its opening message (the task, however phrased) nor a
    task prompt (:func:`session.is_task_prompt`: slash commands, expanded prompts)."""
    found = []
    for pos in stream.user_positions[1:]:
        text = stream.turns[pos].text
        if pos not in stream.task_positions and is_correction(text) and len(content_words(text)) >= 2:
            found.append(" ".join(strip_noise(text).split()))
    return found


def _refused(text: str) -> bool:
    """A result that is no error of the project: the user rejected or interrupted the call, or Claude Code
    refused it for how it was made (``<tool_use_error>``: file not read yet, sibling call failed, bad input),
    as :func:`shell.status` holds them 'unknown'."""
    head = (text or "")[:400].lstrip()
    return (
        head.startswith(("[Request interrupted", "<tool_use_error>"))
        or "doesn't want to proceed" in head
        or "doesn't want to take this action" in head
    )


# ---------------------------------------------------------------- needs


@dataclass(frozen=True)
class Needs:
    """What session k needed that an earlier session of its project had already shown."""

    commands: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()
    corrections: tuple[str, ...] = ()

    def by_type(self) -> dict[str, tuple[str, ...]]:
        return {kind: getattr(self, kind) for kind in NEED_TYPES}

    @property
    def total(self) -> int:
        return sum(len(v) for v in self.by_type().values())


def needs_of(current: Facts, earlier: Sequence[Facts]) -> Needs:
    """The repeated part of ``current``: commands, edited files and error signatures an earlier session also
    had, corrections close (Jaccard) to an earlier one."""
    past_commands = {c for f in earlier for c in f.commands}
    past_files = {p for f in earlier for p in f.edited}
    past_errors = {e for f in earlier for e in f.errors}
    past_corrections = [content_words(c) for f in earlier for c in f.corrections]
    return Needs(
        tuple(c for c in current.commands if c in past_commands),
        tuple(sorted(p for p in current.edited if p in past_files)),
        tuple(e for e in current.errors if e in past_errors),
        tuple(c for c in current.corrections
              if any(jaccard(content_words(c), past) >= REPEAT_JACCARD for past in past_corrections)),
    )  # fmt: skip


def baseline_packet(last: Facts | None) -> str:
    """The packet a user could write without Nous: the last session's successful commands, one per bullet."""
    return "\n".join(f"- `{c}`" for c in last.commands) if last else ""


# ---------------------------------------------------------------- coverage and uptake


def bullet_lines(packet: str) -> list[str]:
    return [line for line in packet.splitlines() if line.lstrip().startswith("- ")]


def _span_forms(text: str) -> set[str]:
    return {f.lower() for span in _BACKTICK_RE.findall(text) for f in command_forms(span)}


def _share(words: set[str], line: str) -> float:
    return len(words & content_words(line)) / len(words) if words else 0.0


def _specific_basename(path: str) -> str | None:
    name = posixpath.basename(path.rstrip("/"))
    return name if len(name) >= MIN_BASENAME and EXTENSION_RE.search(name) else None


def mentions(kind: str, need: str, packet: str) -> bool:
    """Whether ``packet`` mentions ``need`` of type ``kind`` (the coverage rules of the module doc)."""
    text = packet.lower()
    if kind == "commands":
        return need.lower() in text or need.lower() in _span_forms(packet)
    if kind == "files":
        name = _specific_basename(need)
        return need.lower() in text or bool(name and re.search(rf"(?<![\w.-]){re.escape(name.lower())}(?![\w-])", text))
    share = ERROR_LINE_SHARE if kind == "errors" else CORRECTION_LINE_SHARE
    words = content_words(need)
    return any(_share(words, line) >= share for line in packet.splitlines())


def covered(needs: Needs, packet: str) -> dict[str, list[str]]:
    """The needs of each type that ``packet`` mentions."""
    return {kind: [n for n in items if mentions(kind, n, packet)] for kind, items in needs.by_type().items()}


def line_used(line: str, facts: Facts) -> bool:
    """Whether a packet line names something the session used: a command it ran OK, a path it edited or read,
    an error it hit."""
    commands = {c.lower() for c in facts.commands}
    if _span_forms(line) & commands:
        return True
    paths = facts.edited | facts.read
    if any(_path_hit(token, paths) for token in _PATH_TOKEN_RE.findall(line)):
        return True
    return any(_share(content_words(e), line) >= ERROR_LINE_SHARE for e in facts.errors)


def _path_hit(token: str, paths: frozenset[str]) -> bool:
    token = token.rstrip(".,:;-").removeprefix("./")
    if "/" in token:
        return any(p == token or p.endswith("/" + token) or token.endswith("/" + p) for p in paths)
    name = _specific_basename(token)
    return bool(name) and any(posixpath.basename(p) == name for p in paths)


def used_lines(packet: str, facts: Facts) -> list[str]:
    return [line for line in bullet_lines(packet) if line_used(line, facts)]


# ---------------------------------------------------------------- the simulation


class Replayer:
    """One scratch install that sessions are added to as they end, and the packets its hook prints."""

    def __init__(self, transcripts: Path, workdir: Path, log: Callable[[str], None]) -> None:
        self.transcripts, self.workdir = transcripts, workdir
        self.log = lambda m: log(m.replace("bench memories:", "replay:", 1))
        self.projects = workdir / "home" / ".claude" / "projects"
        self.env = scratch_env(workdir)
        self.env["NOUS_PARTITION_START"] = activity_span(transcripts)[0]
        self.laid: set[str] = set()
        self.backfills: list[dict[str, Any]] = []
        _nous(["hooks", "install"], self.env, self.log)
        self.command = session_start_command(Path(self.env["CLAUDE_CONFIG_DIR"]) / "settings.json")

    def add(self, sessions: Sequence[Session], why: str) -> None:
        """Lay ``sessions`` out (those not yet there) and backfill their days; nothing to do, nothing run."""
        new = [s for s in sessions if s.key not in self.laid]
        if not new:
            return
        staging = self.workdir / "staging" / f"{len(self.backfills):03d}"
        for session in new:
            for file in session.files():
                target = staging / file.relative_to(self.transcripts)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.symlink_to(file.resolve())
        lay_out(staging, self.projects)
        first, last = activity_span(staging)
        started = time.monotonic()
        _nous(["backfill", "--from", first, "--to", last], self.env, self.log)
        self.laid.update(s.key for s in new)
        self.backfills.append({"why": why, "sessions": [s.key for s in new], "days": [first, last],
                               "seconds": round(time.monotonic() - started, 1)})  # fmt: skip

    def packet(self, session: Session, number: int) -> str:
        return run_hook(self.command, session.cwd, self.env, self.workdir, f"bench-replay-{number}")

    def project_names(self, cwds: Iterable[str]) -> dict[str, str]:
        """The project the pipeline gives each cwd: the hook's own lookup over the scratch store."""
        from nous_assets.store.db import open_db

        conn = open_db(Path(self.env["NOUS_DATA_DIR"]) / "cortex.db")
        try:
            project_of = _project_mapper(conn)
            return {cwd: project_of(cwd, is_cwd=True) for cwd in cwds}
        finally:
            conn.close()


def simulate(sessions: Sequence[Session], replayer: Replayer, log: Callable[[str], None]) -> dict[str, str]:
    """The packet the installed hook prints at each session's start, the store holding what had ended."""
    packets: dict[str, str] = {}
    for number, session in enumerate(sessions, 1):
        replayer.add(ended_before(sessions, session), f"before {session.key}")
        packets[session.key] = replayer.packet(session, number)
        log(f"replay: session {number}/{len(sessions)} {repo_name(session.cwd)} {session.id8}: "
            f"packet {len(packets[session.key]):,} chars")  # fmt: skip
    return packets


# ---------------------------------------------------------------- scoring


@dataclass
class Tally:
    """Coverage (overall and per need type), uptake and packet sizes of one packet source."""

    coverage: Score = field(default_factory=Score)
    by_type: dict[str, Score] = field(default_factory=lambda: {k: Score() for k in NEED_TYPES})
    uptake: Score = field(default_factory=Score)
    chars: list[int] = field(default_factory=list)

    def add(self, needs: Needs, hits: dict[str, list[str]], used: int, lines: int, chars: int) -> None:
        for kind, items in needs.by_type().items():
            for item in items:
                hit = item in hits[kind]
                self.coverage.add(hit)
                self.by_type[kind].add(hit)
        self.uptake.hits += used
        self.uptake.total += lines
        self.chars.append(chars)

    def as_dict(self) -> dict[str, Any]:
        return {"coverage": self.coverage.as_dict(), "uptake": self.uptake.as_dict(),
                "by_type": {k: v.as_dict() for k, v in self.by_type.items()},
                "mean_packet_chars": round(statistics.fmean(self.chars), 1) if self.chars else 0.0}  # fmt: skip


def score_session(needs: Needs, facts: Facts, packets: dict[str, str]) -> dict[str, Any]:
    """What each packet source covered of ``needs`` and how many of its lines ``facts`` used."""
    out: dict[str, Any] = {}
    for system, packet in packets.items():
        used = used_lines(packet, facts)
        out[system] = {"covered": covered(needs, packet), "used_lines": used, "lines": len(bullet_lines(packet)),
                       "chars": len(packet)}  # fmt: skip
    return out


def score_all(
    sessions: Sequence[Session], facts: dict[str, Facts], packets: dict[str, str], project_of: Callable[[str], str]
) -> dict[str, Any]:
    """Every session's needs and outcomes, and the micro totals overall and per project."""
    project = {s.key: project_of(s.cwd) for s in sessions}
    totals = {system: Tally() for system in SYSTEMS}
    per_project: dict[str, dict[str, Any]] = defaultdict(
        lambda: {"sessions": 0, "scored": 0, "needs": dict.fromkeys(NEED_TYPES, 0),
                 "tally": {system: Tally() for system in SYSTEMS}}
    )  # fmt: skip
    records = []
    for session in sessions:
        earlier = [s for s in ended_before(sessions, session) if project[s.key] == project[session.key]]
        row = per_project[project[session.key]]
        row["sessions"] += 1
        record: dict[str, Any] = {
            "key": session.key, "id": session.path.stem, "cwd": session.cwd, "project": project[session.key],
            "start": session.start.isoformat(), "end": session.end.isoformat(),
            "earlier": [s.key for s in earlier], "scored": bool(earlier), "packet": packets.get(session.key, ""),
        }  # fmt: skip
        records.append(record)
        if not earlier:
            continue
        last = max(earlier, key=lambda s: s.end)
        needs = needs_of(facts[session.key], [facts[s.key] for s in earlier])
        sources = {"nous": record["packet"], "last_session": baseline_packet(facts[last.key]), "empty": ""}
        outcome = score_session(needs, facts[session.key], sources)
        record.update({"needs": {k: list(v) for k, v in needs.by_type().items()}, "need_count": needs.total,
                       "baseline_session": last.key, "baseline_packet": sources["last_session"],
                       "outcome": outcome})  # fmt: skip
        row["scored"] += 1
        for kind, items in needs.by_type().items():
            row["needs"][kind] += len(items)
        for system in SYSTEMS:
            o = outcome[system]
            for tally in (totals[system], row["tally"][system]):
                tally.add(needs, o["covered"], len(o["used_lines"]), o["lines"], o["chars"])
    projects = {name: {"sessions": r["sessions"], "scored": r["scored"], "needs": r["needs"],
                       **{system: r["tally"][system].as_dict() for system in SYSTEMS}}
                for name, r in sorted(per_project.items())}  # fmt: skip
    return {"sessions": records, "projects": projects, "totals": {s: totals[s].as_dict() for s in SYSTEMS}}


# ---------------------------------------------------------------- the benchmark


def run(
    transcripts: Path,
    out_dir: Path,
    *,
    workdir: Path | None = None,
    log: Callable[[str], None] = lambda m: print(m, file=sys.stderr),
) -> dict[str, Any]:
    """Replay, score, print the figures (last line: Nous's coverage and uptake) and save the JSON report."""
    if not transcripts.is_dir():
        raise NousError(f"no such transcripts folder: {transcripts}")
    sessions, skipped = find_sessions(transcripts)
    if not sessions:
        raise NousError(f"no timestamped session transcripts under {transcripts}")
    workdir, temporary = _prepare_workdir(workdir)
    started = time.monotonic()
    try:
        report = _run(transcripts, sessions, skipped, workdir, log)
    finally:
        if temporary:
            shutil.rmtree(workdir, ignore_errors=True)
    report["seconds"] = round(time.monotonic() - started, 1)
    out_dir.mkdir(parents=True, exist_ok=True)
    out = out_dir / f"replay-{time.strftime('%Y%m%d-%H%M%S')}.json"
    out.write_text(json.dumps(report, indent=2, ensure_ascii=False), encoding="utf-8")
    print_report(report)
    print(f"saved {out}")
    nous = report["totals"]["nous"]
    print(f"replay coverage: {nous['coverage']['rate']:.3f} uptake: {nous['uptake']['rate']:.3f}")
    return report


def _run(transcripts: Path, sessions: list[Session], skipped: list[str], workdir: Path, log) -> dict[str, Any]:
    left_out = f", {len(skipped)} files left out" if skipped else ""
    log(f"replay: {len(sessions)} sessions under {transcripts}{left_out}")
    facts = {s.key: session_facts(s) for s in sessions}
    replayer = Replayer(transcripts, workdir, log)
    packets = simulate(sessions, replayer, log)
    replayer.add(sessions, "after the last session: project mapping only")
    projects = replayer.project_names({s.cwd for s in sessions})
    scored = score_all(sessions, facts, packets, projects.__getitem__)
    return {
        "benchmark": "replay",
        "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "transcripts": str(transcripts),
        "skipped": skipped,
        "backfills": replayer.backfills,
        "backfill_seconds": round(sum(b["seconds"] for b in replayer.backfills), 1),
        "scored_sessions": sum(r["scored"] for r in scored["sessions"]),
        "coverage": scored["totals"]["nous"]["coverage"]["rate"],
        "uptake": scored["totals"]["nous"]["uptake"]["rate"],
        **scored,
    }


def _cell(figures: dict[str, Any]) -> str:
    return f"{figures['coverage']['rate']:.3f} {figures['uptake']['rate']:.3f}"


def print_report(report: dict[str, Any]) -> None:
    """Per project: sessions scored, needs by type, coverage and uptake of each packet source; then totals."""
    print(f"replay over {report['transcripts']}: {len(report['sessions'])} sessions, "
          f"{report['scored_sessions']} scored, {len(report['backfills'])} backfills "
          f"({report['backfill_seconds']:.0f}s)")  # fmt: skip
    header = f"{'project':44} {'scored':>6} {'cmd':>4} {'file':>4} {'err':>4} {'corr':>4}"
    print(header + "".join(f" {name + ' cov upt':>16}" for name in ("nous", "last", "empty")))
    for name, row in report["projects"].items():
        needs = row["needs"]
        cells = "".join(f" {_cell(row[s]):>16}" for s in SYSTEMS)
        print(f"{name[-44:]:44} {row['scored']:>6} {needs['commands']:>4} {needs['files']:>4} {needs['errors']:>4} "
              f"{needs['corrections']:>4}{cells}")  # fmt: skip
    totals = report["totals"]
    count = {k: totals["nous"]["by_type"][k]["total"] for k in NEED_TYPES}
    cells = "".join(f" {_cell(totals[s]):>16}" for s in SYSTEMS)
    print(f"{'all':44} {report['scored_sessions']:>6} {count['commands']:>4} {count['files']:>4} "
          f"{count['errors']:>4} {count['corrections']:>4}{cells}")  # fmt: skip
    for system in SYSTEMS:
        t = totals[system]
        kinds = "  ".join(f"{k} {t['by_type'][k]['rate']:.3f} ({t['by_type'][k]['hits']}/{t['by_type'][k]['total']})"
                          for k in NEED_TYPES)  # fmt: skip
        print(f"{system:12} coverage {t['coverage']['rate']:.3f} ({t['coverage']['hits']}/{t['coverage']['total']}) "
              f"uptake {t['uptake']['rate']:.3f} ({t['uptake']['hits']}/{t['uptake']['total']}) "
              f"mean packet {t['mean_packet_chars']:.0f} chars; {kinds}")  # fmt: skip

"""Cutting a Bash tool call into the simple commands it ran, each with the directory it ran in.

:func:`nous_assets.extract.rules.shell.split_segments` splits on every ``&&``/``;``/newline, which breaks
on what Claude Code commands are full of: multi-line quoted strings, ``"$(cat <<'EOF' … EOF)"`` commit
messages, heredoc scripts and loops. The brief needs the commands themselves, so this scanner respects
quotes, ``$( … )`` and heredoc bodies, drops what a pipe feeds (``| tail -5`` is not the command), skips
loop bodies (``for pr in …; do gh pr view $pr; done`` is not a project command) and marks commands whose
result is masked (``|| true``, ``if …``, ``&``). ``cd`` is followed, so each command knows where it ran.
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass

from nous_assets.extract.rules.shell import strip_front

_HEREDOC_RE = re.compile(r"<<(-?)\s*(['\"]?)([\w.-]+)\2")
_REDIRECT_RE = re.compile(r"^(\d*(?:>>?|<<?<?-?|&>>?)&?)(\S*)$")
_KEPT_ENV_RE = re.compile(r"^(?:[A-Z]+_)?ENV=\w+$")  # MIX_ENV=test, NODE_ENV=production: another environment
_LOOP_START = frozenset({"for", "while", "until", "select"})
_GUARD_START = frozenset({"if", "elif", "case"})
_BODY_KEYWORDS = frozenset({"then", "do", "else", "{", "(", "!"})
_END_KEYWORDS = frozenset({"fi", "done", "esac", "}", ")"})


@dataclass(frozen=True)
class Segment:
    """One simple command of a Bash call."""

    tokens: tuple[str, ...]  # its words, without wrappers (sudo, time, timeout 60, rtk) and env assignments
    cwd: str  # absolute directory it ran in
    guarded: bool  # its own result is masked: `… || x`, an `if`/`case` condition or body, `… &`
    text: str  # as written (one line)
    assigned: tuple[str, ...] = ()  # every variable it was given before its name (DB_HOST=10.0.0.5, MIX_ENV=test)

    @property
    def env(self) -> tuple[str, ...]:
        """The environment-selecting assignments it ran with (``MIX_ENV=test``): part of which command it is."""
        return tuple(a for a in self.assigned if _KEPT_ENV_RE.match(a))


def segments(command: str, cwd: str) -> list[Segment]:
    """The simple commands of ``command`` in order, each with its directory (``cd`` is followed)."""
    out: list[Segment] = []
    loop_depth = guard_depth = 0
    for raw, before, after in _pieces(command):
        words = _words(raw)
        while words and words[0] in _BODY_KEYWORDS:
            words = words[1:]
        if not words:
            continue
        head = words[0]
        if head in _END_KEYWORDS:
            loop_depth -= head == "done" and loop_depth > 0
            guard_depth -= head in ("fi", "esac") and guard_depth > 0
            continue
        if head in _LOOP_START:
            loop_depth += 1
            continue
        if head in _GUARD_START:
            guard_depth += 1
            words = words[1:]
        if loop_depth or not words or before == "|":
            continue
        if words[0] in ("cd", "pushd"):
            cwd = _chdir(cwd, words[1:])
            continue
        assigned, words = strip_front(words)
        if words:
            guarded = guard_depth > 0 or after in ("||", "&") or before == "||"
            out.append(Segment(tuple(words), cwd, guarded, " ".join(raw.split()), tuple(assigned)))
    return out


def git_verb(tokens: tuple[str, ...] | list[str]) -> str:
    """The git subcommand a command runs (``git -C x commit -m …`` → ``commit``), '' when it is not git."""
    if not tokens or tokens[0] != "git":
        return ""
    i = 1
    while i < len(tokens) and tokens[i].startswith("-"):
        i += 2 if tokens[i] in ("-C", "-c") else 1
    return tokens[i] if i < len(tokens) else ""


_HEREDOC_MESSAGE_RE = re.compile(
    r"git commit\b[^\n]*?(?:-m|--message)[ =]\s*\"?\$\(cat <<-?\s*['\"]?(\w+)['\"]?\n\s*([^\n]*)"
)
_INLINE_MESSAGE_RE = re.compile(r"git commit\b[^\n]*?(?:-m|--message)[ =]\s*(?:\"([^\"\n]*)|'([^'\n]*)|(\S+))")


def commit_message(command: str) -> str:
    """The first line of a ``git commit`` message (``-m "…"`` or a ``"$(cat <<'EOF' …)"`` heredoc), or ''."""
    m = _HEREDOC_MESSAGE_RE.search(command)
    if m:
        return m.group(2).strip()
    m = _INLINE_MESSAGE_RE.search(command)
    return (m.group(1) or m.group(2) or m.group(3) or "").strip() if m else ""


def _chdir(cwd: str, args: list[str]) -> str:
    target = next((a for a in args if not a.startswith("-")), "")
    if not target or "$" in target or target.startswith("~"):
        return cwd
    return posixpath.normpath(posixpath.join(cwd, target))


_DQ = r'"[^"\\]*(?:\\.[^"\\]*)*"?'  # a double-quoted string, unrolled (fast on long scripts)
_WORD_RE = re.compile(r"""(?:[^\s'"\\]+|\\.|'[^']*'?|""" + _DQ + ")+", re.S)
_ESCAPED_RE = re.compile(r"\\([\\\"$`])")
_PART_RE = re.compile(r"""'([^']*)'?|"([^"\\]*(?:\\.[^"\\]*)*)"?|\\(.)|([^'"\\]+)""", re.S)


def _words(raw: str) -> list[str]:
    """Shell words with quotes removed (what ``shlex.split`` gives, at regex speed), comments dropped."""
    raw = raw.strip().lstrip("(").rstrip(")").strip()
    words: list[str] = []
    for m in _WORD_RE.finditer(raw):
        word = m.group(0)
        if word[0] == "#":
            break
        if "'" in word or '"' in word or "\\" in word:
            word = "".join(_unquote(p) for p in _PART_RE.finditer(word))
        words.append(word)
    return _without_redirections(words)


def _unquote(part: re.Match[str]) -> str:
    single, double, escaped, plain = part.groups()
    if single is not None:
        return single
    if double is not None:
        return _ESCAPED_RE.sub(r"\1", double) if "\\" in double else double
    return escaped if escaped is not None else plain


def _without_redirections(words: list[str]) -> list[str]:
    """``2>&1``, ``>/dev/null``, ``> out.txt``, ``<<EOF`` out: where output goes is not the command."""
    out: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif _REDIRECT_RE.match(word):
            skip = not _REDIRECT_RE.match(word).group(2)  # a bare `>` / `2>` takes the next word as its target
        else:
            out.append(word)
    return out


# ---------------------------------------------------------------------------------------------------------
# scanning


def strip_heredocs(text: str) -> str:
    """``text`` without heredoc bodies: a commit message or a Python script fed on stdin is data."""
    out: list[str] = []
    pos = 0
    while (m := _HEREDOC_RE.search(text, pos)) is not None:
        newline = text.find("\n", m.end())
        if newline < 0:
            break
        out.append(text[pos : newline + 1])
        pos = newline + 1
        while pos < len(text):
            end = text.find("\n", pos)
            line = text[pos : end if end >= 0 else len(text)]
            pos = end + 1 if end >= 0 else len(text)
            if line.strip() == m.group(3):
                break
    out.append(text[pos:])
    return "".join(out)


def _pieces(command: str) -> list[tuple[str, str, str]]:
    """(text, operator before, operator after) of each top-level piece (``|``, ``||``, ``&&``, ``&`` or '')."""
    scanner = _Scanner(strip_heredocs(command))
    scanner.run()
    return scanner.pieces


_QUOTED_RE = {
    "'": re.compile(r"'[^']*'?"),
    '"': re.compile(_DQ, re.S),
    "`": re.compile(r"`[^`\\]*(?:\\.[^`\\]*)*`?", re.S),
}
_SPECIAL_RE = re.compile(r"['\"`\\#\n;&|$()]")


class _Scanner:
    """A small shell lexer: quotes, ``$( … )`` and the operators that end a command."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.buf: list[str] = []
        self.op = ""  # the operator before the piece being read
        self.pieces: list[tuple[str, str, str]] = []
        self.depth = 0  # inside $( … )

    def run(self) -> None:
        while self.i < len(self.text):
            m = _SPECIAL_RE.search(self.text, self.i)
            if m is None:
                self.buf.append(self.text[self.i :])
                break
            if m.start() > self.i:
                self.buf.append(self.text[self.i : m.start()])
                self.i = m.start()
            ch = self.text[self.i]
            if ch in "'\"`":
                self._quoted(ch)
            elif ch == "\\":
                self._escape()
            elif ch == "#" and (not self.buf or self.buf[-1][-1:] in " \t") and not self.depth:
                self._comment()
            elif self.depth:
                self._nested(ch)
            else:
                self._top(ch)
        self._flush("")

    def _quoted(self, quote: str) -> None:
        m = _QUOTED_RE[quote].match(self.text, self.i)
        end = m.end() if m else len(self.text)
        self.buf.append(self.text[self.i : end])
        self.i = end

    def _escape(self) -> None:
        self.buf.append(" " if self.text.startswith("\\\n", self.i) else self.text[self.i : self.i + 2])
        self.i += 2

    def _comment(self) -> None:
        end = self.text.find("\n", self.i)
        self.i = end if end >= 0 else len(self.text)

    def _nested(self, ch: str) -> None:
        if ch == "(":
            self.depth += 1
        elif ch == ")":
            self.depth -= 1
        self.buf.append(" " if ch == "\n" else ch)
        self.i += 1

    def _top(self, ch: str) -> None:
        two = self.text[self.i : self.i + 2]
        if two == "$(":
            self.depth += 1
            self.buf.append(two)
            self.i += 2
        elif two in ("&&", "||"):
            self._flush(two)
            self.i += 2
        elif ch in ";|\n" or (ch == "&" and not self._redirect_amp()):
            self._flush(ch)
            self.i += 1
        else:
            self.buf.append(ch)
            self.i += 1

    def _redirect_amp(self) -> bool:
        """``2>&1`` and ``&>`` are redirections, not a background ``&``."""
        before = self.text[self.i - 1] if self.i else ""
        after = self.text[self.i + 1] if self.i + 1 < len(self.text) else ""
        return before in "<>" or after == ">"

    def _flush(self, op: str) -> None:
        text = "".join(self.buf).strip()
        if text:
            self.pieces.append((text, self.op, op if op in ("|", "||", "&&", "&") else ""))
        self.op = op if op in ("|", "||", "&&") else ""
        self.buf = []

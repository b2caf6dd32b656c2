"""Commands by their normalised form: program plus subcommand or script, what a session teaches the next.

``mise run test:ci --verbose`` and ``cd x && mise run test:ci`` are one command, ``mise run test:ci``; ``uv run pytest
tests/x.py -k foo`` is ``uv run pytest``; ``gh pr create --title …`` is ``gh pr create``. Env assignments, ``cd … &&``,
wrappers (``timeout 60``, ``rtk``), redirects, flags and file or test filters are dropped; runners keep what they run
(``uv run``, ``bundle exec``, ``mise exec``), and the ``--`` that ends a runner's own arguments (``mise exec -- gx
lint``: without it mise reads ``gx`` as a tool to install; ``mise exec node@20 -- node app.js``). Not a command
worth teaching: read-only exploration (:data:`shell.READ_ONLY_FAMILIES`, :data:`EXPLORATION`: git plumbing reads,
inspection tools, ``gh`` reads such as ``gh pr view`` and ``gh api``), everyday version-control porcelain
(:data:`PORCELAIN`), file housekeeping (:data:`HOUSEKEEPING`) and inline code (``python -c``, ``python <<EOF``):
every session runs those.

One definition for the two readers that need it: the project brief (what the project's sessions run again and
again) and ``nous bench replay`` (what a later session needed that an earlier one showed).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence

from nous_assets.extract.rules import shell
from nous_assets.extract.rules.text import short_path

PORCELAIN = frozenset(
    f"git {verb}"
    for verb in ("add", "commit", "push", "pull", "checkout", "switch", "fetch", "stash", "rebase", "merge",
                 "branch", "restore", "reset", "rm", "mv", "cherry-pick")
)  # fmt: skip
"""Version-control porcelain every session runs: never a need, never 'used' for uptake."""
EXPLORATION = frozenset(
    {"git ls-tree", "git rev-list", "git reflog", "git cat-file", "git describe", "git shortlog", "git grep",
     "git for-each-ref", "git show-ref", "git name-rev", "git merge-base", "git check-ignore", "git count-objects",
     "md5sum", "shasum", "sha256sum", "hexdump", "xxd", "od", "basename", "dirname", "realpath", "readlink", "tr",
     "tee", "nl", "column", "strings", "fd", "ag", "ack", "man", "history", "hash", "bat", "eza", "exa", "locate",
     "nproc", "uptime", "free", "top", "base64", "ping", "dig", "nslookup", "npm view", "npm ls", "npm list",
     "npm outdated", "pip show", "pip list", "pip freeze", "cargo tree"}
)  # fmt: skip
"""Read-only exploration beyond :data:`shell.READ_ONLY_FAMILIES` (git plumbing reads, inspection tools)."""
HOUSEKEEPING = frozenset(
    {"rm", "mv", "cp", "mkdir", "rmdir", "touch", "chmod", "chown", "ln", "kill", "pkill", "killall", "clear",
     "exit", "read", "wait", "trap", "local", "return", "printf", "sudo", "shift", "eval", "let", "declare"}
)  # fmt: skip
SHELL_WORDS = frozenset({"for", "done", "fi", "case", "esac", "in", "function", "select", "break", "continue"})
LEADING_KEYWORDS = frozenset({"do", "then", "else", "elif", "if", "while", "until", "!"})
"""Shell keywords before a command (``do make lint``): dropped, the command counts."""
RUNNERS = {"uv": ("run",), "poetry": ("run",), "pdm": ("run",), "pipenv": ("run",), "hatch": ("run",),
           "rye": ("run",), "bundle": ("exec",), "pnpm": ("exec", "dlx"), "mise": ("exec", "x")}  # fmt: skip
"""``<tool> <verb> <command>`` wrappers: the wrapped command is normalised in turn (``uv run pytest``)."""
RUNNER_VALUE_OPTIONS = frozenset({"--project", "--with", "--directory", "--group", "--extra", "--package",
                                  "--python", "-p", "--env-file", "--from", "--index", "-C", "--cwd"})  # fmt: skip
NESTED_VERBS = {"mise": ("run", "r"), "turbo": ("run",), "just": ("--justfile",)}
"""CLIs whose verb takes one more word: ``mise run test:ci``."""
GH_GROUPS = frozenset({"pr", "issue", "run", "release", "workflow", "repo", "secret", "label", "variable", "auth"})
GH_READ_VERBS = frozenset({"view", "list", "status", "diff", "checks", "watch", "token"})
FILTER_WORDS = frozenset({"src", "lib", "test", "tests", "spec", "app", "docs", "scripts", "packages", "all"})
"""Bare directory names after a program: a target, not a subcommand (``eslint src``)."""
_REDIRECT_RE = re.compile(r"^(?:\d*[<>]|&>)")
_SUBCOMMAND_RE = re.compile(r"^[A-Za-z][\w:.+-]*$")
_BIN_DIR_RE = re.compile(r"/\.?s?bin/[^/]+$")  # /usr/local/bin/docker: the program, not a project script
_VERB_RE = re.compile(r"^[a-z][a-z0-9_:-]*$")
_PROGRAM_RE = re.compile(r"^[\w.~/][\w.~/+@-]*$")
_MASK = "\x00"
_SUBSTITUTION_RE = re.compile(r"\$\((?:[^()]|\([^()]*\))*\)|`[^`]*`")
_PIPE_RE = re.compile(r"(?<![|>])\|(?![|&])")
_HEREDOC_RE = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
EXTENSION_RE = re.compile(r"\.[A-Za-z][A-Za-z0-9]{0,5}$")


def command_forms(cmd: str, cwd: str | None = None) -> tuple[str, ...]:
    """The normalised forms of a command line, one per segment worth teaching (see the module doc)."""
    forms: list[str] = []
    for line in command_lines(cmd):
        for toks in shell.split_segments(_PIPE_RE.sub(" ; ", line)):  # `echo y | uv run x`: each stage counts
            form = normalise_segment(toks, cwd)
            if form and form not in forms:
                forms.append(form)
    return tuple(forms)


def command_lines(cmd: str) -> list[str]:
    """The command's lines as the shell reads them, heredoc bodies and comments out, each quoted string and
    ``$(…)`` one placeholder (so a ``;`` or ``|`` inside splits nothing, and it is never a program or a verb)."""
    text = _mask_quotes(_without_heredoc_bodies(cmd.replace("\\\n", " ")))
    before = None
    while before != text:
        before, text = text, _SUBSTITUTION_RE.sub(_MASK, text)
    return [line.strip() for line in text.split("\n") if line.strip() and not line.strip().startswith("#")]


def _without_heredoc_bodies(text: str) -> str:
    kept: list[str] = []
    pending: list[str] = []
    for line in text.split("\n"):
        if pending:
            if line.strip() == pending[0]:
                pending.pop(0)
            continue
        kept.append(line)
        pending.extend(m.group(2) for m in _HEREDOC_RE.finditer(line))
    return "\n".join(kept)


def _mask_quotes(text: str) -> str:
    """Each '…' and "…" span (backslash escapes honoured) replaced by :data:`_MASK`."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch == "\\":
            out.append(text[i : i + 2])
            i += 2
        elif ch in "'\"":
            j = i + 1
            while j < len(text) and text[j] != ch:
                j += 2 if ch == '"' and text[j] == "\\" else 1
            out.append(_MASK)
            i = j + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def normalise_segment(toks: list[str], cwd: str | None = None) -> str | None:
    """Program plus subcommand or script of one segment (env assignments already off), None when not a need."""
    heredoc = next((i for i, t in enumerate(toks) if t.startswith("<<")), len(toks))
    toks = _unwrap([t for t in toks[:heredoc] if not _REDIRECT_RE.match(t)])
    if not toks or not _PROGRAM_RE.match(toks[0]):
        return None
    head = _program(toks[0])
    if head in shell.CMD_PREFIX_SKIP or head in HOUSEKEEPING or head in SHELL_WORDS or head in EXPLORATION:
        return None
    if "/" in toks[0] and head not in shell._INTERPRETERS and not _BIN_DIR_RE.search(toks[0]):
        return _script(toks[0], cwd)
    form = _form(toks, head, cwd)
    if form is None or (head != "gh" and shell.family_of(toks) in shell.READ_ONLY_FAMILIES):
        return None
    return None if form in PORCELAIN or form in EXPLORATION else form


def _unwrap(toks: list[str]) -> list[str]:
    """``toks`` without subshell parentheses, the keywords of a loop or condition around it and what runs the
    command in front (:func:`~nous_assets.extract.rules.shell.unwrapped`), and without a package manager's workspace
    selector."""
    toks = [t for t in (toks[0].lstrip("({"), *toks[1:]) if t] if toks else toks
    while toks and toks[0] in LEADING_KEYWORDS:
        toks = toks[1:]
    toks = shell.unwrapped(toks)
    return shell.workspace_split(toks)[0] if toks else toks


def _program(token: str) -> str:
    head = posixpath.basename(token).lower()
    return "python" if re.fullmatch(r"python3(?:\.\d+)?", head) else head


def _script(token: str, cwd: str | None) -> str:
    path = short_path(token, cwd)
    return path[2:] if path.startswith("./") else path


def _words(toks: Sequence[str]) -> list[str]:
    return [t for t in toks if not t.startswith("-")]


def _options_off(toks: list[str]) -> list[str]:
    """A wrapped command without the runner's own options in front (``uv run --with x pytest`` -> ``pytest``)."""
    while toks and toks[0].startswith("-"):
        toks = toks[2:] if toks[0] in RUNNER_VALUE_OPTIONS else toks[1:]
    return toks


def _form(toks: list[str], head: str, cwd: str | None) -> str | None:
    rest = _words(toks[1:])
    if head in RUNNERS and rest and rest[0] in RUNNERS[head]:
        after = toks[toks.index(rest[0]) + 1 :]
        end = after.index("--") if "--" in after else len(after)
        tools = _options_off(after[:end])
        if end < len(after) and all("@" in t for t in tools):  # `mise x node@20 -- node app.js`
            kept, inner = [*tools, "--"], after[end + 1 :]
        else:  # no `--`, or the wrapped command's own (`uv run pytest -- -x`)
            kept, inner = [], _options_off(after)
        wrapped = normalise_segment(inner, cwd) if inner else None
        return " ".join([head, rest[0], *kept, wrapped]) if wrapped else None
    if head == "npx" and rest:
        return f"npx {_program(rest[0]).split('@', 1)[0] or rest[0]}"
    if head == "gh":
        return _gh(rest)
    if head in shell._INTERPRETERS and not (head in ("bun", "deno") and rest and _VERB_RE.match(rest[0])):
        if len(toks) > 2 and toks[1] == "-m":
            return f"{head} -m {toks[2]}"
        if rest and ("/" in rest[0] or EXTENSION_RE.search(rest[0])):
            return f"{head} {_script(rest[0], cwd)}"
        return None  # inline code (-c, -e, a heredoc, stdin): nothing to reuse
    if head in NESTED_VERBS and len(rest) > 1 and rest[0] in NESTED_VERBS[head] and _SUBCOMMAND_RE.match(rest[1]):
        return f"{head} {rest[0]} {rest[1]}"
    family = shell.family_of(toks)
    parts = family.split()
    if len(parts) > 1 and not _SUBCOMMAND_RE.match(parts[-1]) and "--filter" not in parts:
        return parts[0]  # `make dir/x`, `cargo +nightly`: a target, not a subcommand
    if len(parts) == 1 and len(toks) > 1 and _VERB_RE.match(toks[1]) and toks[1] not in FILTER_WORDS:
        return f"{family} {toks[1]}"  # an unlisted CLI's verb, right after it: `openspec validate`, `ruff check`
    return family


def _gh(rest: list[str]) -> str | None:
    """``gh pr create``: group and verb; reads (``gh pr view``, ``gh api``) are exploration."""
    if not rest or rest[0] == "api":
        return None
    if rest[0] in GH_GROUPS and len(rest) > 1:
        return None if rest[1] in GH_READ_VERBS else f"gh {rest[0]} {rest[1]}"
    return f"gh {rest[0]}"

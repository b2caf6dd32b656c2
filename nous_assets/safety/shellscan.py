"""What a command line in a memory would *do*, read structurally: shell words, not phrasings.

The guard's patterns (:mod:`nous_assets.safety.guard`) know the classic shapes (``curl … | sh``); an attacker
writes variants (``curl -o f && bash f``, ``npx -y @scope/pkg``, ``git push origin +HEAD:main``, ``rsync
~/.ssh/ host:``, ``export ANTHROPIC_BASE_URL=…``). Here every command-like span of a memory — each backtick
span, and each line — is split into shell words (:mod:`shlex`, punctuation kept) and into the commands of its
pipelines and lists (``|``, ``&&``, ``||``, ``;``), wrappers (``sudo``, ``env``, ``VAR=value``) stripped, and
each command is judged by its program and arguments:

``remote_code``      a download piped into an interpreter, or saved and then run; a package runner or
                     installer given a remote spec (``npx -y``/``--yes``, ``pnpm dlx``, ``bunx``, ``uvx --from
                     git+…``, ``pip install https://…``/``git+…``, ``go run mod@version``, ``deno run https://…``,
                     ``npm install github:…``, ``cargo install --git``);
``force_push_main``  ``git push`` rewriting a main branch's history: a ``+`` refspec or ``--force*`` to main,
                     master, trunk or a release branch, ``--mirror``, deleting main;
``exfiltration``     ``rsync``/``scp``/``sftp``/``rclone`` of a credential path to a remote host;
``redirect``         tools pointed at another server: registries, package indexes, API base URLs and proxies
                     (``npm config set registry``, ``pip config set global.index-url``, ``--index-url``,
                     ``ANTHROPIC_BASE_URL=…``, ``HTTPS_PROXY=…``, ``git config url.….insteadOf``), loopback
                     addresses excepted;
``destructive``      ``rm -rf`` of ``/``, ``~``, ``$HOME`` or a system folder, ``mkfs``, ``dd of=/dev/…``.

Each finding carries the span it came from, so the guard decides, as for its patterns, whether a negation in
the same clause governs it. The text is expected normalised (:func:`nous_assets.safety.guard.normalize`).
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Iterator
from dataclasses import dataclass

MAX_SPAN = 2000
_SPAN = re.compile(r"```[^\n]*\n(.*?)```|`([^`\n]+)`", re.S)
_OPERATORS = frozenset({"|", "||", "&&", ";", "&", "|&", ";;"})
_WRAPPERS = frozenset({"sudo", "doas", "env", "exec", "command", "nohup", "time", "nice", "xargs", "builtin", "export",
                       "declare", "readonly", "typeset", "local"})  # fmt: skip
_FETCH = frozenset({"curl", "wget", "fetch", "iwr", "irm", "invoke-webrequest", "invoke-restmethod", "http", "https",
                    "aria2c", "lwp-download", "xh"})  # fmt: skip
_INTERPRETERS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "python", "python2",
                           "python3", "perl", "ruby", "node", "php", "pwsh", "powershell", "iex",
                           "invoke-expression", "source", ".", "deno", "bun"})  # fmt: skip
_REMOTE_SPEC = re.compile(r"^(?:https?://|git\+|git@|github:|gitlab:|bitbucket:|ssh://|ftp://)", re.I)
_MAIN = re.compile(r"^(?:refs/heads/)?(?:main|master|trunk|release(?:[/-][\w.-]+)?)$", re.I)
_SENSITIVE = re.compile(
    r"(?:^|/)(?:\.env(?:\.\w+)?|\.ssh|id_(?:rsa|dsa|ecdsa|ed25519)\w*|\.aws|credentials(?:\.json)?|\.netrc|\.npmrc"
    r"|\.pypirc|\.git-credentials|\.kube|\.gnupg|\.docker|\.config/gh|shadow|passwd)(?:/|$)",
    re.I,
)
_REMOTE_TARGET = re.compile(r"^(?:[\w.-]+@)?[\w.-]+:(?!//)|^(?:s3|gs|rsync|sftp|ftp|https?)://", re.I)
# the variables that point the agent's own tools elsewhere (an app's VITE_API_URL is the project's business)
_SERVER_VAR = re.compile(
    r"^(?:ANTHROPIC|OPENAI|CLAUDE(?:_CODE)?|AZURE_OPENAI|GEMINI|MISTRAL|GROQ|OLLAMA|LITELLM)_\w*(?:URL|BASE|ENDPOINT|HOST)$"
    r"|^(?:HTTPS?|ALL|FTP)_PROXY$|^(?:NPM_CONFIG_REGISTRY|YARN_REGISTRY|YARN_NPM_REGISTRY_SERVER|PIP_(?:EXTRA_)?INDEX_URL"
    r"|UV_(?:EXTRA_)?INDEX_URL|UV_DEFAULT_INDEX|GOPROXY|CARGO_REGISTRIES_\w+_INDEX|BUNDLE_MIRROR__\w+)$",
    re.I,
)
_LOOPBACK = re.compile(r"^(?:https?://)?(?:localhost|127\.\d+\.\d+\.\d+|\[?::1\]?|0\.0\.0\.0)(?:[:/]|$)", re.I)
_SYSTEM_PATHS = frozenset({"/", "/*", "~", "~/", "~/*", "$home", "${home}", "$home/", "/home", "/usr", "/etc", "/var",
                           "/bin", "/boot", "/lib", "/opt", "/root", "/system", "/users", "c:\\"})  # fmt: skip


@dataclass(frozen=True)
class Hit:
    """One dangerous command: its category, the command as written, and where its span is in the text."""

    category: str
    command: str
    start: int
    end: int


def scan(text: str) -> list[Hit]:
    """Every dangerous command in ``text`` (backtick spans first, then each line outside them)."""
    hits: list[Hit] = []
    seen: set[tuple[str, str]] = set()
    for start, end in _spans(text):
        for category, command in _judge(_words(text[start:end])):
            if (category, command) not in seen:
                seen.add((category, command))
                hits.append(Hit(category, command, start, end))
    return hits


# where a command starts inside prose ("… always finish with git push --mirror origin so …")
_COMMAND_START = re.compile(
    r"(?<![\w./-])(?:sudo\s+)?(?:git|curl|wget|npm|pnpm|yarn|npx|bunx|pip3?|uvx?|pipx|rsync|scp|rm|export|go|deno|cargo"
    r"|mkfs\S*|dd|setx|iwr|irm|bash|sh|python3?)\s+\S",
    re.I,
)
_ASSIGN = "\x00assign"  # the "program" of a VAR=value word (no shell word can be this)
_ASSIGNMENT = re.compile(r"(?<![\w$])[A-Za-z_][A-Za-z0-9_]*=\S+")


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """(start, end) of each backtick span, of each line, of each command starting inside a line (commands are
    written in prose too: to the end of its line), and of each ``VAR=value`` anywhere."""
    for m in _SPAN.finditer(text):
        group = 1 if m.group(1) is not None else 2
        yield m.start(group), m.end(group)
    pos = 0
    for line in text.split("\n"):
        yield pos, pos + len(line)
        for m in _COMMAND_START.finditer(line):
            if m.start():
                yield pos + m.start(), pos + len(line)
        for m in _ASSIGNMENT.finditer(line):
            yield pos + m.start(), pos + m.end()
        pos += len(line) + 1


def _words(span: str) -> list[str]:
    """Shell words with operators as their own words (of the span's first :data:`MAX_SPAN` characters: a command
    line is short, a minified file on one line is not); an unbalanced quote falls back to whitespace."""
    span = span[:MAX_SPAN]
    lexer = shlex.shlex(span.replace("\\\n", " "), posix=True, punctuation_chars=";&|<>()")
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        return list(lexer)[:400]
    except ValueError:
        return re.findall(r"[;&|<>()]+|[^\s;&|<>()]+", span)[:400]


def _commands(words: list[str]) -> list[tuple[list[str], str]]:
    """(the command's words without wrappers and assignments, the operator after it); assignments kept as a
    command of their own (``VAR=value``) so ``export``/inline settings are seen."""
    out: list[tuple[list[str], str]] = []
    current: list[str] = []
    for word in [*words, ";"]:
        if word in _OPERATORS or word in ("(", ")"):
            if current:
                out.extend(_unwrap(current, word))
            current = []
        else:
            current.append(word)
    return out


def _unwrap(words: list[str], op: str) -> list[tuple[list[str], str]]:
    out: list[tuple[list[str], str]] = []
    i = 0
    while i < len(words):
        w = words[i]
        if re.match(r"^[A-Za-z_]\w*=", w):
            out.append(([_ASSIGN, w], ";"))
        elif w.lower() not in _WRAPPERS and not (w.startswith("-") and i > 0 and words[i - 1].lower() in _WRAPPERS):
            break
        i += 1
    if i < len(words):
        out.append((words[i:], op))
    return out


def _program(words: list[str]) -> str:
    return posixpath.basename(words[0]).lower().removesuffix(".exe") if words else ""


def _judge(words: list[str]) -> Iterator[tuple[str, str]]:
    commands = _commands(words)
    downloaded: set[str] = set()
    for n, (cmd, op) in enumerate(commands):
        prog, args = _program(cmd), cmd[1:]
        text = " ".join(cmd)[:200]
        if prog in _FETCH and op in ("|", "|&") and n + 1 < len(commands) and _runs_stdin(commands[n + 1][0]):
            yield "remote_code", text
        if prog in _FETCH:
            downloaded |= _saved_as(args)
        elif downloaded and _runs_file(prog, args, downloaded):
            yield "remote_code", text
        for category, check in _CHECKS:
            if check(prog, args):
                yield category, text


def _runs_stdin(cmd: list[str]) -> bool:
    """An interpreter reading its program from the pipe (``sh``, ``sudo bash -s``, ``python3 -``)."""
    return _program(cmd) in _INTERPRETERS


def _saved_as(args: list[str]) -> set[str]:
    """Names a download was written to (``-o f``, ``-O f``, ``--output f``, ``> f``; wget's URL basename)."""
    names: set[str] = set()
    for i, a in enumerate(args):
        short_o = re.fullmatch(r"-[a-zA-Z]*[oO]", a) is not None  # -o, -O, -sSo: the next word is the file
        if (short_o or a in ("--output", "--output-document", "-OutFile", ">", ">>")) and i + 1 < len(args):
            names.add(posixpath.basename(args[i + 1]))
        elif a.startswith(("--output=", "--output-document=")):
            names.add(posixpath.basename(a.split("=", 1)[1]))
        elif _REMOTE_SPEC.match(a):
            names.add(posixpath.basename(a.split("?", 1)[0]))
    return {n for n in names if n and n != "-"}


def _runs_file(prog: str, args: list[str], downloaded: set[str]) -> bool:
    """Running a downloaded file: ``bash f``, ``./f``, ``source f``, ``chmod +x f`` then ``./f``."""
    if posixpath.basename(prog) in downloaded and prog not in _INTERPRETERS:
        return True
    return prog in _INTERPRETERS and any(posixpath.basename(a) in downloaded for a in args if not a.startswith("-"))


def _remote_runner(prog: str, args: list[str]) -> bool:
    low = [a.lower() for a in args]
    if prog == "npx" and ({"-y", "--yes"} & set(low) or any(a.startswith("--package") for a in low)):
        return True
    if prog in ("bunx", "pnpx") or (prog in ("pnpm", "yarn") and low[:1] == ["dlx"]):
        return True
    if prog == "npm" and low[:1] == ["exec"] and {"-y", "--yes"} & set(low):
        return True
    remote_arg = any(_REMOTE_SPEC.match(a) for a in args)
    if prog in ("uvx", "pipx") or (prog == "uv" and low[:2] in (["tool", "run"], ["tool", "install"])):
        return remote_arg or any(a.startswith("--from") and _REMOTE_SPEC.match(a[7:]) for a in low)
    if prog == "uv" and low[:2] == ["pip", "install"]:
        return remote_arg
    if prog in ("pip", "pip3") or (prog.startswith("python") and low[:2] == ["-m", "pip"]):
        return "install" in low and (remote_arg or any(a in ("-i", "--index-url", "--extra-index-url") for a in low))
    if prog in ("npm", "pnpm", "yarn", "bun") and low[:1] and low[0] in ("i", "install", "add"):
        return remote_arg
    if prog == "go" and low[:1] and low[0] in ("run", "install"):
        return any("@" in a and "." in a.split("/", 1)[0] for a in args[1:])
    if prog == "deno" and low[:1] == ["run"]:
        return remote_arg
    if prog in ("cargo", "gem") and "install" in low:
        return "--git" in low or "--source" in low
    return prog in _INTERPRETERS and remote_arg


def _history_rewrite(prog: str, args: list[str]) -> bool:
    if prog != "git" or "push" not in args:
        return False
    rest = args[args.index("push") + 1 :]
    forced = any(a in ("-f", "--force", "--mirror") or a.startswith("--force-with-lease") or a.startswith("--force")
                 for a in rest)  # fmt: skip
    if "--mirror" in rest:
        return True
    deleting = "--delete" in rest or "-d" in rest
    for a in (a for a in rest if not a.startswith("-")):
        dest = a.rsplit(":", 1)[-1]
        if _MAIN.match(dest) and (a.startswith("+") or forced or deleting or (a.startswith(":") and len(a) > 1)):
            return True
    return False


def _copies_secrets_out(prog: str, args: list[str]) -> bool:
    if prog not in ("rsync", "scp", "sftp", "rclone", "rsync.exe", "pscp"):
        return False
    paths = [a for a in args if not a.startswith("-")]
    return any(_SENSITIVE.search(a) for a in paths) and any(_REMOTE_TARGET.match(a) for a in paths[1:])


def _redirects(prog: str, args: list[str]) -> bool:
    low = [a.lower() for a in args]
    if prog in (_ASSIGN, "setx"):  # VAR=value (export …), or Windows' setx VAR value
        if prog == _ASSIGN:
            name, _, value = args[0].partition("=")
        else:
            name, value = (args + ["", ""])[:2]
        return bool(_SERVER_VAR.search(name)) and "://" in value and not _LOOPBACK.match(value.strip("'\""))
    if prog in ("npm", "pnpm", "yarn", "pip", "pip3", "uv", "poetry", "bun") and "config" in low[:2]:
        return any(k.endswith("registry") or "index-url" in k or k == "proxy" or k.endswith("-proxy") for k in low)
    if prog in ("npm", "pnpm", "yarn", "bun", "pip", "pip3", "uv") and any(
        a.split("=")[0] in ("--registry", "--index-url", "--extra-index-url", "-i") for a in low
    ):
        remote = [a for a in args if "://" in a]
        return bool(remote) and not all(_LOOPBACK.match(a.split("=")[-1]) for a in remote)
    if prog == "git" and "config" in low:
        return any(re.match(r"^url\..*\.(?:insteadof|pushinsteadof)$", a) for a in low)
    return False


def _destroys(prog: str, args: list[str]) -> bool:
    if prog == "rm":
        flags = "".join(a.lstrip("-") for a in args if a.startswith("-") and not a.startswith("--"))
        long = {a for a in args if a.startswith("--")}
        recursive = "r" in flags.lower() or "--recursive" in long
        targets = [a.lower().rstrip("/") or "/" for a in args if not a.startswith("-")]
        return recursive and any(t in _SYSTEM_PATHS or t + "/" in _SYSTEM_PATHS for t in targets)
    if prog.startswith("mkfs"):
        return True
    return prog == "dd" and any(a.startswith("of=/dev/") for a in args)


_CHECKS = (
    ("remote_code", _remote_runner),
    ("force_push_main", _history_rewrite),
    ("exfiltration", _copies_secrets_out),
    ("redirect", _redirects),
    ("destructive", _destroys),
)

"""Reading shell commands and their results: families, categories, success, the telling error line.

A command is known by its *family* (``mix test``, ``npm run build``, ``git commit``) so that a failure and
the success that ends it can be matched, by its *category* (test, lint, build, install, migration, run)
so that checks can be told from exploration, and by a cleaned form fit to quote in a memory.
"""

from __future__ import annotations

import posixpath
import re
from typing import TYPE_CHECKING

from nous_assets.capture.secret_catalogue import SECRET_WORDS
from nous_assets.extract.rules.text import ANSI_RE, BOX_RE, EMOJI_RE, cap

if TYPE_CHECKING:
    from nous_assets.extract.rules.session import Call

READ_ONLY_FAMILIES = {
    "ls", "cat", "head", "tail", "grep", "rg", "find", "pwd", "echo", "which", "wc", "tree", "sed", "awk", "sleep",
    "file", "stat", "du", "df", "env", "printenv", "jq", "less", "more", "diff", "sort", "uniq", "cut", "xargs",
    "git status", "git log", "git diff", "git show", "git branch", "git ls-files", "git rev-parse", "git remote",
    "git fetch", "git stash", "git blame", "git config", "python -c", "node -e", "bd", "gh pr", "gh api", "type",
    "true", "false", "test", "[", "date", "whoami", "uname", "id", "ps", "lsof", "curl", "wget", "open", "tmux",
}  # fmt: skip
LOOKUP_VERBS = frozenset({"list", "ls", "show", "view", "status", "info", "search", "find", "query", "registry",
                          "parse", "get", "describe", "cat", "help", "version", "log", "whoami", "doctor", "inspect",
                          "outdated", "why", "which", "env", "config"})  # fmt: skip
"""Subcommands that look something up (``gh run view``, ``kubectl get``): a repeat of one is research, not the
project's workflow, and what one prints may report a failure elsewhere, which is no failure of the command."""
CMD_PREFIX_SKIP = {"cd", "source", ".", "export", "set", "echo", "sleep", "true", "pushd", "popd", "unset", "mkdir"}
_ENV_ASSIGN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_INTERPRETERS = {"python", "python3", "node", "ruby", "bash", "sh", "zsh", "perl", "deno", "bun", "tsx", "ts-node"}
_SUB_CLIS = {
    "git", "mix", "npm", "pnpm", "yarn", "cargo", "go", "docker", "docker-compose", "uv", "pip", "pip3", "poetry",
    "make", "gh", "bd", "kubectl", "bundle", "rails", "alembic", "terraform", "brew", "apt", "apt-get",
    "prisma", "dotnet", "gradle", "mvn", "hatch", "pdm", "conda", "helm", "flask", "django-admin",
}  # fmt: skip
_CATEGORY_RES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("test", re.compile(
        r"^(?:pytest|python -m pytest|mix test|(?:npm|pnpm|yarn|bun) (?:run )?test\b|go test|cargo test|"
        r"npx (?:vitest|jest|playwright|mocha)|vitest|jest|mocha|rspec|bundle exec|make test|tox|nox|phpunit|"
        r"deno test|bun test|gradle test|mvn test|ctest|dotnet test|(?:npm|pnpm|yarn) run (?:test|e2e)\S*)")),
    ("migration", re.compile(
        r"^(?:alembic|mix ecto\.\S+|mix ash\.\S+|mix ash_\S+|prisma|npx prisma|rails db:\S+|python manage\.py|"
        r"manage\.py|django-admin|(?:npm|pnpm|yarn) run db:\S+|flask db|sequelize|knex|diesel)")),
    ("lint", re.compile(
        r"^(?:ruff|mypy|pyright|black|isort|flake8|pylint|eslint|biome|prettier|mix format|mix credo|"
        r"mix dialyzer|tsc|npx (?:eslint|biome|prettier|tsc|knip|@biomejs\S*)|cargo (?:clippy|fmt)|gofmt|"
        r"golangci-lint|(?:npm|pnpm|yarn|bun) run (?:lint|check|typecheck|format|fmt|tsc)\S*|knip|shellcheck|"
        r"rubocop|pre-commit|lefthook)")),
    ("install", re.compile(
        r"^(?:pip install|pip3 install|uv (?:add|sync|pip)|(?:npm|pnpm|yarn|bun) (?:install|i|ci|add)\b|"
        r"mix deps\.\S+|cargo add|bundle install|poetry (?:add|install)|brew install|apt(?:-get)? install|"
        r"go get|go mod|conda install|pdm (?:add|install)|hatch env)")),
    ("build", re.compile(
        r"^(?:make|(?:npm|pnpm|yarn|bun) run (?:build|compile|bundle)\S*|cargo build|mix compile|go build|"
        r"docker build|docker compose build|node build\.js|esbuild|vite build|npx vite|gradle build|"
        r"mvn (?:package|install)|uv build|python -m build|tsc -b|mix assets\.\S+|\S*build\.sh)")),
    ("github", re.compile(
        r"^gh (?:pr (?:create|merge|checks|view|diff)|run (?:view|rerun|watch|list)|api|issue (?:create|edit|close)|"
        r"release create|workflow run)\b")),
    ("run", re.compile(
        r"^(?:mix phx\.server|iex -S mix|(?:npm|pnpm|yarn|bun) (?:run )?(?:dev|start|serve|preview)\b|uvicorn|"
        r"gunicorn|flask run|docker compose up|docker-compose up|docker run|container run|\S*run\.sh|"
        r"cargo run|go run|python manage\.py runserver)")),
)  # fmt: skip
CATEGORY_DOMAIN = {
    "test": "testing", "lint": "linting", "build": "build", "install": "dependencies", "migration": "database",
    "run": "runtime", "github": "git",
}  # fmt: skip
CATEGORY_LABEL = {
    "test": "Test command",
    "lint": "Lint/check command",
    "build": "Build command",
    "install": "Install command",
    "migration": "Migration/codegen command",
    "run": "Run command",
    "github": "GitHub command",
}
BYPASS_RE = re.compile(r"--no-verify|--force(?![-\w])|--skip-\w+|\|\|\s*true\b")
_FAIL_TEXT_RE = re.compile(
    r"^Traceback \(most recent call last\)|^FAILED\b|^ERROR\b|^E\s{2,}\w|\b[1-9]\d* (?:failed|failures?|errors?)\b"
    r"|^\s*error(?:\[\w+\])?:|^\s*\*\* \(\w|^npm ERR!|^\s*✘|\bcommand not found\b|^fatal:",
    re.M,
)
SUMMARY_LINE_RE = re.compile(
    r"\b\d+ (?:doctests?|tests?|passed|examples?|specs?|properties)\b.*|\bfound no issues\b.*|"
    r"\ball checks passed\b.*|\bsuccessfully (?:installed|built|compiled|migrated)\b.*|\bno (?:errors|issues)\b.*|"
    r"\bgenerated \S+ app\b|\bmigrated\b.*|\bbuild (?:succeeded|complete[d]?)\b.*|\bchecked \d+ files?\b.*|"
    r"\bformatted \d+ files?\b.*|\bfixed \d+ files?\b.*|\bresolution completed\b.*",
    re.I,
)


WRAPPERS = {"timeout": r"-\S+|\d+(?:\.\d+)?[smhd]?", "nice": r"-n|-?\d+", "ionice": r"-\S+|\d+", "rtk": r"proxy",
            "env": r"-\S+"}  # fmt: skip
"""Programs that run the command after them, with the arguments they take first (``timeout 120 docker run``; the
variables ``env`` sets are assignments like any other)."""
PREFIXES = frozenset({"sudo", "time", "command", "exec", "nohup", "builtin"})


def _without_wrapper(toks: list[str]) -> list[str]:
    """``toks`` (headed by one of :data:`WRAPPERS`) without that program and the arguments it takes first."""
    args, toks = re.compile(WRAPPERS[toks[0]]), toks[1:]
    while toks and args.fullmatch(toks[0]):
        toks = toks[1:]
    return toks


def strip_front(toks: list[str]) -> tuple[list[str], list[str]]:
    """(the variable assignments in front, the command): ``toks`` without them, :data:`PREFIXES` and
    :data:`WRAPPERS` (with their arguments). ``timeout 60 rtk bun run test`` is ``bun run test``, and a later ``rtk git
    status`` is not its re-run; ``DB_HOST=10.0.0.5 pnpm dev`` is ``pnpm dev`` given ``DB_HOST=10.0.0.5``."""
    assigned: list[str] = []
    while toks:
        if _ENV_ASSIGN_RE.match(toks[0]):
            assigned.append(toks[0])
            toks = toks[1:]
        elif toks[0] in PREFIXES:
            toks = toks[1:]
        elif toks[0] in WRAPPERS:
            toks = _without_wrapper(toks)
        else:
            break
    return assigned, toks


def unwrapped(toks: list[str]) -> list[str]:
    """The command of ``toks``, what is in front of it off (:func:`strip_front`)."""
    return strip_front(toks)[1]


def names_a_secret(assignment: str) -> bool:
    """Whether a variable assignment's name says it holds a credential (``API_TOKEN=…``, ``DB_PASSWORD=…``): its
    value is never repeated, whatever the redactor made of it."""
    return bool(SECRET_WORDS & set(assignment.split("=", 1)[0].lower().split("_")))


def split_segments(cmd: str) -> list[list[str]]:
    segments = []
    for seg in re.split(r"\s*(?:&&|\|\||;|\n)\s*", cmd):
        seg = seg.split("|", 1)[0].strip()
        if not seg:
            continue
        toks = unwrapped(seg.split())
        if toks:
            segments.append(toks)
    return segments


_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_WORKSPACE_FLAGS = frozenset({"--filter", "-F", "--workspace", "-w", "--prefix", "-C", "--cwd", "--dir"})
# a script's name says what it does, in any of its parts ("css:build", "test-unit", "db:migrate")
_SCRIPT_CATEGORY = {
    "test": "test", "e2e": "test", "spec": "test", "lint": "lint", "check": "lint", "typecheck": "lint",
    "format": "lint", "fmt": "lint", "build": "build", "compile": "build", "bundle": "build", "dev": "run",
    "start": "run", "serve": "run", "preview": "run", "migrate": "migration", "migration": "migration",
}  # fmt: skip


def workspace_split(toks: list[str]) -> tuple[list[str], str]:
    """A package-manager command without its workspace selector (``pnpm --filter api dev`` -> ``pnpm dev``,
    ``api``), so the script decides what the command is; other commands are returned as they are."""
    if not toks or posixpath.basename(toks[0]).lower() not in _PACKAGE_MANAGERS:
        return toks, ""
    kept, where, i = [toks[0]], "", 1
    while i < len(toks):
        tok = toks[i]
        flag, eq, value = tok.partition("=")
        if flag in _WORKSPACE_FLAGS and not where:
            where = value if eq else (toks[i + 1] if i + 1 < len(toks) else "")
            i += 1 if eq else 2
            continue
        kept.append(tok)
        i += 1
    return kept, where


def looks_up(cmd: str) -> bool:
    """Every segment of ``cmd`` looks something up (``gh run view 123 --log-failed``): its program's first or second
    word is one of :data:`LOOKUP_VERBS`."""
    segs = [seg for seg in split_segments(cmd) if seg and seg[0] not in CMD_PREFIX_SKIP]
    return bool(segs) and all(set([w for w in seg[1:] if not w.startswith("-")][:2]) & LOOKUP_VERBS for seg in segs)


def family_of(toks: list[str]) -> str:
    toks, where = workspace_split(toks)
    if where:
        return f"{family_of(toks)} --filter {where}"
    head = posixpath.basename(toks[0]).lower()
    rest = [t for t in toks[1:] if not t.startswith("-")]
    if head in ("python3", "python3.11", "python3.12"):
        head = "python"
    if head in _INTERPRETERS:
        if len(toks) > 2 and toks[1] == "-m":
            return f"{head} -m {toks[2]}"
        if len(toks) > 1 and toks[1] in ("-c", "-e"):
            return f"{head} {toks[1]}"
        if head in ("deno", "bun") and rest and rest[0] in ("run", "test", "install", "add"):
            return f"{head} {' '.join(rest[:2]) if rest[0] == 'run' else rest[0]}"
        return f"{head} {posixpath.basename(rest[0])}" if rest else head
    if head in ("npm", "pnpm", "yarn") and rest and rest[0] == "run" and len(rest) > 1:
        return f"{head} run {rest[1]}"
    if head == "npx" and rest:
        return f"npx {rest[0]}"
    if head == "git":
        i = 1
        while i < len(toks) and toks[i].startswith("-"):
            i += 2 if toks[i] in ("-C", "-c") else 1
        return f"git {toks[i]}" if i < len(toks) else "git"
    if head in _SUB_CLIS and rest:
        return f"{head} {rest[0]}"
    return head


def main_segment(cmd: str) -> list[str]:
    segments = split_segments(cmd)
    candidates = [s for s in segments if posixpath.basename(s[0]) not in CMD_PREFIX_SKIP]
    if not candidates:
        return segments[0] if segments else []
    for seg in candidates:
        fam = family_of(seg)
        if fam == "git add" and len(candidates) > 1:
            continue
        return seg
    return candidates[0]


def family(cmd: str) -> str:
    seg = main_segment(cmd)
    return family_of(seg) if seg else ""


def category(cmd: str) -> str | None:
    seg, _ = workspace_split(main_segment(cmd))
    if not seg:
        return None
    text = " ".join([posixpath.basename(seg[0]).replace("python3", "python")] + seg[1:])
    for name, rx in _CATEGORY_RES:
        if rx.match(text):
            return name
    if posixpath.basename(seg[0]).lower() in _PACKAGE_MANAGERS and len(seg) > 1:
        script = seg[2] if seg[1] == "run" and len(seg) > 2 else seg[1]
        for part in re.split(r"[:_-]", script.lower()):
            if part in _SCRIPT_CATEGORY:
                return _SCRIPT_CATEGORY[part]
    return None


def clean_cmd(cmd: str, cwd: str | None, limit: int = 110) -> str:
    text = cmd.strip()
    text = re.sub(r"\s*2>&1|\s*2>\s*/dev/null|\s*>\s*/dev/null", "", text)
    text = re.sub(r"\s*\|\s*(?:tail|head)(?:\s+-n)?\s+-?\d+\b", "", text)
    text = re.sub(r"\s*\|\s*grep\s+(?:-\w+\s+)*(?:\"[^\"]*\"|'[^']*'|\S+)", "", text)
    text = re.sub(r"\s*(?:;|&&)\s*echo\s+(?:\"[^\"]*\"|'[^']*'|\S+)\s*(?=;|&&|$)", "", text)
    text = re.sub(r"\s*\|\|\s*true\s*$", "", text)
    text = re.sub(r"^\s*(?:;|&&)\s*|\s*(?:;|&&)\s*$", "", text)
    if cwd:
        root = cwd.rstrip("/")
        text = re.sub(rf"^cd\s+['\"]?{re.escape(root)}['\"]?\s*&&\s*", "", text)
        text = text.replace(root + "/", "")
    text = re.sub(r"^cd\s+(/[\w.@-]+)+/([\w.@-]+)\s*&&", r"cd \2 &&", text)
    first = text.splitlines()[0] if text else ""
    if "\n" in text or "<<" in first:
        first = re.sub(r"([\"']?)\$\(cat <<.*$", r"\1…\1", first)
        first = first.rstrip() + ("" if first.rstrip().endswith(("…", '…"', "…'")) else " …")
    first = re.sub(r'(-m\s+)"[^"]{40,}"?', r'\1"…"', first)
    return cap(first, limit)


def path_args(cmd: str) -> list[str]:
    seg = main_segment(cmd)
    return [
        t.strip("'\"")
        for t in seg[1:]
        if not t.startswith("-")
        and ("/" in t or t == "." or re.search(r"\.\w{1,5}$", t))
        and "=" not in t
        and not t.startswith(("http:", "https:"))
    ]


def same_target(failed: str, ok: str) -> bool:
    """True when ``ok`` runs on what ``failed`` ran on (or on everything: no path arguments at all)."""
    ok_args = path_args(ok)
    if not ok_args:
        return True
    ok_text = " ".join(ok_args) + " " + ok
    return all(posixpath.basename(a.rstrip("/")) in ok_text for a in path_args(failed))


def status(call: Call) -> str:
    """``ok`` / ``fail`` / ``unknown`` for a Bash call."""
    tr = call.result
    if tr is None:
        return "unknown"
    text = tr.text or ""
    head = text[:400]
    if tr.interrupted or head.lstrip().startswith("[Request interrupted") or "doesn't want to proceed" in head:
        return "unknown"
    if "Command running in background" in head or "<tool_use_error>" in head:
        return "unknown"
    if tr.is_error:
        return "fail"
    m = re.match(r"\s*Exit code (\d+)", text)
    if m:
        return "fail" if m.group(1) != "0" else "ok"
    tail = ANSI_RE.sub("", tail_text(text))
    if category(call.command) and _FAIL_TEXT_RE.search(tail) and not passed_summary(tail):
        return "fail"
    if _GH_REFUSED_RE.search(text[:2000]) and re.search(r"(?:^|[;&|(]\s*)gh\s", call.command):
        return "fail"  # gh's "X …" refusal, its exit code lost in a pipe (`gh pr merge 1 2>&1 | tee log`)
    if category(call.command) == "test" and _NOTHING_RAN_RE.search(tail):
        return "unknown"  # a test run that found no tests shows nothing about the suite (and the filter was wrong)
    return "ok"


_GH_REFUSED_RE = re.compile(r"^X (?:Pull request|Could not|Failed|No |Merge|Run |Release |GraphQL)", re.M)
_NOTHING_RAN_RE = re.compile(
    r"\bno tests? (?:found|ran|were found|to run|files found)\b|\bcollected 0 items\b|\bran 0 tests\b"
    r"|^\s*Tests?:\s+0 total\b",
    re.I | re.M,
)


_COUNT_LINE_RE = re.compile(  # a runner's count line: " 42 pass", "0 fail", "===== 1 failed, 2 passed in 0.3s ====="
    r"^[\s=*-]*(?:tests?:?\s*)?\d+ (?:pass|passed|fail|failed|failures?|errors?|skipped|todo|tests?)\b", re.I
)
_ZERO_FAIL_RE = re.compile(r"\b0 (?:fail|failed|failures?|errors?)\b|\ball \d* ?tests? passed\b", re.I)
_SOME_FAIL_RE = re.compile(r"\b[1-9]\d* (?:fail|failed|failures?|errors?)\b", re.I)


def passed_summary(text: str) -> bool:
    """The runner's own summary says nothing failed ("42 pass / 0 fail"): an "error: …" line above it is output a
    test printed on purpose, not a failure."""
    summary = "\n".join(line for line in text.splitlines() if _COUNT_LINE_RE.match(line))
    return bool(_ZERO_FAIL_RE.search(summary)) and not _SOME_FAIL_RE.search(summary)


def tail_text(text: str, head: int = 20000, tail: int = 6000) -> str:
    if len(text) <= head + tail:
        return text
    return text[:head] + "\n" + text[-tail:]


_ERR_PRIORITY: tuple[re.Pattern[str], ...] = (
    # git's reason for refusing a ref ("! [rejected] main -> main (fetch first)"), not the "failed to push some refs"
    # it always adds: that line is the same when a pre-push hook failed, and the two need different fixes
    re.compile(r"^! \[(?:remote )?rejected\].*"),
    re.compile(r"^(?:fatal|error(?:\[\w+\])?|ERROR|Error|npm ERR!)[:!]?\s+\S.*|^✘ \[ERROR\].*|.*\berror TS\d+:.*"
               r"|^\S+:\d+:\d+:? error\b.*"),
    re.compile(r"^\*\* \(\w[\w.]*\).*"),
    re.compile(r"^[A-Z]\w*(?:\.\w+)*(?:Error|Exception|Exit|Interrupt)\b:?.*"),
    re.compile(r"^×\s*(?!Some errors were emitted).+"),
    re.compile(r"^\d+\) test .+"),
    re.compile(r"^\S+\.\w+:\d+(?::\d+)?:[\w/-]+$|^\[[A-Z]\]\s+\w.+"),
    re.compile(r"^(?:FAILED|FAIL)\b.*|.*\b\d+ failed\b.*"),
    re.compile(r".*\b(?:no such file or directory|command not found|permission denied|not found|cannot|can't|"
               r"could not|couldn't|unable to|undefined|unrecognized|invalid|missing|refused|denied|"
               r"not formatted|unused|conflict|ignored|not processed|no files were processed|never match)\b.*",
               re.I),
    re.compile(r".*\b(?:fail(?:ed|ure|s)?|error|exception)\b.*", re.I),
)  # fmt: skip
_ERR_NOISE_RE = re.compile(
    r"^(?:exit code \d+|hint:|compiling \d+|generated \w+ app|running exunit|getting extensions|running setup|"
    r"warning:|\s*at |file \"|\^+$|~+$|>|\$|rebasing \(|recorded resolution|environment variables loaded|"
    r"finished in|randomized with seed|\d+ (?:doctests?|tests?),|resolving|checking \d+ source|please |run '|"
    r"use `|to push the current branch|to have this happen|see \"git help|found \d+ errors?|error: process completed|"
    r"exit status \d|summary: \(done|.*lefthook v\d|checked \d+ files?|formatted \d+ files?|stacktrace:|code:)",
    re.I,
)


def _junky(line: str) -> bool:
    symbols = sum(1 for ch in line if ch in "{}[]%<>=#|\\")
    return symbols > 6 or symbols > 0.12 * len(line)


LOG_PREFIX_RE = re.compile(r"^.*?\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?Z?\s")
"""A log line's prefix up to its timestamp (``gh run view --log``: job, step, ``2026-02-22T01:41:26.49Z``): one
run's, never part of what failed (a fresh reader judged a lesson keyed on one such line noise)."""


def _error_lines(text: str) -> list[str]:
    text = ANSI_RE.sub("", tail_text(text)).replace("\\n", "\n").replace("\r", "\n")
    text = re.sub("[\u2716\u2717\u274c]", "×", text)
    lines = []
    for raw in text.splitlines():
        line = EMOJI_RE.sub("", BOX_RE.sub(" ", LOG_PREFIX_RE.sub("", raw))).strip(" \t│┃|⠙✔")
        line = re.sub(r"^\s*\d+\s*[→│|]\s*|^E\s{2,}", "", line).strip()
        if line and not _ERR_NOISE_RE.match(line) and re.search(r"[A-Za-z]{3}", line) and not _junky(line):
            lines.append(line)
    return lines


def _pick_error(lines: list[str], *, fallback: bool = True) -> str:
    for rx in _ERR_PRIORITY:
        for i, line in enumerate(lines):
            if not rx.match(line):
                continue
            m = re.match(r"^\d+\) test (.+?)(?: \([\w.]+\))?$", line)
            if m:
                follow = next((ln for ln in lines[i + 1 : i + 6] if "Assertion" in ln or ln.startswith("**")), "")
                return cap(f"test '{m.group(1)}' failed" + (f": {follow}" if follow else ""), 170)
            if line[0] == "×":
                line = line[1:].strip()
                rule = re.match(r"^\S+:\d+:\d+\s+([\w/-]+)$", lines[i - 1]) if i else None
                if rule:
                    line = f"{rule.group(1)}: {line}"
            elif re.match(r"^\S+\.\w+:\d+(?::\d+)?:[\w/-]+$", line) and i + 1 < len(lines):
                line = f"{line} {lines[i + 1]}"
            line = re.sub(r"^\[[A-Z]\]\s*", "", line)
            return cap(line, 170)
    return cap(lines[0], 170) if lines and fallback else ""


def error_line(text: str) -> str:
    """The most telling line of a failure output (ANSI, box drawing and progress noise removed)."""
    lines = _error_lines(text)
    if not lines:
        return ""
    sections = [m.group(1) for m in re.finditer(r"^\[([A-Z]{3,})\]", text.replace("\\n", "\n"), re.M)]
    if sections and "validation failed" in text[:300].lower():
        body = [
            ln
            for ln in lines
            if not re.match(r"^\[[A-Z]{3,}\]", ln)
            and "validation failed" not in ln.lower()
            and not re.match(
                r"^(?:checking|analysis|software design|code readability|refactoring|finding suitable"
                r"|run '|fix these|plt is up to date|no :ignore_warnings|starting dialyzer"
                r"|total errors"
                r"|warning|consistency|design)",
                ln,
                re.I,
            )
        ]
        detail = _pick_error(body, fallback=False) if body else ""
        head = "pre-commit validation failed (" + ", ".join(dict.fromkeys(sections)) + ")"
        return cap(head + (": " + detail if detail else ""), 170)
    return _pick_error(lines)


"""Commands worth knowing: project-specific ways to test, build, lint, migrate and run that worked.

A command is kept when it says something a newcomer would not guess — a project script (``npm run
check``, ``make ci``), flags, an environment, a working directory, a filter — or when it ended a failure
or the user asked for it. The default command of a toolchain on its own (``mix test``, ``cargo build``,
``npm install``) is not: the quality-gate memory of :mod:`~nous_assets.extract.rules.workflow` already
says which checks the project runs. No output is quoted: test counts are true once.
"""

from __future__ import annotations

import posixpath
import re

from nous_assets.extract.rules import filters, shell
from nous_assets.extract.rules.session import Call, Cand, Stream, cand
from nous_assets.extract.rules.text import clean_md, leading_prose, strip_noise

MAX_COMMANDS = 6
_PURPOSE = {
    "test": "Run tests with",
    "lint": "Check/lint with",
    "build": "Build with",
    "install": "Install dependencies with",
    "migration": "Run migrations/codegen with",
    "run": "Start it with",
    "github": "On GitHub:",
}
_WHEN = {
    "test": "when running tests",
    "lint": "when linting or formatting",
    "build": "when building",
    "install": "when installing dependencies",
    "migration": "when changing the database schema",
    "run": "when starting the app",
    "github": "when working with pull requests and CI",
}
_GITHUB = (
    ("pr create", "Open pull requests with"), ("pr merge", "Merge pull requests with"),
    ("pr checks", "Check CI status with"), ("run view", "Read CI logs with"),
    ("run rerun", "Re-run failed CI jobs with"),
    ("run watch", "Watch CI with"), ("pr view", "Read a pull request with"), ("pr diff", "Read a pull request with"),
    ("api", "Query GitHub with"), ("issue", "Track issues with"), ("release", "Release with"),
)  # fmt: skip
_DEFAULT_COMMANDS = frozenset({
    "mix test", "mix compile", "mix format", "mix deps.get", "mix credo", "mix dialyzer", "cargo build", "cargo test",
    "cargo fmt", "cargo clippy", "go test", "go build", "pytest", "python -m pytest", "npm test", "npm install",
    "npm ci", "pnpm install", "yarn install", "yarn", "bun install", "pip install", "uv sync", "make", "tsc",
    "ruff check", "ruff format", "mypy", "black", "npm run build", "npm run test", "npm run lint",
})  # fmt: skip


def commands(s: Stream, closers: dict[int, str], gate: set[str] | frozenset[str] = frozenset()) -> list[Cand]:
    """One candidate per command family that worked (the last good variant), best few kept.

    ``gate`` holds the quality gate's commands: they are remembered there already.
    """
    best: dict[str, tuple[int, Call, str]] = {}
    for i, call in enumerate(s.calls):
        if not call.command or not _worked(s, call):
            continue
        cat = shell.category(call.command)
        if cat is None or filters.bypass(call.command):
            continue
        fam = shell.family(call.command)
        best.pop(fam, None)  # keep the last successful variant, at its own position
        best[fam] = (i, call, cat)
    user_texts = [(p, leading_prose(clean_md(strip_noise(s.turns[p].text))).lower()) for p in s.user_positions]
    out: list[Cand] = []
    for fam, (i, call, cat) in best.items():
        cmd = shell.clean_cmd(call.command, call.turn.cwd)
        after_fix = i in closers
        asked = any(
            p < call.pos and fam.split()[0] in txt and (len(fam.split()) == 1 or fam.split()[-1] in txt)
            for p, txt in user_texts
        )
        plain = _plain(cmd)
        if plain in gate or (plain in _DEFAULT_COMMANDS and not after_fix and not asked):
            continue
        if cat == "github":
            if "--" not in cmd and " api " not in f" {cmd} ":
                continue  # `gh pr view 12` says nothing general; `gh pr merge <n> --squash --delete-branch` does
            cmd = re.sub(r"(?<=[ /=#])\d+(?=[ /]|$)", "<n>", cmd)
            cmd = re.sub(r"(?<=--body )(?:\"[^\"]*\"?|'[^']*'?|\S+)|(?<=--title )(?:\"[^\"]*\"|'[^']*'|\S+)", "…", cmd)
        if cat == "migration":  # a migration's name is this change's, the command is every change's
            cmd = re.sub(r"(?<=--name )(?:\"[^\"]*\"|'[^']*'|\S+)|(?<=--name=)\S+", "<name>", cmd)
        if filters.one_off(cmd):
            continue
        out.append(_candidate(s, call, cmd, cat, fam, after_fix=after_fix, asked=asked))
    out.sort(key=lambda c: (-c.score, -c.pos))
    kept: list[Cand] = []
    for c in out:  # one learning per tool: "mix format && mix compile" adds nothing once "mix compile" is kept
        if not any(c.families & k.families for k in kept):
            kept.append(c)
    return sorted(kept[:MAX_COMMANDS], key=lambda c: c.pos)


def _worked(s: Stream, call: Call) -> bool:
    state = s.status(call)
    if state == "ok":
        return True
    background = bool(call.inp.get("run_in_background")) or (
        call.result is not None and "running in background" in call.result.text[:200]
    )
    return state == "unknown" and background and shell.category(call.command) == "run"


def _plain(cmd: str) -> str:
    """The command without redirections and trailing pipes, for comparing with toolchain defaults."""
    return re.sub(r"\s+", " ", cmd.split("|")[0]).strip()


_RUN_ENV_RE = re.compile(r"^((?:[A-Z]+_)?ENV=\w+\s+)")


def _env_prefix(cmd: str) -> str:
    """``MIX_ENV=test `` / ``NODE_ENV=production ``: a command run in another environment is another command
    (migrating the test database is not migrating the dev one), so its slot says which."""
    m = _RUN_ENV_RE.match(cmd)
    return m.group(1) if m else ""


def _candidate(s: Stream, call: Call, cmd: str, cat: str, fam: str, *, after_fix: bool, asked: bool) -> Cand:
    where = ""
    m = re.match(r"cd ([\w./@-]+) &&\s*(.*)$", cmd)
    if m:
        where, cmd = f" (from {m.group(1).rstrip('/')}/)", m.group(2)
    extra = ""
    if cat == "run" and (call.inp.get("run_in_background") or "running in background" in (call.result.text[:200]
                                                                                            if call.result else "")):
        extra = " It runs in the background; read its output file to follow it."
    elif after_fix:
        extra = " It passed once the failure before it was fixed."
    elif asked:
        extra = " The user asked for it."
    purpose = _PURPOSE[cat]
    if cat == "github":
        sub = " ".join(cmd.split()[1:3])
        purpose = next((label for key, label in _GITHUB if sub.startswith(key)), "Use GitHub with")
    content = f"{purpose} `{cmd}`{where}.{extra}"
    score = {"test": 2.0, "build": 1.6, "lint": 1.4, "migration": 1.6, "install": 1.0, "run": 1.5, "github": 1.5}[cat]
    score += (3 if after_fix else 0) + (2 if asked else 0) + (1 if where or len(cmd.split()) > 2 else 0)
    c = cand("command", content, call.turn, s.gpos[call.pos], call.turns(), cmd, applies_when=_WHEN[cat],
             source_ref=cmd if len(cmd) <= 60 else fam, score=score, basis="check")  # fmt: skip
    c.hints = [cmd, "Bash"]
    c.link_key = f"{fam}@{call.pos}" if after_fix else None
    c.domain = shell.CATEGORY_DOMAIN[cat]
    c.slot = f"cmd:{cat}:{_env_prefix(cmd)}{fam}"
    c.families = frozenset(
        shell.family_of(seg)
        for seg in shell.split_segments(call.command)
        if posixpath.basename(seg[0]) not in shell.CMD_PREFIX_SKIP
    )
    return c

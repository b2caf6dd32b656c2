"""Pure, deterministic helpers that tag a learning with concept phrases and a domain.

Used by the heuristic extractor (and usable by any provider that needs a fallback). No ML, no I/O:
a small technology lexicon, file extension → language, command/sub-command names, code identifiers
split into words, and crude noun phrases (runs of non-stop-words). Everything is lowercase and
whitespace-normalised so it passes the extraction schema's concept check.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

__all__ = ["MAX_CONCEPTS", "MIN_CONCEPTS", "extract_concepts", "infer_domain", "language_for_path", "normalise"]

MIN_CONCEPTS, MAX_CONCEPTS = 3, 10
_MAX_LEN = 80

# ---------------------------------------------------------------------------------------------------------
# lexicons

#: regex (matched case-insensitively on word boundaries) -> canonical concept
_TECH: tuple[tuple[str, str], ...] = (
    (r"claude code", "claude code"),
    (r"github actions?", "github actions"),
    (r"docker[ -]compose", "docker compose"),
    (r"react[ -]router", "react router"),
    (r"phoenix[ .]?live[ _]?view|liveview(?:test)?", "phoenix liveview"),
    (r"pre-commit", "pre-commit"),
    (r"node\.?js", "node.js"),
    (r"next\.js|nextjs", "next.js"),
    (r"xterm\.js|xterm", "xterm.js"),
    (r"highlight\.js", "highlight.js"),
    (r"tailwind(?:css)?", "tailwind css"),
    (r"type-?script", "typescript"),
    (r"java-?script", "javascript"),
    (r"python3?", "python"),
    (r"pytest", "pytest"),
    (r"ruff", "ruff"),
    (r"mypy", "mypy"),
    (r"pyright", "pyright"),
    (r"django", "django"),
    (r"flask", "flask"),
    (r"fastapi", "fastapi"),
    (r"sqlalchemy", "sqlalchemy"),
    (r"alembic", "alembic"),
    (r"pandas", "pandas"),
    (r"polars", "polars"),
    (r"pandera", "pandera"),
    (r"numpy", "numpy"),
    (r"pydantic", "pydantic"),
    (r"dagster", "dagster"),
    (r"sqlite3?", "sqlite"),
    (r"postgres(?:ql)?", "postgresql"),
    (r"mysql", "mysql"),
    (r"redis", "redis"),
    (r"duckdb", "duckdb"),
    (r"docker(?:file)?", "docker"),
    (r"containerfile", "docker"),
    (r"kubernetes|kubectl|k8s", "kubernetes"),
    (r"terraform", "terraform"),
    (r"nginx", "nginx"),
    (r"git", "git"),
    (r"github", "github"),
    (r"gh pr", "github pull request"),
    (r"worktrees?", "git worktree"),
    (r"rebase", "git rebase"),
    (r"npm", "npm"),
    (r"npx", "npx"),
    (r"pnpm", "pnpm"),
    (r"yarn", "yarn"),
    (r"bun", "bun"),
    (r"deno", "deno"),
    (r"react", "react"),
    (r"vite", "vite"),
    (r"vitest", "vitest"),
    (r"jest", "jest"),
    (r"esbuild", "esbuild"),
    (r"webpack", "webpack"),
    (r"eslint", "eslint"),
    (r"prettier", "prettier"),
    (r"biome", "biome"),
    (r"knip", "knip"),
    (r"lefthook", "lefthook"),
    (r"prisma", "prisma"),
    (r"zod", "zod"),
    (r"tsc", "tsc"),
    (r"elixir", "elixir"),
    (r"phoenix", "phoenix"),
    (r"ecto", "ecto"),
    (r"ash(?:_sqlite|_postgres)?", "ash"),
    (r"oban", "oban"),
    (r"exunit", "exunit"),
    (r"credo", "credo"),
    (r"dialyzer", "dialyzer"),
    (r"hex\.pm", "hex"),
    (r"erlang", "erlang"),
    (r"rust", "rust"),
    (r"cargo", "cargo"),
    (r"golang", "go"),
    (r"ruby", "ruby"),
    (r"rails", "rails"),
    (r"rspec", "rspec"),
    (r"bundler", "bundler"),
    (r"gradle", "gradle"),
    (r"maven", "maven"),
    (r"java", "java"),
    (r"kotlin", "kotlin"),
    (r"swift", "swift"),
    (r"tmux", "tmux"),
    (r"bash", "bash"),
    (r"zsh", "zsh"),
    (r"playwright", "playwright"),
    (r"puppeteer", "puppeteer"),
    (r"selenium", "selenium"),
    (r"langgraph", "langgraph"),
    (r"langchain", "langchain"),
    (r"openai", "openai"),
    (r"anthropic", "anthropic"),
    (r"gpt-?\d(?:\.\d)?o?", "gpt"),
    (r"mcp", "mcp"),
    (r"sse|server-sent events", "server-sent events"),
    (r"websockets?", "websocket"),
    (r"graphql", "graphql"),
    (r"opentelemetry|otel", "opentelemetry"),
    (r"sentry", "sentry"),
    (r"auth0", "auth0"),
    (r"oauth2?", "oauth"),
    (r"jwt", "jwt"),
    (r"json ?api", "json api"),
    (r"jsonl", "jsonl"),
    (r"yaml|yml", "yaml"),
    (r"toml", "toml"),
    (r"uv", "uv"),
    (r"pip", "pip"),
    (r"poetry", "poetry"),
    (r"conda", "conda"),
    (r"homebrew|brew", "homebrew"),
    (r"makefile", "make"),
    (r"vercel", "vercel"),
    (r"aws", "aws"),
    (r"gcp|google cloud", "google cloud"),
    (r"azure", "azure"),
    (r"todomvc", "todomvc"),
    (r"beads", "beads"),
)
_TECH_RES = tuple((re.compile(rf"(?<![\w.-])(?:{pat})(?![\w-])", re.IGNORECASE), name) for pat, name in _TECH)

_EXT_LANG: dict[str, str] = {
    ".py": "python", ".pyi": "python", ".ipynb": "jupyter",
    ".ex": "elixir", ".exs": "elixir", ".heex": "elixir", ".eex": "elixir",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".js": "javascript", ".jsx": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".rs": "rust", ".go": "go", ".rb": "ruby", ".java": "java", ".kt": "kotlin", ".swift": "swift",
    ".c": "c", ".h": "c", ".cpp": "c++", ".cc": "c++", ".hpp": "c++", ".cs": "c#", ".php": "php",
    ".sh": "shell", ".bash": "shell", ".zsh": "shell", ".sql": "sql", ".md": "markdown",
    ".yml": "yaml", ".yaml": "yaml", ".toml": "toml", ".json": "json", ".jsonl": "jsonl",
    ".css": "css", ".scss": "css", ".html": "html", ".vue": "vue", ".svelte": "svelte",
    ".lua": "lua", ".scala": "scala", ".dart": "dart", ".r": "r", ".erl": "erlang",
}  # fmt: skip
_NAME_LANG: dict[str, str] = {
    "dockerfile": "docker", "containerfile": "docker", "makefile": "make", "mix.exs": "elixir",
    "package.json": "npm", "pyproject.toml": "python", "cargo.toml": "rust", "go.mod": "go", "gemfile": "ruby",
}  # fmt: skip

#: CLIs whose second word is a meaningful sub-command ("git push", "mix test")
_SUBCOMMAND_CLIS = (
    "git", "mix", "npm", "pnpm", "yarn", "cargo", "go", "docker", "uv", "pip", "poetry", "make", "gh", "bd",
    "kubectl", "npx", "bundle", "rails", "alembic", "terraform", "brew", "bun", "deno",
)  # fmt: skip
_SUBCOMMAND_RE = re.compile(
    r"(?<![\w/.-])(" + "|".join(_SUBCOMMAND_CLIS) + r")\s+(run\s+[a-z][\w:.-]*|[a-z][\w:.-]*)", re.IGNORECASE
)
_SUBCOMMAND_SKIP = {"the", "a", "an", "to", "is", "and", "or", "on", "in", "it", "that", "this", "with", "for", "of"}

STOP_WORDS: frozenset[str] = frozenset(
    """
    a about above after again against ago ah all almost also although always am among an and another any anything
    anyway are aren around as ask asked at away back be because been before being below between both but by can
    cannot could couldn did didn do does doesn doing don done down during each either else enough etc even ever
    every everything few for from further get gets getting go goes going gone got had hadn has hasn have haven
    having he her here hers herself him himself his how however i if in into is isn it its itself just kind let
    lets like likely ll me might mine more most much must my myself need needs never next no nor not now of off
    often oh ok okay on once one only onto or other others our ours ourselves out over own per perhaps please
    pretty quite rather re really right same say says see seem seems she should shouldn since so some something
    sometimes soon still such sure than thank thanks that the their theirs them themselves then there these they
    thing things think this those though through thus to too toward under until up upon us use used uses using
    ve very via want wanted wants was wasn way we well were weren what whatever when where whether which while
    who whom whose why will with within without won would wouldn yeah yes yet you your yours yourself
    add added adding apply applied change changed changes check checked checking create created creating
    fix fixed fixes fixing make makes making run ran runs running try tried trying work worked working works
    look looks looking seems show shows showing start started starting stop stopped keep kept put puts set sets
    give gives take takes call called calls find found write wrote written read reads edit edited editing
    update updated updating remove removed removing replace replaced move moved test tested passes passed pass
    fail failed fails failure succeeded success successful successfully instead actually maybe probably
    user claude assistant correction preference decision fact command configuration learning project session
    file files code issue issues problem problems thing stuff way bit lot lots part parts time times today
    new old good bad better best great nice fine wrong correct exactly basically simply really sorry wth
    first second last exit status line lines output error errors step steps now later option options
    agree agreed approved proposed proposal approach plan done returned return yes no hmm uh wait
    said tried rejected interrupted started attempt cause later worked around bypasses via fatal
    """.split()
)
_WORD_RE = re.compile(r"[a-z][a-z0-9+#]*(?:[-'][a-z0-9]+)*")
_CAMEL_RE = re.compile(r"\b(?:[A-Z][a-z0-9]+){2,}[A-Za-z0-9]*\b|\b[a-z]+(?:[A-Z][a-z0-9]+)+\b")
_SNAKE_RE = re.compile(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+){1,4}\b")
_PATH_RE = re.compile(
    r"(?:[\w.@~-]+/)*[\w@-]+(?:\.[\w-]+)*\.[A-Za-z][\w]{0,9}\b|\b(?:Dockerfile|Makefile|Containerfile)\b"
)
_CAMEL_SPLIT = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z]+")

# ---------------------------------------------------------------------------------------------------------
# domains: (domain, keywords/phrases) in tie-break order

_DOMAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "testing",
        (
            "test",
            "tests",
            "testing",
            "pytest",
            "exunit",
            "jest",
            "vitest",
            "mock",
            "mocks",
            "mocking",
            "fixture",
            "fixtures",
            "assert",
            "assertion",
            "mix test",
            "rspec",
            "coverage",
            "liveviewtest",
            "playwright",
        ),
    ),
    (
        "git",
        (
            "git",
            "commit",
            "push",
            "rebase",
            "branch",
            "merge",
            "worktree",
            "git worktree",
            "pull request",
            "github",
            "upstream",
            "gitignore",
            "git rebase",
            "git push",
            "git commit",
            "checkout",
        ),
    ),
    ("ci", ("ci", "github actions", "pipeline", "workflow", "pre-commit", "lefthook", "pre-push")),
    (
        "linting",
        (
            "lint",
            "linter",
            "format",
            "formatter",
            "formatting",
            "credo",
            "biome",
            "eslint",
            "ruff",
            "prettier",
            "dialyzer",
            "knip",
            "typecheck",
            "mypy",
            "pyright",
            "mix format",
        ),
    ),
    (
        "database",
        (
            "database",
            "db",
            "sqlite",
            "postgresql",
            "migration",
            "migrations",
            "migrate",
            "ecto",
            "prisma",
            "sql",
            "schema",
            "alembic",
            "sqlalchemy",
            "mysql",
            "redis",
            "duckdb",
        ),
    ),
    ("containers", ("docker", "container", "containers", "dockerfile", "kubernetes", "image", "docker compose")),
    (
        "dependencies",
        (
            "install",
            "dependency",
            "dependencies",
            "deps",
            "package.json",
            "mix.exs",
            "pip",
            "uv",
            "npm install",
            "upgrade",
            "version",
            "lockfile",
            "hex",
        ),
    ),
    ("build", ("build", "compile", "compiling", "esbuild", "webpack", "vite", "tsc", "make", "bundle", "assets")),
    (
        "ai",
        (
            "llm",
            "openai",
            "anthropic",
            "gpt",
            "claude code",
            "agent",
            "agents",
            "model",
            "prompt",
            "mcp",
            "langgraph",
            "langchain",
        ),
    ),
    (
        "api",
        (
            "api",
            "endpoint",
            "http",
            "rest",
            "server-sent events",
            "streaming",
            "websocket",
            "request",
            "response",
            "json api",
        ),
    ),
    (
        "frontend",
        (
            "react",
            "css",
            "html",
            "liveview",
            "phoenix liveview",
            "browser",
            "ui",
            "tailwind css",
            "xterm.js",
            "javascript",
            "typescript",
            "component",
            "template",
        ),
    ),
    ("observability", ("opentelemetry", "sentry", "tracing", "trace", "logging", "logs", "metrics")),
    ("config", ("config", "configuration", "settings", "env", "environment", ".env")),
    ("shell", ("bash", "shell", "zsh", "tmux", "terminal")),
)
_LANG_DOMAINS = ("python", "elixir", "typescript", "javascript", "rust", "go", "ruby", "java", "kotlin", "swift")


def normalise(phrase: str) -> str:
    """Lowercase, collapse whitespace, trim punctuation at the ends, cap at 80 chars."""
    text = " ".join(phrase.lower().split()).strip(" .,;:!?\"'`()[]{}<>*_-/\\|")
    if len(text) > _MAX_LEN:
        text = text[:_MAX_LEN].rsplit(" ", 1)[0].strip()
    return text


def language_for_path(path: str) -> str | None:
    """``lib/foo.ex`` -> ``elixir``; ``Dockerfile`` -> ``docker``; None when unknown."""
    name = path.replace("\\", "/").rsplit("/", 1)[-1].lower()
    if name in _NAME_LANG:
        return _NAME_LANG[name]
    if name.startswith(("dockerfile", "containerfile")):
        return "docker"
    dot = name.rfind(".")
    return _EXT_LANG.get(name[dot:]) if dot > 0 else None


def _split_identifier(ident: str) -> str:
    ident = ident.split("/")[0]
    if "_" in ident:
        parts = [p for p in ident.lower().split("_") if p]
    else:
        parts = [p.lower() for p in _CAMEL_SPLIT.findall(ident)]
    return " ".join(parts[:4])


class _Bag:
    """Ordered, de-duplicated concept collector."""

    def __init__(self) -> None:
        self.items: list[str] = []

    def add(self, phrase: str, *, force: bool = False) -> None:
        value = normalise(phrase)
        if not value or value in self.items or len(value) < 2:
            return
        if not force and (value in STOP_WORDS or value.isdigit()):
            return
        self.items.append(value)


def _tech(text: str, bag: _Bag) -> None:
    hits: list[tuple[int, str]] = []
    for rx, name in _TECH_RES:
        m = rx.search(text)
        if m:
            hits.append((m.start(), name))
    for _, name in sorted(hits, key=lambda h: (h[0], h[1])):
        bag.add(name)


def _subcommands(text: str, bag: _Bag) -> None:
    for m in _SUBCOMMAND_RE.finditer(text):
        sub = m.group(2).lower()
        if sub.split()[0] in _SUBCOMMAND_SKIP or sub.startswith("-"):
            continue
        bag.add(f"{m.group(1).lower()} {sub}")


def _paths(text: str, bag: _Bag, identifiers: list[str]) -> None:
    for m in _PATH_RE.finditer(text):
        path = m.group(0)
        if "." not in path and path not in ("Dockerfile", "Makefile", "Containerfile"):
            continue
        lang = language_for_path(path)
        if lang is None:
            continue
        bag.add(lang)
        stem = path.rsplit("/", 1)[-1]
        stem = stem.split(".", 1)[0] if not stem.startswith(".") else stem.lstrip(".").split(".", 1)[0]
        if stem and stem.lower() not in ("index", "main", "init", "__init__", "app", "mod"):
            identifiers.append(_split_identifier(stem) if ("_" in stem or _CAMEL_RE.fullmatch(stem)) else stem.lower())


def _noun_phrases(text: str) -> list[str]:
    """Runs of consecutive content words (max 3, keeping the head at the end), in order of appearance."""
    cleaned = re.sub(r"`[^`]*`|https?://\S+|\S+/\S+|\b[\w-]+\.[a-z]{1,4}\b", " | ", text)
    cleaned = _SNAKE_RE.sub(" | ", _CAMEL_RE.sub(" | ", cleaned))
    phrases: list[str] = []
    singles: list[str] = []
    for chunk in re.split(r"[.,;:!?()\[\]{}\"|\n—–]+|\s-\s", cleaned.lower()):
        run: list[str] = []
        for word in _WORD_RE.findall(chunk) + ["the"]:
            token = word.strip("'-")
            if token.endswith("'s"):
                token = token[:-2]
            if len(token) < 3 or token in STOP_WORDS or token.isdigit() or "'" in token:
                if len(run) >= 2:
                    phrases.append(" ".join(run[-3:]))
                elif run:
                    singles.append(run[0])
                run = []
                continue
            run.append(token)
    return phrases + singles


def extract_concepts(text: str, extra: Iterable[str] = (), *, pad: Sequence[str] = ()) -> list[str]:
    """3..10 normalised, lowercase concept phrases for ``text`` (deterministic order).

    ``extra`` holds additional evidence (file paths, commands, tool names) mined the same way as the
    text; ``pad`` (domain / kind / tool names) fills the list when fewer than three were found.
    """
    extra = [e for e in extra if e]
    blob = "\n".join([text or "", *extra])
    bag = _Bag()
    _tech(blob, bag)
    identifiers: list[str] = []
    _paths(blob, bag, identifiers)
    _subcommands(blob, bag)
    no_paths = _PATH_RE.sub(" ", blob)
    for m in _CAMEL_RE.finditer(no_paths):
        identifiers.append(_split_identifier(m.group(0)))
    for m in _SNAKE_RE.finditer(no_paths):
        identifiers.append(_split_identifier(m.group(0)))
    for ident in identifiers[:4]:
        if len(bag.items) >= MAX_CONCEPTS - 2:
            break
        bag.add(ident)
    for phrase in _noun_phrases(text or ""):
        if len(bag.items) >= MAX_CONCEPTS:
            break
        if any(phrase in item.split() or phrase == item for item in bag.items):
            continue
        bag.add(phrase)
    for fallback in (*pad, "coding session", "learning", "general"):
        if len(bag.items) >= MIN_CONCEPTS:
            break
        bag.add(fallback, force=True)
    return bag.items[:MAX_CONCEPTS]


def infer_domain(text: str, concepts: Sequence[str] = ()) -> str:
    """A short area tag (``testing``, ``git``, ``python`` …) chosen by keyword votes; ``general`` if none."""
    lowered = (text or "").lower()
    words = _WORD_RE.findall(lowered)
    counts: dict[str, int] = {}
    for w in words:
        counts[w] = counts.get(w, 0) + 1
    concept_set = list(concepts)
    best, best_score = "", 0
    for domain, keys in _DOMAINS:
        score = 0
        for key in keys:
            if " " in key or "." in key or "-" in key:
                score += 2 * lowered.count(key)
            else:
                score += counts.get(key, 0)
            if key in concept_set:
                score += 2
        if score > best_score:
            best, best_score = domain, score
    if best:
        return best
    for lang in _LANG_DOMAINS:
        if lang in concept_set or counts.get(lang):
            return lang
    return "general"

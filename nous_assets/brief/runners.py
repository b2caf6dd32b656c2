"""What a project command is for, and its canonical form: task runners, package scripts, toolchains, scripts.

A :class:`~nous_assets.brief.shell_split.Segment` becomes a :class:`Use` when it builds, tests, lints,
formats, type-checks, checks, measures the test coverage of or runs the project, recognised generally — task
runners (``mise run``, ``make``, ``just``, ``task``), package scripts (``npm``/``pnpm``/``yarn``/``bun run``), wrappers
(``uv run``, ``poetry run``, ``npx``, ``bundle exec``, ``python -m`` …), toolchains (``cargo``, ``go``,
``mix``, ``dotnet`` …), linters/formatters/test runners, and scripts named for what they do
(``scripts/test.sh``). Names say the purpose in any of their parts (``test:ci``, ``lint:fix``, ``css:build``).

The canonical *form* drops what makes a run one-off: test paths, ``-k``/``-run``/``::name`` filters, a
test runner's positional filters, a linter's file arguments (when the tool defaults to the whole
project), script arguments. ``filtered`` says something was dropped. A formatter or linter that needs its
paths (``prettier --write README.md``) is a one-off and not a use at all.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass

from nous_assets.brief.shell_split import Segment
from nous_assets.extract.rules import shell
from nous_assets.extract.rules.session import Call
from nous_assets.extract.rules.text import ANSI_RE

PURPOSES = ("build", "test", "lint", "format", "typecheck", "check", "coverage", "run")
CHECK_PURPOSES = frozenset({"build", "test", "lint", "format", "typecheck", "check"})

_NAME_PURPOSE = {
    "test": "test", "tests": "test", "spec": "test", "specs": "test", "e2e": "test", "unit": "test",
    "integration": "test", "pytest": "test", "jest": "test", "vitest": "test",
    "lint": "lint", "linter": "lint", "eslint": "lint", "clippy": "lint", "credo": "lint", "ruff": "lint",
    "biome": "lint", "stylelint": "lint", "shellcheck": "lint", "markdownlint": "lint",
    "fmt": "format", "format": "format", "formatting": "format", "prettier": "format", "black": "format",
    "typecheck": "typecheck", "typechecking": "typecheck", "types": "typecheck", "tsc": "typecheck",
    "mypy": "typecheck", "pyright": "typecheck", "typing": "typecheck",
    "check": "check", "checks": "check", "ci": "check", "verify": "check", "validate": "check", "qa": "check",
    "precommit": "check", "preflight": "check",
    "build": "build", "compile": "build", "bundle": "build", "dist": "build",
    "coverage": "coverage", "cov": "coverage", "tarpaulin": "coverage",
    "dev": "run", "start": "run", "serve": "run", "server": "run", "runserver": "run",
}  # fmt: skip
_PRIORITY = ("typecheck", "format", "lint", "coverage", "test", "build", "run", "check")
_SCRIPT_EXT_RE = re.compile(r"\.(?:sh|bash|py|js|mjs|cjs|ts|rb|pl|ps1|cmd|bat)$")
_SEPARATORS_RE = re.compile(r"[-_.:]")
_PARTS_RE = re.compile(r"[-_.:/]+")
_PYTHON_RE = re.compile(r"python3(?:\.\d+)?|py")


@dataclass(frozen=True)
class Use:
    """One project command: what it is for, its identity across flag variants, and its canonical form."""

    purpose: str
    family: str  # identity whatever the flags: "uv run pytest", "bun run test", "make lint", "cargo test"
    form: str  # how to run it, one-off filters dropped: "uv run pytest -q"
    filtered: bool  # a path, test name or filter was dropped to get the form
    runner: str  # "mise" | "make" | "just" | "task" | "npm" | "pnpm" | "yarn" | "bun" | "script" | "" (a tool)
    target: str  # the task/target/script name, the script path, or the tool ("pytest", "cargo")
    workspace: str = ""  # a package manager's workspace selector (`--filter api`)


def purpose_of_name(name: str) -> str | None:
    """The purpose a task, script or target name states (``test:ci`` → test, ``check:types`` → typecheck)."""
    base = posixpath.basename(name).lower()
    base = _SCRIPT_EXT_RE.sub("", base)
    joined = _SEPARATORS_RE.sub("", base)
    if joined in _NAME_PURPOSE:
        return _NAME_PURPOSE[joined]
    found = {_NAME_PURPOSE[p] for p in _PARTS_RE.split(base) if p in _NAME_PURPOSE}
    best = next((p for p in _PRIORITY if p in found), None)
    return None if best == "check" else best  # `check-links`, `validate-config`: one check, not the project's


def classify(seg: Segment) -> Use | None:
    """The project command ``seg`` runs, or None (exploration, git, one-off file formatting …)."""
    words = list(seg.tokens)
    if not words or any("$" in w or "`" in w for w in words):
        return None
    use = _classify(words)
    if use is None or not seg.env:
        return use
    env = " ".join(seg.env)
    return Use(use.purpose, f"{env} {use.family}", f"{env} {use.form}", use.filtered, use.runner, use.target,
               use.workspace)  # fmt: skip


def _classify(words: list[str]) -> Use | None:
    head = _head(words[0])
    if head in _PACKAGE_MANAGERS:
        return _package_script(words)
    if head in _TASK_RUNNERS:
        return _task(words)
    wrapped = _unwrap(words)
    if wrapped is not None:
        prefix, inner = wrapped
        use = _classify(inner) if inner else None
        if use is None and inner and prefix.split()[0] in ("hatch", "pdm"):
            use = _named(inner, runner=prefix.split()[0], prefix=prefix)  # hatch/pdm scripts
            return use
        return _prefixed(prefix, use) if use else None
    return _tool(words) or _script(words)


def _head(word: str) -> str:
    head = posixpath.basename(word).lower()
    return "python" if _PYTHON_RE.fullmatch(head) else head


def _prefixed(prefix: str, use: Use) -> Use:
    return Use(use.purpose, f"{prefix} {use.family}", f"{prefix} {use.form}", use.filtered, use.runner,
               use.target, use.workspace)  # fmt: skip


_PLAIN_WORD_RE = re.compile(r"(?:[\w@%+=:,./^~-]|<[\w|-]+>)+")  # `<version>`-style placeholders read as they are


def render(words: list[str] | tuple[str, ...]) -> str:
    """Words back into a command line, quoting the ones that need it."""
    return " ".join(w if _PLAIN_WORD_RE.fullmatch(w) else '"' + w.replace('"', '\\"') + '"' for w in words)


# ---------------------------------------------------------------------------------------------------------
# package scripts and task runners

_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_WORKSPACE_FLAGS = frozenset({"--filter", "-F", "--workspace", "-w", "--prefix", "-C", "--cwd", "--dir"})
_PM_BUILTINS = frozenset(
    "install i add remove rm uninstall ci init create publish version pack link unlink outdated update up upgrade "
    "why list ls audit info view config login logout whoami rebuild prune store import dedupe fetch patch env "
    "setup licenses root bin cache help exec dlx x node".split()
)
_NPM_SCRIPTS = frozenset({"test", "t", "tst", "start", "stop", "restart"})


def _package_script(words: list[str]) -> Use | None:
    """``npm run test``, ``pnpm --filter api lint``, ``yarn build``, ``bun run typecheck`` (and ``bun test``)."""
    pm = _head(words[0])
    rest, workspace = _workspace(words[1:])
    ws = f" {workspace}" if workspace else ""
    if not rest:
        return None
    sub = rest[0]
    if sub in ("exec", "dlx", "x") or (pm == "yarn" and sub == "dlx"):
        inner = _classify(rest[1:]) if len(rest) > 1 else None
        return _prefixed(f"{pm}{ws} {sub}", inner) if inner else None
    if pm == "bun" and sub == "test":
        return _tool(["bun-test", *rest[1:]], shown=f"bun{ws} test")
    if sub in ("run", "run-script"):
        if len(rest) < 2 or rest[1].startswith("-"):
            return None
        script, extra, written = rest[1], rest[2:], f"{pm}{ws} {sub} {rest[1]}"
    elif sub.startswith("-") or sub in _PM_BUILTINS or (pm == "npm" and sub not in _NPM_SCRIPTS):
        return None
    else:
        script, extra, written = sub, rest[1:], f"{pm}{ws} {sub}"
    purpose = purpose_of_name(script)
    if purpose is None:
        return None
    kept, filtered = _script_args(extra, purpose)
    form = render([*written.split(), *kept]) if kept else written
    return Use(purpose, f"{pm}{ws} run {script}", form, filtered, pm, script, workspace)


def _workspace(words: list[str]) -> tuple[list[str], str]:
    """The words without a workspace selector, and the selector as written (``--filter api``)."""
    kept: list[str] = []
    where = ""
    i = 0
    while i < len(words):
        flag, eq, value = words[i].partition("=")
        if flag in _WORKSPACE_FLAGS and not where and not kept:
            taken = value if eq else (words[i + 1] if i + 1 < len(words) else "")
            where = f"{flag} {taken}".strip()
            i += 1 if eq else 2
            continue
        kept.append(words[i])
        i += 1
    return kept, where


def _script_args(extra: list[str], purpose: str) -> tuple[list[str], bool]:
    """What follows a script name: flags after ``--`` are kept for fixers (``lint -- --fix``), filters dropped."""
    if not extra:
        return [], False
    after = extra[extra.index("--") + 1 :] if "--" in extra else extra
    if purpose == "test":
        return [], True
    flags = [w for w in after if w.startswith("-") and "=" not in w]
    kept = ["--", *flags] if flags and "--" in extra else flags
    return kept, len(flags) != len([w for w in extra if w != "--"])


_TASK_RUNNERS = frozenset({"mise", "make", "gmake", "just", "task", "gradle", "gradlew", "mvn", "mvnw"})
_TASK_VALUE_FLAGS = frozenset({"-C", "-f", "--file", "-j", "--jobs", "--justfile", "-d", "--dir", "-t", "--taskfile"})


def _task(words: list[str]) -> Use | None:
    """``mise run test:ci``, ``make lint``, ``just fmt``, ``task build``, ``./gradlew test``, ``mvn verify``."""
    runner = _head(words[0]).removesuffix("w") if _head(words[0]) in ("gradlew", "mvnw") else _head(words[0])
    runner = "make" if runner == "gmake" else runner
    rest = words[1:]
    if runner == "mise":
        if not rest or rest[0] not in ("run", "r") or len(rest) < 2:
            return None
        prefix, rest = [words[0], rest[0]], rest[1:]
    else:
        prefix = [words[0]]
    flags: list[str] = []
    while rest and rest[0].startswith("-") and rest[0] != "--":
        flags.append(rest[0])
        if rest[0] in _TASK_VALUE_FLAGS and len(rest) > 1:
            flags.append(rest[1])
            rest = rest[1:]
        rest = rest[1:]
    names = [w for w in rest if not w.startswith("-") and "=" not in w]
    if not names:
        return Use("build", "make", render([*prefix, *flags]), False, runner, "") if runner == "make" else None
    purpose = purpose_of_name(names[0])
    if purpose is None or names[0] == "--":
        return None
    family = f"{' '.join(prefix)} {names[0]}"
    return Use(purpose, family, render([*prefix, *flags, names[0]]), len(rest) > 1, runner, names[0])


# ---------------------------------------------------------------------------------------------------------
# wrappers: uv run, poetry run, npx, bundle exec, python -m, mise exec …

_WRAPPER_VALUE_FLAGS = frozenset({
    "--with", "--package", "--extra", "--group", "--python", "-p", "--env-file", "--index", "--from",
    "--project", "--directory",
})  # fmt: skip
_DROPPED_WRAPPER_FLAGS = frozenset({"--project", "--directory", "--yes", "-y", "--no-install", "-q", "--quiet"})
_WRAPPERS = {
    "uv": "run", "poetry": "run", "pdm": "run", "pipenv": "run", "rye": "run", "hatch": "run", "bundle": "exec",
    "pipx": "run", "mise": "exec|x", "python": "-m", "iex": "-S", "npx": "", "bunx": "", "uvx": "", "pnpx": "",
}  # fmt: skip


def _unwrap(words: list[str]) -> tuple[str, list[str]] | None:
    """(wrapper as written, the command it runs) for ``uv run pytest -q`` → ("uv run", ["pytest", "-q"])."""
    head = _head(words[0])
    if head not in _WRAPPERS:
        return None
    sub = _WRAPPERS[head]
    if sub:
        if len(words) < 2 or words[1] not in sub.split("|"):
            return None
        prefix, rest = [head, words[1]], words[2:]
    else:
        prefix, rest = [head], words[1:]
    if head == "mise":
        rest = rest[rest.index("--") + 1 :] if "--" in rest else []
        return " ".join(prefix), rest
    while rest and rest[0].startswith("-") and rest[0] != "-":
        flag = rest[0].split("=", 1)[0]
        takes_value = flag in _WRAPPER_VALUE_FLAGS and "=" not in rest[0]
        if flag not in _DROPPED_WRAPPER_FLAGS:
            prefix.extend(rest[: 2 if takes_value else 1])
        rest = rest[2 if takes_value else 1 :]
    rest = rest[1:] if rest and rest[0] == "--" else rest
    return render(prefix), rest


def _named(words: list[str], *, runner: str, prefix: str) -> Use | None:
    """A script of a wrapper's own (``hatch run test``, ``pdm run lint``), named for what it does."""
    purpose = purpose_of_name(words[0].split(":")[-1])
    if purpose is None:
        return None
    return Use(purpose, f"{prefix} {words[0]}", f"{prefix} {words[0]}", len(words) > 1, runner, words[0])


# ---------------------------------------------------------------------------------------------------------
# tools


@dataclass(frozen=True)
class _Spec:
    """How a tool's arguments read: which are filters, which flags take values."""

    purpose: str
    args: str  # filter | paths | strict | keep | packages (see _normalise)
    values: frozenset[str] = frozenset()  # flags whose value is kept with them
    drop: frozenset[str] = frozenset()  # filter flags taking a value: dropped with it
    bare: frozenset[str] = frozenset()  # filter flags without a value: dropped


def _fs(text: str) -> frozenset[str]:
    return frozenset(text.split())


_PYTEST = _Spec(
    "test", "filter", _fs("-m -n --maxfail -c -o -W --cov --cov-report --timeout -p --junitxml"),
    _fs("-k --deselect --ignore --ignore-glob --tb --rootdir --color --durations"),
    _fs("--lf --last-failed --ff --failed-first --sw --stepwise --no-header -rA -ra -rf"),
)  # fmt: skip
_JS_TEST = _Spec(
    "test", "filter", _fs("--config -c --project --reporter --maxWorkers --environment"),
    _fs("-t --testNamePattern --testPathPattern --testPathPatterns --findRelatedTests --grep -g"),
    _fs("--onlyChanged -o --changed --watch"),
)  # fmt: skip
_CARGO_VALUES = _fs("-p --package --features -F --target -j --jobs --manifest-path --profile")
_CARGO_TEST = _Spec(  # a target selector (`--lib`: the library's unit tests only, no integration or doc tests) too
    "test", "filter", _CARGO_VALUES, _fs("--test --bench --example --bin -E"), _fs("--exact --lib --bins --doc")
)
_GO_VALUES = _fs("-tags -count -timeout -parallel -p -coverprofile -covermode")
_TARPAULIN_VALUES = _fs("--out -o --output-dir --exclude-files -e --exclude --timeout -t --engine")
_LINT_VALUES = _fs("--config -c --select --ignore --extend-select --ext --max-warnings --format --output-format")
_TOOLS: dict[str, _Spec] = {
    "pytest": _PYTEST, "py.test": _PYTEST,
    "jest": _JS_TEST, "vitest": _JS_TEST, "vitest run": _JS_TEST, "mocha": _JS_TEST,
    "bun-test": _Spec("test", "filter", _fs("--timeout"), _fs("-t --test-name-pattern")),
    "deno test": _Spec("test", "filter", drop=_fs("--filter")),
    "rspec": _Spec("test", "filter", _fs("--tag --format"), _fs("-e --example")),
    "phpunit": _Spec("test", "filter", drop=_fs("--filter")),
    "cargo test": _CARGO_TEST, "cargo nextest": _CARGO_TEST,
    "cargo build": _Spec("build", "keep", _CARGO_VALUES), "cargo check": _Spec("typecheck", "keep", _CARGO_VALUES),
    "cargo clippy": _Spec("lint", "keep", _CARGO_VALUES), "cargo fmt": _Spec("format", "keep", _CARGO_VALUES),
    "cargo run": _Spec("run", "keep", _CARGO_VALUES),
    "cargo tarpaulin": _Spec("coverage", "keep", _CARGO_VALUES | _TARPAULIN_VALUES),
    "cargo llvm-cov": _Spec("coverage", "keep", _CARGO_VALUES | _fs("--output-path --fail-under-lines")),
    "coverage run": _Spec("coverage", "keep", _fs("--source --rcfile -m")),
    "go test": _Spec("test", "packages", _GO_VALUES, _fs("-run -bench -skip")),
    "go vet": _Spec("lint", "packages", _GO_VALUES), "go build": _Spec("build", "packages", _GO_VALUES),
    "golangci-lint run": _Spec("lint", "paths", _LINT_VALUES), "gofmt": _Spec("format", "strict"),
    "mix test": _Spec("test", "filter", _fs("--include --exclude --max-failures --partitions"), _fs("--only --seed"),
                      _fs("--failed --stale")),
    "mix compile": _Spec("build", "keep"), "mix format": _Spec("format", "paths"),
    "mix credo": _Spec("lint", "paths"), "mix dialyzer": _Spec("typecheck", "keep", _fs("--format")),
    "mix phx.server": _Spec("run", "keep"),
    "dotnet test": _Spec("test", "keep", _fs("-c --configuration -f --framework"), _fs("--filter")),
    "dotnet build": _Spec("build", "keep"), "dotnet format": _Spec("format", "keep"),
    "dotnet run": _Spec("run", "keep"),
    "swift test": _Spec("test", "filter", drop=_fs("--filter")), "swift build": _Spec("build", "keep"),
    "flutter test": _Spec("test", "filter", drop=_fs("--name -n --plain-name")),
    "dart test": _Spec("test", "filter", drop=_fs("--name -n --plain-name")),
    "flutter analyze": _Spec("lint", "paths"), "dart analyze": _Spec("lint", "paths"),
    "dart format": _Spec("format", "strict"), "deno lint": _Spec("lint", "paths"),
    "deno fmt": _Spec("format", "paths"), "deno check": _Spec("typecheck", "strict"),
    "ruff check": _Spec("lint", "paths", _LINT_VALUES), "ruff format": _Spec("format", "paths", _LINT_VALUES),
    "ruff": _Spec("lint", "paths", _LINT_VALUES),
    "mypy": _Spec("typecheck", "strict", _fs("--config-file -p --package -m --module")),
    "pyright": _Spec("typecheck", "paths", _fs("-p --project")), "basedpyright": _Spec("typecheck", "paths"),
    "ty check": _Spec("typecheck", "paths", _fs("--python --project")),
    "tsc": _Spec("typecheck", "strict", _fs("-p --project")), "vue-tsc": _Spec("typecheck", "strict"),
    "black": _Spec("format", "strict", _fs("--config -l --line-length")), "isort": _Spec("format", "strict"),
    "prettier": _Spec("format", "strict", _fs("--config")), "shfmt": _Spec("format", "strict"),
    "biome check": _Spec("lint", "strict"), "biome lint": _Spec("lint", "strict"),
    "biome format": _Spec("format", "strict"), "biome ci": _Spec("check", "strict"),
    "eslint": _Spec("lint", "paths", _LINT_VALUES), "flake8": _Spec("lint", "paths", _LINT_VALUES),
    "pylint": _Spec("lint", "strict"), "rubocop": _Spec("lint", "paths"), "shellcheck": _Spec("lint", "strict"),
    "markdownlint": _Spec("lint", "strict"), "markdownlint-cli2": _Spec("lint", "strict"),
    "hadolint": _Spec("lint", "strict"), "stylelint": _Spec("lint", "strict"), "yamllint": _Spec("lint", "strict"),
    "actionlint": _Spec("lint", "paths"), "knip": _Spec("lint", "keep"),
    "tox": _Spec("test", "keep", _fs("-e")), "nox": _Spec("test", "keep", _fs("-s --session")),
    "pre-commit run": _Spec("check", "keep"), "lefthook run": _Spec("check", "keep"),
    "uv build": _Spec("build", "keep"), "build": _Spec("build", "keep"),
    "docker compose up": _Spec("run", "keep"), "docker-compose up": _Spec("run", "keep"),
    "docker compose build": _Spec("build", "keep"), "docker-compose build": _Spec("build", "keep"),
    "uvicorn": _Spec("run", "keep"), "flask run": _Spec("run", "keep"),
}  # fmt: skip
_SUBCOMMAND_TOOLS = frozenset(
    "cargo go mix dotnet swift flutter dart deno ruff ty biome golangci-lint pre-commit lefthook uv vitest docker "
    "docker-compose flask coverage".split()
)


def _tool(words: list[str], *, shown: str = "") -> Use | None:
    """A known tool: ``pytest -q``, ``cargo fmt --all``, ``go test ./...``, ``mix credo --strict`` …"""
    head = _head(words[0])
    rest = [w for w in words[1:] if not (head == "cargo" and w.startswith("+"))]  # `cargo +nightly …`
    key, args = head, rest
    if head in _SUBCOMMAND_TOOLS and rest and not rest[0].startswith("-"):
        sub = " ".join(rest[:2]) if head in ("docker", "docker-compose") and rest[0] == "compose" else rest[0]
        if f"{head} {sub}" in _TOOLS or f"{head} {rest[0]}" in _TOOLS:
            key = f"{head} {sub}" if f"{head} {sub}" in _TOOLS else f"{head} {rest[0]}"
            args = rest[len(key.split()) - 1 :]
    spec = _TOOLS.get(key)
    if spec is None or (key == head and head in _SUBCOMMAND_TOOLS and head not in _TOOLS):
        return None
    if key == "cargo test" and "--no-run" in args:
        return None  # compiles the tests without running them: a debugging step, not the build
    if key == "tsc" and {"-b", "--build"} & set(args):
        spec = _Spec("build", "keep")
    if key in ("tox", "nox"):  # `tox -e lint`: the environment says what runs
        named = [args[i + 1] for i, w in enumerate(args[:-1]) if w in ("-e", "-s", "--session")]
        spec = _Spec(purpose_of_name(named[0]) or "test" if named else "test", "keep", spec.values)
    kept, filtered = _normalise(args, spec)
    if kept is None:
        return None
    written = shown or (words[0] if key == head else f"{words[0]} {' '.join(key.split()[1:])}")
    return Use(spec.purpose, shown or key, render([*written.split(), *kept]), filtered, "", key)


def _normalise(args: list[str], spec: _Spec) -> tuple[list[str] | None, bool]:
    """(kept arguments, whether filters were dropped); None when the run is a one-off on named files."""
    main, tail = (args[: args.index("--")], args[args.index("--") + 1 :]) if "--" in args else (args, None)
    kept: list[str] = []
    positionals: list[str] = []
    filtered = False
    i = 0
    while i < len(main):
        word = main[i]
        flag = word.split("=", 1)[0]
        takes = flag in (spec.values | spec.drop) and "=" not in word and i + 1 < len(main)
        if flag in spec.drop or flag in spec.bare:
            filtered = True
        elif word.startswith("-") and len(word) > 1:
            kept.extend(main[i : i + 2] if takes else [word])
        else:
            positionals.append(word)
        i += 2 if takes else 1
    placed, more_filtered = _positionals(positionals, spec)
    if placed is None:
        return None, False
    kept.extend(placed)
    if tail is not None:
        rest = [w for w in tail if w.startswith("-") and w != "--exact"] if spec.args == "filter" else tail
        filtered = filtered or len(rest) != len(tail)
        kept.extend(["--", *rest] if rest else [])
    return kept, filtered or more_filtered


def _positionals(words: list[str], spec: _Spec) -> tuple[list[str] | None, bool]:
    if not words or spec.args == "keep":
        return words, False
    if spec.args == "filter":
        return [], True
    if spec.args == "packages":
        return ["./..."], words != ["./..."]
    project = [w for w in words if _project_wide(w)]
    if spec.args == "strict" and len(project) != len(words):
        return None, False
    return project, len(project) != len(words)


def _project_wide(word: str) -> bool:
    """``.``, ``src``, ``tests/``: a whole top-level tree, not a file or a subfolder picked for this run."""
    word = word.removeprefix("./").rstrip("/")
    return word in ("", ".") or (re.fullmatch(r"[\w-]+", word) is not None)


# ---------------------------------------------------------------------------------------------------------
# scripts

_INTERPRETERS = frozenset({"bash", "sh", "zsh", "node", "python", "ruby", "perl", "tsx", "ts-node", "bun", "deno"})
_SCRIPT_RE = re.compile(r"\.(?:sh|bash|zsh|py|js|mjs|cjs|ts|rb|pl)$")


def _script(words: list[str]) -> Use | None:
    """A repository script named for what it does: ``./scripts/test.sh``, ``bash script/lint.sh``,
    ``bin/check``, ``python manage.py test`` (paths are relative: absolute ones are outside the project)."""
    head = _head(words[0])
    if head in _INTERPRETERS and len(words) > 1 and _SCRIPT_RE.search(words[1]):
        shown, rest = [words[0], words[1]], words[2:]
    elif "/" in words[0] and not words[0].startswith(("/", "~")):
        shown, rest = [words[0]], words[1:]
    else:
        return None
    path = shown[-1]
    purpose = purpose_of_name(path)
    if purpose is None and rest and re.fullmatch(r"[a-z][\w:-]*", rest[0]):
        purpose = purpose_of_name(rest[0])
        shown, rest = [*shown, rest[0]], rest[1:]
    if purpose is None or path.startswith(("/", "~")):
        return None
    if purpose == "run" and purpose_of_name(re.sub(r"[-_.:]", "", posixpath.basename(path))) != "run":
        return None  # `start-auto-merge.sh` starts something, not the project
    norm = posixpath.normpath(path)
    family = " ".join(["script", norm, *shown[shown.index(path) + 1 :]])
    flags = [w for w in rest if w.startswith("-")]
    return Use(purpose, family, render([*shown, *flags]), len(flags) != len(rest), "script", norm)


# ---------------------------------------------------------------------------------------------------------
# outcome

_FAILED_OUTPUT_RE = re.compile(
    r"^(?:FAILED|ERROR)\b|^E\s{2,}\S|\b[1-9]\d* (?:failed|errors?)\b|^\s*error(?:\[[\w-]+\])?:|test result: FAILED"
    r"|npm ERR!|^\s*✖\s+[1-9]|Traceback \(most recent call last\)|\bcommand not found\b|^fatal:|\bELIFECYCLE\b"
    r"|^make(?:\[\d+\])?: \*\*\*|^error: Recipe|[Ww]ould (?:be )?reformat|^Diff in |^\*\* \(\w+",
    re.M,
)
_TAIL = 20000


def outcome(call: Call, uses: Sequence[Use | None]) -> str:
    """``ok`` / ``fail`` / ``unknown`` of a Bash call that ran project commands.

    :func:`nous_assets.extract.rules.shell.status` reads the exit code Claude Code reports; a check piped
    into ``tail`` exits 0 whatever happened, so a check's own failure summary ("2 failed", "error[E0425]:",
    "Would reformat") in its output also makes it a failure.
    """
    state = shell.status(call)
    if state != "ok" or call.result is None or not any(u and u.purpose in CHECK_PURPOSES for u in uses):
        return state
    text = ANSI_RE.sub("", call.result.text[-_TAIL:])
    return "fail" if _FAILED_OUTPUT_RE.search(text) else "ok"

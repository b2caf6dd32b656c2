"""A cheap fingerprint of the working directory, for picking the injection packet (standard library only).

Budget ~10 ms plus two git processes run in parallel under ``timeout``. Reads ``.git/HEAD`` directly for
the branch, lists the top level of ``cwd`` (and the repository root) for manifests, and never walks deeper.
"""

from __future__ import annotations

import os
import time

from resolver.project import default_project, find_dot_git, read_repository, redact_name

MAX_RECENT_FILES = 20
MAX_TERMS = 64
GIT_LOG_COMMITS = 15

EXTENSION_TAGS = {
    ".py": "python", ".pyi": "python", ".pyx": "python", ".ipynb": "python",
    ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript", ".jsx": "javascript",
    ".ts": "typescript", ".tsx": "typescript", ".mts": "typescript", ".cts": "typescript",
    ".rs": "rust", ".go": "go", ".ex": "elixir", ".exs": "elixir", ".heex": "elixir",
    ".rb": "ruby", ".erb": "ruby", ".java": "java", ".kt": "kotlin", ".kts": "kotlin", ".scala": "scala",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp",
    ".cs": "csharp", ".fs": "fsharp", ".swift": "swift", ".m": "objc", ".php": "php", ".dart": "dart",
    ".lua": "lua", ".zig": "zig", ".hs": "haskell", ".ml": "ocaml", ".clj": "clojure", ".erl": "erlang",
    ".jl": "julia", ".r": "r", ".sql": "sql", ".sh": "shell", ".bash": "shell", ".zsh": "shell",
    ".vue": "vue", ".svelte": "svelte", ".tf": "terraform", ".proto": "protobuf", ".nix": "nix",
    ".css": "css", ".scss": "css", ".html": "html",
}  # fmt: skip

MANIFEST_TAGS = {
    "pyproject.toml": ("python",), "requirements.txt": ("python",), "setup.py": ("python",),
    "setup.cfg": ("python",), "pipfile": ("python",), "uv.lock": ("python",), "poetry.lock": ("python",),
    "package.json": ("javascript",), "tsconfig.json": ("typescript",), "deno.json": ("deno", "typescript"),
    "cargo.toml": ("rust",), "go.mod": ("go",), "mix.exs": ("elixir",), "gemfile": ("ruby",),
    "pom.xml": ("java",), "build.gradle": ("java",), "build.gradle.kts": ("java", "kotlin"),
    "build.sbt": ("scala",), "composer.json": ("php",), "package.swift": ("swift",), "pubspec.yaml": ("dart",),
    "dockerfile": ("docker",), "docker-compose.yml": ("docker",), "docker-compose.yaml": ("docker",),
    "compose.yml": ("docker",), "compose.yaml": ("docker",), "cmakelists.txt": ("cpp", "cmake"),
    "flake.nix": ("nix",), "dagster.yaml": ("dagster",), "workspace.yaml": ("dagster",),
}  # fmt: skip
MANIFEST_SUFFIX_TAGS = {".csproj": ("csharp",), ".sln": ("csharp",), ".fsproj": ("fsharp",), ".tf": ("terraform",)}

_STOP_WORDS = frozenset(
    "a an and the of to in for on with src lib libs pkg internal test tests spec specs main master dev develop "
    "feature feat fix bugfix hotfix chore wip tmp temp refs heads head index init mod readme docs doc".split()
)
_UPPER = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_LOWER = frozenset("abcdefghijklmnopqrstuvwxyz")
_DIGIT = frozenset("0123456789")


def build_fingerprint(cwd: str, *, timeout: float = 0.15) -> dict:
    """``project_id``, ``branch``, ``recent_files``, ``stack`` and ``terms`` for ``cwd``.

    ``project_id`` is the repository's (its main checkout's encoding, read from the ``.git`` files, see
    :mod:`resolver.project`) or the cwd's outside one; the cache maps it through the pipeline's aliases.
    ``cwd`` and ``repository`` are kept for that lookup; ``cwd`` and ``branch`` come with their tokens redacted
    (:func:`resolver.project.redact_name`), the form the pipeline's packets record. Git history is read with
    two subprocesses bounded by ``timeout`` seconds; on a timeout (or with no repository) ``recent_files`` is
    empty and the rest still comes from the file system. Identity never runs a process.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    repo = read_repository(cwd)
    root = repo.root if repo is not None else None
    branch = read_branch(repo.git_dir) if repo is not None else None
    recent = recent_files(root, timeout=timeout) if root else []
    stack = sorted(_stack_tags(cwd, root, recent))
    named, branch = redact_name(cwd), redact_name(branch) if branch else branch  # as the pipeline stores them
    return {
        "project_id": default_project(cwd, repo),
        "branch": branch,
        "recent_files": recent,
        "stack": stack,
        "terms": _terms(named, branch, stack, recent),
        "cwd": named,
        "repository": repo,
    }


def fingerprint_key(fp: dict) -> str:
    """A stable 16-hex-digit key for ``project_id`` + ``branch`` + ``stack`` (pipeline cache keys)."""
    import hashlib
    import json

    basis = json.dumps([fp.get("project_id") or "", fp.get("branch") or "", sorted(fp.get("stack") or [])])
    return hashlib.blake2b(basis.encode("utf-8"), digest_size=8).hexdigest()


def find_git(start: str) -> tuple[str | None, str | None]:
    """(work tree root, git dir) of the repository containing ``start``; a ``.git`` file (worktree,
    submodule) is followed to its ``gitdir:``. ``(None, None)`` outside a repository."""
    return find_dot_git(start)


def read_branch(git_dir: str) -> str | None:
    """The checked-out branch from ``HEAD`` (``feature/x``); None when detached or unreadable."""
    try:
        with open(os.path.join(git_dir, "HEAD"), encoding="utf-8", errors="replace") as handle:
            head = handle.readline(4096).strip()
    except OSError:
        return None
    if head.startswith("ref:"):
        ref = head[len("ref:") :].strip()
        return ref[len("refs/heads/") :] if ref.startswith("refs/heads/") else ref or None
    return None


def recent_files(root: str, *, timeout: float = 0.15) -> list[str]:
    """Up to 20 repository-relative paths: uncommitted changes first, then files of the last 15 commits."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")  # never take index.lock
    base = ["git", "-c", "core.quotepath=off", "-C", root]
    outputs = _run_parallel(
        {
            "status": [*base, "status", "--porcelain", "-z", "--untracked-files=no"],
            "log": [*base, "log", "-n", str(GIT_LOG_COMMITS), "--name-only", "--pretty=format:", "--no-color"],
        },
        env,
        timeout,
    )
    files: list[str] = []
    seen: set[str] = set()
    for path in _parse_status(outputs.get("status", b"")) + _parse_log(outputs.get("log", b"")):
        if path and path not in seen:
            seen.add(path)
            files.append(path)
            if len(files) >= MAX_RECENT_FILES:
                break
    return files


def _run_parallel(commands: dict[str, list[str]], env: dict[str, str], timeout: float) -> dict[str, bytes]:
    """Stdout of each command that exits 0 within ``timeout`` seconds, all run at once.

    ``os.posix_spawnp`` and ``select.poll`` instead of ``subprocess``, whose import alone costs ~5 ms of
    the hook's budget. Stdin and stderr are /dev/null; a command still running at the deadline is killed.
    """
    if not hasattr(os, "posix_spawnp"):
        return {}
    import select
    import signal

    deadline = time.monotonic() + timeout
    running: dict[int, list] = {}  # read fd -> [name, pid, chunks, exit code or None]
    try:
        for name, argv in commands.items():
            read_fd, write_fd = os.pipe()
            try:
                pid = os.posix_spawnp(
                    argv[0],
                    argv,
                    env,
                    file_actions=[
                        (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                        (os.POSIX_SPAWN_DUP2, write_fd, 1),
                        (os.POSIX_SPAWN_OPEN, 2, os.devnull, os.O_WRONLY, 0),
                    ],
                )
            except OSError:  # git not installed
                os.close(read_fd)
                return {}
            finally:
                os.close(write_fd)
            running[read_fd] = [name, pid, [], None]
        poller = select.poll()
        pending = set(running)
        for fd in pending:
            poller.register(fd, select.POLLIN)
        while pending:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            for fd, _event in poller.poll(max(1, int(remaining * 1000))):
                data = os.read(fd, 65536)
                if data:
                    running[fd][2].append(data)
                else:  # EOF: the command is done
                    poller.unregister(fd)
                    pending.discard(fd)
                    running[fd][3] = os.waitstatus_to_exitcode(os.waitpid(running[fd][1], 0)[1])
        return {name: b"".join(chunks) for name, _pid, chunks, code in running.values() if code == 0}
    finally:
        for fd, (_name, pid, _chunks, code) in running.items():
            os.close(fd)
            if code is None:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except OSError:
                    pass


def _parse_status(raw: bytes) -> list[str]:
    """Paths from ``git status --porcelain -z`` (a rename's second field is its old path: skipped)."""
    entries = raw.decode("utf-8", errors="replace").split("\0")
    paths, skip = [], False
    for entry in entries:
        if skip:
            skip = False
            continue
        if len(entry) < 4:
            continue
        status, path = entry[:2], entry[3:]
        paths.append(path)
        skip = "R" in status or "C" in status
    return paths


def _parse_log(raw: bytes) -> list[str]:
    return [line.strip() for line in raw.decode("utf-8", errors="replace").splitlines() if line.strip()]


def _stack_tags(cwd: str, root: str | None, recent: list[str]) -> set[str]:
    tags: set[str] = set()
    for path in recent:
        name = path.rsplit("/", 1)[-1]
        tags.update(MANIFEST_TAGS.get(name.lower(), ()))
        tags.add(EXTENSION_TAGS.get(os.path.splitext(name)[1].lower(), ""))
    for directory in {cwd, root} - {None}:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            lower = name.lower()
            tags.update(MANIFEST_TAGS.get(lower, ()))
            tags.update(MANIFEST_SUFFIX_TAGS.get(os.path.splitext(lower)[1], ()))
    tags.discard("")
    return tags


def split_words(text: str) -> list[str]:
    """Lowercase words of ``text`` split on separators and camelCase (``fooBar-baz_qux`` -> foo bar baz qux)."""
    return [w.lower() for w in _camel_words(text or "")]


def _camel_words(text: str) -> list[str]:
    """The words ``re.findall(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|[0-9]+")`` finds in each run of ASCII
    letters and digits of ``text``, by hand: importing ``re`` would cost the hook several milliseconds."""
    words: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in _UPPER:
            j = i
            while j < n and text[j] in _UPPER:
                j += 1
            if j < n and text[j] in _LOWER:
                if j - i >= 2:  # "HTTPServer": HTTP, then Server
                    words.append(text[i : j - 1])
                    i = j - 1
                    continue
                k = j
                while k < n and text[k] in _LOWER:
                    k += 1
                words.append(text[i:k])  # "Server"
                i = k
            else:
                words.append(text[i:j])
                i = j
        elif c in _LOWER or c in _DIGIT:
            kind = _LOWER if c in _LOWER else _DIGIT
            j = i
            while j < n and text[j] in kind:
                j += 1
            words.append(text[i:j])
            i = j
        else:
            i += 1
    return words


def _terms(cwd: str, branch: str | None, stack: list[str], recent: list[str]) -> list[str]:
    candidates = list(stack)
    candidates += split_words(os.path.basename(cwd))
    candidates += split_words(branch or "")
    for path in recent:
        parts = path.split("/")
        stem = os.path.splitext(parts[-1])[0]
        candidates += split_words(stem)
        if len(parts) > 1:
            candidates += split_words(parts[-2])
    terms: list[str] = []
    seen: set[str] = set()
    for word in candidates:
        if len(word) < 2 or word.isdigit() or word in _STOP_WORDS or word in seen:
            continue
        seen.add(word)
        terms.append(word)
        if len(terms) >= MAX_TERMS:
            break
    return terms

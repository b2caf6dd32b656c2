"""A cheap fingerprint of the working directory, for picking the injection packet (standard library only).

Budget ~10 ms and no process: the hook must never start one (a ``git status``/``git log`` pair cost more
than the whole rest of a SessionStart and made it slower than the bare interpreter). Reads ``.git/HEAD``
directly for the branch, lists the top level of ``cwd`` (and the repository root) for manifests, and never
walks deeper. What the project's sessions touch most is already in each cached packet's terms (the pipeline
mines it from the transcripts), so the session side needs no file history of its own.
"""

from __future__ import annotations

import os

from resolver.project import default_project, find_dot_git, read_repository, redact_name

MAX_TERMS = 64

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


def build_fingerprint(cwd: str) -> dict:
    """``project_id``, ``branch``, ``stack`` and ``terms`` for ``cwd``, from files only.

    ``project_id`` is the repository's (its main checkout's encoding, read from the ``.git`` files, see
    :mod:`resolver.project`) or the cwd's outside one; the cache maps it through the pipeline's aliases.
    ``cwd`` and ``repository`` are kept for that lookup; ``cwd`` and ``branch`` come with their tokens redacted
    (:func:`resolver.project.redact_name`), the form the pipeline's packets record.
    """
    cwd = os.path.abspath(cwd or os.getcwd())
    repo = read_repository(cwd)
    root = repo.root if repo is not None else None
    branch = read_branch(repo.git_dir) if repo is not None else None
    stack = sorted(_stack_tags(cwd, root))
    named, branch = redact_name(cwd), redact_name(branch) if branch else branch  # as the pipeline stores them
    return {
        "project_id": default_project(cwd, repo),
        "branch": branch,
        "stack": stack,
        "terms": _terms(named, branch, stack),
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


def _stack_tags(cwd: str, root: str | None) -> set[str]:
    tags: set[str] = set()
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


def _terms(cwd: str, branch: str | None, stack: list[str]) -> list[str]:
    candidates = [*stack, *split_words(os.path.basename(cwd)), *split_words(branch or "")]
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

"""Project identity shared by the hook and the pipeline (standard library only, no subprocess).

A project is a repository, not a directory: the worktrees, the main checkout and the subdirectories of one
repository are one project, named after its main checkout. Claude Code stores a session under
``projects/<encoded cwd>/``, where the encoding replaces every character that is not an ASCII letter or
digit with ``-`` (:func:`project_id_from_cwd`); the canonical project id is that encoding of the main
checkout's path.

What a path says about its repository, read here without running git:

* :func:`read_repository` — the ``.git`` of the nearest enclosing checkout. A linked worktree's ``.git`` is
  a file naming its ``gitdir``; that directory's ``commondir`` names the shared ``.git``, whose parent is
  the main checkout. The remote (``origin`` first) comes from the shared ``config``, normalised by
  :func:`normalize_remote` so that ssh and https spellings of one repository agree.
* :func:`worktree_main` — for a path that no longer exists (an old transcript, another machine): the
  conventional worktree layouts ``<repo>-worktrees/<name>``, ``<repo>.worktrees/<name>``,
  ``<repo>/.worktrees/<name>`` and ``<repo>/.claude/worktrees/<name>`` name the main checkout;
  :func:`managed_worktree_main` reads worktree managers' ``<dir>/worktrees/<repo>/<name>/<repo>``.

:func:`lookup` maps a cwd to the project the pipeline recorded in ``project_aliases`` (one indexed query):
the repository's main checkout, then its remote, then the cwd or its deepest recorded ancestor that is
part of a repository, then a worktree layout's main checkout; with no alias, the main checkout's (or the
cwd's) own encoding, as before the table existed.

Secrets in names (a token in a directory or branch name): the pipeline stores every path, branch and id
redacted, so the hook must look them up redacted too, and it cannot import the pipeline's redactor (standard
library only, 500 ms). :func:`redact_name` is the small subset it needs: provider tokens with a fixed prefix
(AWS key ids, GitHub, GitLab, Slack, Anthropic, OpenAI, Google and npm tokens), replaced by the same
``[REDACTED:<kind>]`` markers, with the pipeline's placeholder test. The pipeline runs it after its own
redactor (``nous_assets.capture.metadata.redact_meta``), so a name the full redactor leaves with only these
kinds of secret is stored exactly as the hook computes it; a name whose secret only the full redactor finds
(a high-entropy run, a token glued to a word, an assignment) is stored redacted but looked up raw here, and
the hook falls back to the global packet (fail open; the id it records is still free of the kinds above).
Project ids (:func:`project_id_from_cwd`, :func:`project_id_from_folder`) scrub the encoded form as well,
where ``ghp_`` has become ``ghp-``, so an id never carries such a token whichever of cwd or Claude Code folder
it was derived from.
"""

from __future__ import annotations

import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    import re

# ``re`` is imported only where a path needs it (a token trigger, a git remote): the import and the patterns
# would cost the SessionStart hook several milliseconds of start-up, a bare interpreter's worth of budget.
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_HOME_ROOTS = frozenset({"", "/root", "/home", "/Users", "/tmp", "/private/tmp", "/var/folders"})
_HOME_PARENTS = ("/home", "/Users", "/var/folders")  # their children are homes (or per-user temp roots)
_WORKTREES_INSIDE = ("/.worktrees/", "/.claude/worktrees/")
_WORKTREES_SIBLING = ("-worktrees/", ".worktrees/", "_worktrees/")
MAX_DEPTH = 64
MAX_FILE_BYTES = 64 * 1024
NO_REPO_EVIDENCE = "folder"  # an alias kept only because a session ran there: never an ancestor for others
_UNREAD = object()
# String operations rather than regular expressions on the hook's path: compiling patterns at import
# would cost the SessionStart hook about a millisecond.


# Provider tokens a directory or branch name can carry (module doc): kind, then the token. ``[_-]`` where the
# token has ``_``, because Claude Code's folder names (and so project ids) turn it into ``-``.
_NAME_TOKENS = (
    ("aws_access_key", r"A(?:KIA|SIA|BIA|CCA)[A-Z0-9]{16}(?![A-Za-z0-9])"),
    ("github_token", r"(?:gh[pousr][_-][A-Za-z0-9]{36,}|github[_-]pat[_-][A-Za-z0-9_]{22,})(?![A-Za-z0-9])"),
    ("anthropic_api_key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_api_key", r"sk-(?!ant-)[A-Za-z0-9_-]{20,}"),
    ("gitlab_token", r"gl(?:pat|dt|rt|ptt)-[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"x(?:ox[abposre]|app)-[A-Za-z0-9-]{10,}"),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}(?![A-Za-z0-9])"),
    ("npm_token", r"npm[_-][A-Za-z0-9]{36}(?![A-Za-z0-9])"),
)
_NAME_TRIGGERS = ("AKIA", "ASIA", "ABIA", "ACCA", "ghp", "gho", "ghu", "ghs", "ghr", "github_pat", "github-pat",
                  "sk-", "glpat", "gldt", "glrt", "glptt", "xox", "xapp", "AIza", "npm_", "npm-")  # fmt: skip
_LOOSE_KINDS = ("openai_api_key", "slack_token")  # loose prefixes: a token needs letters and digits
_NAME_PLACEHOLDER = r"(?i)x{4}|example|your|dummy|placeholder|redacted|\*{3}|(.)\1{5,}"
# Compiled on first use: most names hold no trigger, and then the hook pays nothing for them.
_name_patterns: list[re.Pattern[str]] = []


def _dash_non_alnum(text: str) -> str:
    """Every character but ASCII letters and digits as ``-`` (Claude Code's folder encoding), without ``re``."""
    return "".join(c if c in _ALNUM else "-" for c in text)


def _name_regex() -> tuple[re.Pattern[str], re.Pattern[str]]:
    import re

    if not _name_patterns:
        alternatives = "|".join(f"(?P<{kind}>{token})" for kind, token in _NAME_TOKENS)
        _name_patterns.extend((re.compile(f"(?<![A-Za-z0-9])(?:{alternatives})"), re.compile(_NAME_PLACEHOLDER)))
    return _name_patterns[0], _name_patterns[1]


def redact_name(text: str) -> str:
    """``text`` (a path, branch or id) with its provider tokens replaced by ``[REDACTED:<kind>]`` (module doc)."""
    for trigger in _NAME_TRIGGERS:  # a loop, not any(): this runs for every id the pipeline stores
        if trigger in text:
            break
    else:
        return text
    tokens, placeholder = _name_regex()

    def marker(match: re.Match[str]) -> str:
        kind, token = match.lastgroup or "", match.group()
        if placeholder.search(token) or (
            kind in _LOOSE_KINDS and not (any(c.isdigit() for c in token) and any(c.isalpha() for c in token[3:]))
        ):
            return token
        return f"[REDACTED:{kind}]"

    return tokens.sub(marker, text)


def project_id_from_cwd(cwd: str) -> str:
    """Encode a working directory the way Claude Code names its project folder, without the tokens it holds.

    The encoding of :func:`redact_name` of the path, scrubbed again once encoded (module doc); a path without
    a token keeps Claude Code's own folder name."""
    encoded = _dash_non_alnum(redact_name(cwd.rstrip("/") or "/"))
    return _dash_non_alnum(redact_name(encoded))


def project_id_from_folder(folder: str) -> str:
    """A Claude Code project folder's name as a project id: itself, or re-encoded without the tokens it holds
    (the same id :func:`project_id_from_cwd` gives the directory the folder encodes)."""
    scrubbed = redact_name(folder)
    return folder if scrubbed == folder else _dash_non_alnum(scrubbed)


def is_home_like(path: str) -> bool:
    """``/``, a home directory or a temp root: never a repository other paths can join as subdirectories."""
    path = path.rstrip("/")
    return path in _HOME_ROOTS or os.path.dirname(path) in _HOME_PARENTS


class Repository:
    """Where a checkout's repository lives: the checkout root, the shared git dir, the main checkout, and
    (read on first use) the normalised remote."""

    __slots__ = ("root", "git_dir", "common_dir", "main", "_remote")

    def __init__(self, root: str, git_dir: str, common_dir: str, main: str) -> None:
        self.root, self.git_dir, self.common_dir, self.main = root, git_dir, common_dir, main
        self._remote = _UNREAD

    @property
    def remote(self) -> str | None:
        if self._remote is _UNREAD:
            self._remote = read_remote(self.common_dir)
        return self._remote  # type: ignore[return-value]

    def __repr__(self) -> str:
        return f"Repository(root={self.root!r}, main={self.main!r})"


def _read(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read(MAX_FILE_BYTES)
    except OSError:
        return None


def find_dot_git(start: str) -> tuple[str | None, str | None]:
    """(checkout root, its git dir) of the repository containing ``start``: a ``.git`` file (worktree,
    submodule) is followed to its ``gitdir:``. ``(None, None)`` outside a repository."""
    path = os.path.abspath(start)
    for _ in range(MAX_DEPTH):
        dot_git = os.path.join(path, ".git")
        if os.path.isdir(dot_git):
            return path, dot_git
        if os.path.isfile(dot_git):
            text = _read(dot_git) or ""
            line = text.splitlines()[0].strip() if text.strip() else ""
            if line.startswith("gitdir:"):
                return path, os.path.normpath(os.path.join(path, line[len("gitdir:") :].strip()))
            return None, None
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return None, None


def read_repository(start: str) -> Repository | None:
    """The repository of the checkout containing ``start`` (see the module doc), from files only."""
    root, git_dir = find_dot_git(start)
    if root is None or git_dir is None:
        return None
    common = _read(os.path.join(git_dir, "commondir"))
    common_dir = os.path.normpath(os.path.join(git_dir, common.strip())) if common and common.strip() else git_dir
    if os.path.basename(common_dir) == ".git":
        main = os.path.dirname(common_dir)
    elif common_dir == git_dir:  # a submodule (git dir under the parent's .git/modules) or a bare-style layout
        main = root
    else:  # a linked worktree of a bare repository: name the project after the bare directory
        main = common_dir[: -len(".git")] if common_dir.endswith(".git") else common_dir
    return Repository(root, git_dir, common_dir, main)


def read_remote(common_dir: str) -> str | None:
    """The normalised URL of ``origin`` (else the first remote with a URL) from the shared ``config``."""
    import re

    text = _read(os.path.join(common_dir, "config"))
    if not text:
        return None
    urls: list[tuple[str, str]] = []
    current = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("["):
            section = re.match(r'\[\s*remote\s+"([^"]*)"\s*\]', line)
            current = section.group(1) if section else None
            continue
        if current is not None:
            key, eq, value = line.partition("=")
            if eq and key.strip().lower() == "url" and value.strip():
                urls.append((current, value.strip().strip('"')))
    if not urls:
        return None
    chosen = next((u for name, u in urls if name == "origin"), urls[0][1])
    return normalize_remote(chosen)


def normalize_remote(url: str) -> str | None:
    """``host/owner/repo`` for ssh, scp-like and http(s) spellings (no user, port, ``.git`` or letter case:
    GitHub, GitLab and Bitbucket resolve owner and repository names case-insensitively); a local path stays
    a normalised path. None for an empty URL."""
    import re

    url = url.strip()
    if not url:
        return None
    if url.lower().startswith("file://") or url.startswith(("/", ".")):
        local = url[len("file://") :] if url.lower().startswith("file://") else url
        return os.path.normpath(local).removesuffix(".git") or None
    match = re.match(r"^[a-z][a-z0-9+.-]*://(?:[^@/]+@)?([^/:]+)(?::\d+)?(/.*)?$", url, re.I)
    if match is None:
        match = re.match(r"^(?:[^@/]+@)?([^:/]+):(.+)$", url)  # scp-like: [user@]host:path
    if match is None:
        return os.path.normpath(url).removesuffix(".git") or None
    host, path = match.group(1).lower(), match.group(2) or ""
    path = path.strip("/").removesuffix(".git").strip("/").lower()  # hosts route owner/repo case-insensitively
    return f"{host}/{path}" if path else host


def worktree_main(path: str) -> str | None:
    """The main checkout a worktree layout names (module doc), or None; never a home-like directory."""
    path = path.rstrip("/") + "/"
    for markers in (_WORKTREES_INSIDE, _WORKTREES_SIBLING):  # inside first: ".worktrees/" ends both
        found = [at for at in (path.find(m, 1) for m in markers) if at > 0]
        at = min(found, default=-1)
        if at > 0 and path[path.index("/", at + 1) + 1 :].strip("/") and not is_home_like(path[:at]):
            return path[:at]
    return None


def managed_worktree_main(path: str) -> str | None:
    """``<dir>/<repo>`` for ``<dir>/worktrees/<repo>/<name>/<repo>`` (or below): the layout worktree managers
    create, the repository's name repeated under a ``worktrees`` folder; never a home-like directory."""
    parts = path.rstrip("/").split("/")
    for i in range(2, len(parts) - 3):  # parts[0] is "" (an absolute path); "/worktrees/…" names no <dir>
        if parts[i] == "worktrees" and parts[i + 1] and parts[i + 1] == parts[i + 3]:
            main = "/".join(parts[:i]) + "/" + parts[i + 1]
            return None if is_home_like(main) else main
    return None


def ancestors(path: str) -> list[str]:
    """``path`` and its parents, deepest first, without home-like directories."""
    out: list[str] = []
    path = os.path.normpath(path) if path else ""
    for _ in range(MAX_DEPTH):
        if not path or is_home_like(path):
            break
        out.append(path)
        parent = os.path.dirname(path)
        if parent == path:
            break
        path = parent
    return out


def default_project(cwd: str, repo: Repository | None) -> str:
    """The project id with no alias recorded: the main checkout's encoding, else the cwd's."""
    return project_id_from_cwd(repo.main if repo is not None else cwd)


def lookup(conn, cwd: str, repo: Repository | None) -> str | None:
    """The project ``project_aliases`` records for ``cwd`` (order in the module doc), None when none does.
    Paths and the remote are looked up as the pipeline stores them, through :func:`redact_name`.

    ``conn`` is any DB-API connection to cortex.db. A database without the table (older schema) raises
    ``sqlite3.OperationalError``; the caller falls back to :func:`default_project`. Inside a repository
    only the cwd and its parents up to the checkout root count: a parent directory is another repository.
    """
    cwd = redact_name(cwd)  # aliases are stored redacted (module doc)
    chain = ancestors(cwd)
    if repo is not None:
        root = redact_name(repo.root)
        chain = [p for p in chain if p == root or p.startswith(root.rstrip("/") + "/")]
    pattern_main = worktree_main(cwd) or managed_worktree_main(cwd)
    main = [redact_name(repo.main)] if repo is not None else []
    cwd_keys = list(dict.fromkeys([*main, *chain, *([pattern_main] if pattern_main else [])]))
    remote = redact_name(repo.remote or "") or None if repo is not None else None
    if not cwd_keys and not remote:
        return None
    marks = ",".join("?" * len(cwd_keys)) or "NULL"
    rows = conn.execute(
        f"SELECT kind, alias, project_id, evidence FROM project_aliases WHERE (kind = 'cwd' AND alias IN ({marks})) "
        "OR (kind = 'remote' AND alias = ?)",
        (*cwd_keys, remote or ""),
    ).fetchall()
    found = {(kind, alias): (project, evidence) for kind, alias, project, evidence in rows}
    if main and ("cwd", main[0]) in found:
        return found[("cwd", main[0])][0]
    if remote and ("remote", remote) in found:
        return found[("remote", remote)][0]
    for depth, path in enumerate(chain):
        hit = found.get(("cwd", path))
        if hit and (depth == 0 or hit[1] != NO_REPO_EVIDENCE):
            return hit[0]
    if pattern_main and ("cwd", pattern_main) in found:
        return found[("cwd", pattern_main)][0]
    return None

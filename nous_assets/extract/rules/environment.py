"""Environment: what the session's tools say about where it runs — Claude Code hooks, MCP servers, git.

None of this is stated in prose; Claude Code and git print it, and a later session trips over it again:

* **Claude Code hooks**: ``PreCompact ["$CLAUDE_PROJECT_DIR"/hooks/run_hook.sh] completed successfully``
  in a local command's output names the event and the command the project's settings run on it.
* **MCP servers**: ``Reconnected to tidewave.`` after ``/mcp`` names a server the project uses.
* **Git worktrees**: ``fatal: 'main' is already used by worktree at …`` — the branch cannot be checked
  out here; update from ``origin/<branch>`` instead.
* **The default branch**: ``main..HEAD`` failing with ``unknown revision`` while the session shows
  ``master`` (its branch or ``origin/master``): the default branch is ``master`` (and the reverse).
* **Files to leave out of commits**: a file ``git status`` keeps listing as modified that the session
  never edited nor staged is someone else's local change (``.mcp.json`` in a worktree).
* **Local files committed by a blanket add**: ``git add -A`` / ``git add .`` whose commit created files
  under local-only paths (``.claude/settings.local.json``, a hidden journal directory): stage explicit
  paths or ignore them.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter

from nous_assets.extract.rules import shell
from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Cand, Stream, cand
from nous_assets.extract.rules.text import ANSI_RE, cap

MAX_CONTENT = 300
_HOOK_RUN_RE = re.compile(r"\b([A-Z][A-Za-z]+) \[(.{3,200}?)\] (?:completed successfully|failed)")
_MCP_RE = re.compile(r"\b(?:Reconnected to|Failed to reconnect to) ([\w@/-]+(?:\.[\w@/-]+)*)")
_WORKTREE_RE = re.compile(r"fatal: '([\w./-]+)' is already (?:used|checked out) by worktree at '([^'\n]+)'")
_UNKNOWN_REV_RE = re.compile(r"ambiguous argument '(?:origin/)?(main|master)(?:\.\.\w*)?'|"
                             r"unknown revision[^\n]*?\b(main|master)\b")  # fmt: skip
_MODIFIED_RE = re.compile(r"^\s+modified:\s+(\S.*?)\s*$", re.M)
_CREATED_RE = re.compile(r"^\s*create mode \d+ (\S.*?)\s*$", re.M)
_BLANKET_ADD_RE = re.compile(
    r"\bgit add (?:-A|--all|\.)(?=\s|$|&|;)|\bgit commit\b[^|;&\n]*?\s(?:-a|-am|--all)(?=\s|$)"
)
# hidden directories a project shares on purpose; anything else hidden is most likely local to a machine
_SHARED_DOT_DIRS = frozenset({
    ".github", ".gitlab", ".circleci", ".devcontainer", ".husky", ".changeset", ".vscode", ".storybook",
    ".config", ".cargo", ".idea", ".buildkite", ".gitea", ".forgejo", ".docker",
})  # fmt: skip


def environment(s: Stream) -> list[Cand]:
    out: list[Cand] = []
    out.extend(_claude_hooks(s))
    out.extend(_mcp_servers(s))
    out.extend(_worktree_branch(s))
    out.extend(_default_branch(s))
    out.extend(_left_out_of_commits(s))
    out.extend(_blanket_add(s))
    return out


def _local_outputs(s: Stream) -> list[tuple[int, str]]:
    return [(p, ANSI_RE.sub("", t.text)) for p, t in enumerate(s.turns) if t.kind == "local_command" and t.text]


def _claude_hooks(s: Stream) -> list[Cand]:
    found: dict[str, tuple[str, int]] = {}
    for p, text in _local_outputs(s):
        for event, command in _HOOK_RUN_RE.findall(text):
            found.setdefault(event, (command, p))
    out = []
    for event, (command, p) in found.items():
        content = f"Claude Code hooks in this project: {event} runs `{command}`."
        c = cand("workflow", cap(content, MAX_CONTENT), s.turns[p], s.gpos[p], [s.turns[p]], content,
                 applies_when=f"on Claude Code's {event} event", source_ref=command, score=3.0,
                 basis="file")  # fmt: skip
        c.slot, c.domain = f"tool:claude-hook-{event}", "workflow"
        out.append(c)
    return out


def _mcp_servers(s: Stream) -> list[Cand]:
    seen: set[str] = set()
    out = []
    for p, text in _local_outputs(s):
        for name in _MCP_RE.findall(text):
            if name in seen:
                continue
            seen.add(name)
            content = f"The project uses the `{name}` MCP server; when it drops, reconnect it with `/mcp`."
            when = f"when the {name} MCP tools stop answering"
            c = cand("configuration", content, s.turns[p], s.gpos[p], [s.turns[p]], content,
                     applies_when=when, source_ref="/mcp", score=2.5, basis="file")  # fmt: skip
            c.slot, c.domain = f"tool:mcp-{name}", "tooling"
            out.append(c)
    return out


def _results(s: Stream) -> list[tuple[Call, str]]:
    return [(c, ANSI_RE.sub("", c.result.text[:20000])) for c in s.calls if c.result is not None]


def _worktree_branch(s: Stream) -> list[Cand]:
    for call, text in _results(s):
        m = _WORKTREE_RE.search(text)
        if m:
            branch, where = m.group(1), m.group(2)
            content = (
                f"This checkout is a git worktree and `{branch}` is checked out in another worktree ({where}), so "
                f"`git checkout {branch}` fails; update with `git fetch origin {branch} && git rebase origin/{branch}`."
            )
            when = f"when you need `{branch}` in a worktree"
            c = cand("gotcha", cap(content, MAX_CONTENT), call.turn, s.gpos[call.pos], call.turns(), content,
                     applies_when=when, source_ref="git worktree", score=3.5, basis="file")  # fmt: skip
            c.slot, c.domain = f"tool:git-worktree-{branch}", "git"
            return [c]
    return []


def _default_branch(s: Stream) -> list[Cand]:
    """``main..HEAD`` fails and ``master`` is what the session shows (or the reverse)."""
    failed: tuple[str, Call | None, int] | None = None
    for p, t in enumerate(s.turns):
        m = _UNKNOWN_REV_RE.search(t.text) or next(
            (x for r in t.tool_results if (x := _UNKNOWN_REV_RE.search(r.text[:20000]))), None
        )
        if m:
            failed = (m.group(1) or m.group(2), None, p)
            break
    if failed is None:
        return []
    missing, _, p = failed
    other = "master" if missing == "main" else "main"
    evidence = any(t.git_branch == other for t in s.turns) or any(
        re.search(rf"\borigin/{other}\b|\* {other}\b", r.text[:20000]) for t in s.turns for r in t.tool_results
    )
    if not evidence:
        return []
    content = (
        f"The default branch is `{other}`, not `{missing}`: `git log {missing}..HEAD` fails with 'unknown revision'; "
        f"compare against `{other}` (or `origin/{other}`)."
    )
    when = "when a command or skill assumes the default branch"
    c = cand("gotcha", content, s.turns[p], s.gpos[p], [s.turns[p]], content,
             applies_when=when, source_ref="git", score=3.5, basis="file")  # fmt: skip
    c.slot, c.domain = "tool:git-default-branch", "git"
    return [c]


def _left_out_of_commits(s: Stream) -> list[Cand]:
    """Files that stay modified in ``git status`` without the session touching them, while it commits."""
    counts: Counter[str] = Counter()
    first: dict[str, Call] = {}
    commits = 0
    touched: set[str] = set()
    for call in s.calls:
        if call.name in EDIT_TOOLS and call.path:
            touched.add(posixpath.basename(call.path))
        fam = shell.family(call.command) if call.command else ""
        if _BLANKET_ADD_RE.search(call.command):
            return []  # everything was staged: nothing was left out on purpose
        if fam == "git add":
            touched.update(posixpath.basename(a) for a in call.command.split()[2:])
        if fam == "git commit" and s.status(call) == "ok":
            commits += 1
        if fam == "git status" and call.result is not None:
            for path in set(_MODIFIED_RE.findall(call.result.text)):
                counts[path] += 1
                first.setdefault(path, call)
    out = []
    for path, n in counts.items():
        if n < 2 or not commits or posixpath.basename(path) in touched:
            continue
        call = first[path]
        content = (
            f"`{path}` shows up as locally modified in `git status` but is not part of the work; "
            "leave it out of commits (stage explicit paths)."
        )
        c = cand("gotcha", content, call.turn, s.gpos[call.pos], call.turns(), content,
                 applies_when="when staging a commit", source_ref=path, score=2.5, basis="file")  # fmt: skip
        c.slot, c.domain = f"config:{path}#local-change", "git"
        out.append(c)
    return out[:3]


def _local_only(path: str) -> str:
    """The local-only part of a committed path (``.private-journal/``, ``.claude/settings.local.json``), or ''."""
    head = path.split("/", 1)[0]
    if posixpath.basename(path).endswith((".local.json", ".local.yaml", ".local.toml")) or head == ".env":
        return path
    if head.startswith(".") and "/" in path and head not in _SHARED_DOT_DIRS and head != ".claude":
        return head + "/"
    return ""


def _blanket_add(s: Stream) -> list[Cand]:
    for call in s.calls:
        if not call.command or not _BLANKET_ADD_RE.search(call.command) or call.result is None:
            continue
        created = _CREATED_RE.findall(call.result.text[:200000])
        local = Counter(x for x in map(_local_only, created) if x)
        if not local:
            continue
        files = re.search(r"(\d+) files? changed", call.result.text)
        named = ", ".join(f"`{x}`" for x, _ in local.most_common(3))
        size = f" ({files.group(1)} files)" if files else ""
        add = _BLANKET_ADD_RE.search(call.command)
        how = add.group(0).strip() if add else "git add -A"
        content = f"`{how}` committed local files ({named}){size}; stage explicit paths or add them to .gitignore."
        c = cand("gotcha", cap(content, MAX_CONTENT), call.turn, s.gpos[call.pos], call.turns(), content,
                 applies_when="when staging a commit", source_ref="git add", score=3.0, basis="file")  # fmt: skip
        c.slot, c.domain = "tool:git-blanket-add", "git"
        return [c]
    return []

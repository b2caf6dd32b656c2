"""Configuration: the net change a session made to each configuration file.

Edits of one file are folded in order: a line added and later removed is gone, a line removed and later
restored is unchanged. Renames (``mv``, ``git mv``) are followed, so an edited ``Dockerfile`` renamed to
``Containerfile`` is remembered under its final name. Nothing is kept for a file whose net change is
empty (the session reverted it), that was restored with ``git checkout``/``git restore`` or deleted, or
for an edit Claude or the user called wrong right after. One memory per file, with ``slot``
``config:<file>`` so a later session's change to the same file supersedes it.
"""

from __future__ import annotations

import posixpath
import re
import shlex

from nous_assets.extract.rules import filters
from nous_assets.extract.rules.session import EDIT_TOOLS, Call, Cand, Stream, cand
from nous_assets.extract.rules.text import I, cap, fit, key_sentence, short_path

MAX_CONTENT = 320
CONFIG_NAMES = frozenset({
    "pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "package.json", "dockerfile", "containerfile",
    "docker-compose.yml", "docker-compose.yaml", "compose.yaml", "compose.yml", "makefile", "cargo.toml", "go.mod",
    "mix.exs", "gemfile", ".env.example", ".env.sample", ".env.template", ".env.local", ".env.development",
    ".gitignore", ".dockerignore", "biome.json", "biome.jsonc", "knip.json", ".lefthook.yml", "lefthook.yml",
    ".pre-commit-config.yaml", "ruff.toml", "mypy.ini", "pytest.ini", "alembic.ini", ".editorconfig", ".npmrc",
    ".nvmrc", ".tool-versions", "hooks.json", ".formatter.exs", ".credo.exs", "deno.json", "bunfig.toml",
    "netlify.toml", "vercel.json", "fly.toml", "procfile", "justfile", "settings.json",
})  # fmt: skip
_CONFIG_PATTERNS = re.compile(
    r"(?:^|/)(?:tsconfig[\w.-]*\.json|\.eslintrc[\w.]*|\.prettierrc[\w.]*|[\w-]+\.config\.(?:js|ts|mjs|cjs|json)|"
    r"\.github/workflows/[\w.-]+\.ya?ml|config/[\w./-]+\.(?:exs|ya?ml|toml|json|ini)|[\w.-]+\.(?:ya?ml|toml|ini|cfg|conf)"
    r"|\.husky/[\w.-]+|\.env(?:\.[\w-]+)?)$",
    I,
)
_CONFIG_SKIP = re.compile(
    r"(?:^|/)(?:node_modules|_build|deps|\.git|\.venv|venv|dist|build|target|\.beads|\.planning)/|\.lock$"
    r"|lock\.(?:json|yaml)$|(?:^|/)\.claude/settings\.local\.json$",
    I,
)
_WRONG_RE = re.compile(
    r"\b(?:wait,? that'?s (?:wrong|not right)|that'?s wrong|that was wrong|revert(?:ing)? (?:that|this|the|my)|"
    r"undo (?:that|this|my)|back (?:that|this) out|that broke|this broke|(?:it )?broke (?:\w+ )?(?:ci|the build|"
    r"install|tests?)|already tried this)\b",
    I,
)
_RESTORE_RE = re.compile(r"^(?:git (?:checkout|restore)(?: --)?|rm(?: -f)?|git rm)\s", I)


def is_config(path: str) -> bool:
    path = path.replace("\\", "/")
    if _CONFIG_SKIP.search(path) or "/memory/" in path or "/.learnings/" in path:
        return False
    return posixpath.basename(path).lower() in CONFIG_NAMES or bool(_CONFIG_PATTERNS.search(path))


def configurations(s: Stream, fix_uuids: set[str]) -> list[Cand]:
    """One candidate per configuration file with a net change."""
    names = _renames(s)
    per_file: dict[str, list[Call]] = {}
    for call in s.calls:
        if call.name not in EDIT_TOOLS or not call.path or not call.ok:
            continue
        path = _final(call.path.replace("\\", "/"), names, call.seq)
        if is_config(path):
            per_file.setdefault(path, []).append(call)
    out: list[Cand] = []
    for path, calls in per_file.items():
        if any(_called_wrong(s, c) for c in calls) or _restored(s, path, calls[-1].seq):
            continue  # the session undid or disowned part of it: its net effect is not known for sure
        found = _candidate(s, path, calls, fix_uuids)
        if found is not None:
            out.append(found)
    return out


def _renames(s: Stream) -> list[tuple[int, str, str]]:
    """(position, old absolute path, new absolute path) of every ``mv`` / ``git mv`` that worked."""
    out: list[tuple[int, str, str]] = []
    for c in s.calls:
        if not c.command or s.status(c) != "ok":
            continue
        for seg in re.split(r"\s*(?:&&|;|\n)\s*", c.command):
            try:
                toks = shlex.split(seg)
            except ValueError:
                continue
            if toks[:2] == ["git", "mv"]:
                toks = toks[1:]
            if len(toks) == 3 and toks[0] == "mv":
                cwd = c.turn.cwd or ""
                old, new = (t if t.startswith("/") else posixpath.normpath(posixpath.join(cwd, t)) for t in toks[1:])
                out.append((c.seq, old, new))
    return out


def _final(path: str, renames: list[tuple[int, str, str]], seq: int) -> str:
    """The name ``path`` has at the end of the session (renames after call ``seq`` followed)."""
    for rseq, old, new in renames:
        if rseq > seq and path == old:
            path = new
    return path


def _called_wrong(s: Stream, call: Call) -> bool:
    """Claude or the user called an edit of the file wrong right before or after it."""
    for p in range(max(0, call.pos - 2), min(call.pos + 8, len(s.turns))):
        t = s.turns[p]
        if t.role == "assistant" and t.text and _WRONG_RE.search(t.text):
            return True
        if p > call.pos and p in s.user_positions and re.match(r"^\s*(?:no\b|revert|undo|that broke|this broke)",
                                                             t.text, I):  # fmt: skip
            return True
    return False


def _restored(s: Stream, path: str, after: int) -> bool:
    """The file was checked out again, restored or deleted after its last edit (call ``after``)."""
    name = posixpath.basename(path)
    for c in s.calls:
        if c.seq <= after or not c.command or s.status(c) != "ok":
            continue
        for seg in re.split(r"\s*(?:&&|;|\n)\s*", c.command):
            if _RESTORE_RE.match(seg) and name in seg:
                return True
    return False


def _candidate(s: Stream, path: str, calls: list[Call], fix_uuids: set[str]) -> Cand | None:
    cwd = calls[0].turn.cwd
    rel = short_path(path, cwd)
    added: list[str] = []
    removed: list[str] = []
    created = False
    for call in calls:
        a, r, c = _diff(call)
        created = created or c
        for line in r:
            if line in added:
                added.remove(line)  # added earlier in the session, removed again: no net change
            elif line not in removed:
                removed.append(line)
        for line in a:
            if line in removed:
                removed.remove(line)  # removed earlier, restored: no net change
            elif line not in added:
                added.append(line)
    added = [x for x in added if not filters.one_off(x)]
    if not added and not removed:
        return None
    reason = ""
    first = calls[0]
    for t in reversed(s.turns[max(0, first.pos - 2) : first.pos + 1]):
        if t.role == "assistant" and t.text.strip():
            reason = key_sentence(t.text, 130, mode="reason").lstrip("-—–: ")
            if reason:
                break
    code = [x for x in added if not re.match(r"^(?:#|//|--|/\*|\*)", x)] or added
    if re.search(r"(?:^|/)\.env(?:\.[\w-]+)?$", path):  # an env file: which variables, never their values
        names = [m.group(1) for x in code if (m := re.match(r"^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=", x))]
        code = [", ".join(dict.fromkeys(names))] if names else []
        if not code:
            return None
    shown = [f"`{cap(x, 70)}`" for x in code[:3]]
    if created:
        change = "created with " + "; ".join(shown)
    elif shown:
        change = "sets " + "; ".join(shown)
    else:
        change = "removed " + "; ".join(f"`{cap(x, 70)}`" for x in removed[:2])
    content = fit([f"{rel}: {change}", f" — {reason}" if reason else ""], MAX_CONTENT)
    turns = [t for c in calls for t in c.turns()]
    c = cand("configuration", content, first.turn, s.gpos[first.pos], turns,
             f"{rel} {' '.join(added[:3])} {reason}", sub=1, applies_when=f"when changing {rel}", source_ref=rel,
             score=1 + (2 if fix_uuids.intersection(first.turn.uuids) else 0) + (1 if reason else 0)
             - (0.5 if created else 0), basis="edit")  # fmt: skip
    c.hints = [rel, first.name]
    c.slot = f"config:{rel}"
    return c


def _diff(call: Call) -> tuple[list[str], list[str], bool]:
    """(meaningful lines added, lines removed, whether the file was written whole) by one edit."""
    inp = call.inp
    if call.name == "Write" or "content" in inp:
        content = inp.get("content")
        lines = _meaningful(content.splitlines()) if isinstance(content, str) else []
        env = re.search(r"(?:^|/)\.env(?:\.[\w-]+)?$", call.path)
        return (lines if env else lines[:4]), [], True
    pairs: list[tuple[str, str]] = []
    if isinstance(inp.get("edits"), list):
        for e in inp["edits"]:
            if isinstance(e, dict):
                pairs.append((str(e.get("old_string") or ""), str(e.get("new_string") or "")))
    else:
        pairs.append(
            (
                str(inp.get("old_string") or inp.get("old_str") or ""),
                str(inp.get("new_string") or inp.get("new_str") or ""),
            )
        )
    added: list[str] = []
    removed: list[str] = []
    for old, new in pairs:
        old_lines = _meaningful(old.splitlines())
        new_lines = _meaningful(new.splitlines())
        old_set, new_set = set(old_lines), set(new_lines)
        added.extend(x for x in new_lines if x not in old_set)
        removed.extend(x for x in old_lines if x not in new_set)
    return added, removed, False


def _meaningful(lines: list[str]) -> list[str]:
    keep = []
    for line in lines:
        x = line.strip()
        if not x or re.fullmatch(r"[\[\](){},;]+|end|do|\]\)?,?|\}\)?,?", x):
            continue
        if x.endswith(("{", "[", "(")) or re.search(r":\s*(?:\"\"|''|\[\]|\{\})?,?$", x):
            continue  # an opener or an empty value carries no information
        if re.match(r"^\"(?:name|version|description|private|license|author|\$schema|type|main)\":", x):
            continue
        if re.match(r"^(?:#|//|--|/\*|\*)", x) and len(x) < 4:
            continue
        keep.append(x)
    return keep

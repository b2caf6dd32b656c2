"""What Claude Code itself loads into a session: its CLAUDE.md files (with ``@`` imports) and its auto-memory.

Why: Nous injects its packet beside Claude Code's own memory, so a line ``CLAUDE.md`` or ``MEMORY.md`` already
says would cost the session's context twice. This module reads those files as Claude Code 2.1.330 does (its
code and https://code.claude.com/docs/en/memory), so the packet build can leave such lines out, ``nous doctor``
can report on auto-memory, and the pipeline can ingest the notes. Read only; a file it cannot read is recorded
as skipped, never an exception.

The rules modelled:

* **CLAUDE.md** — every directory from the project's up to (not including) ``/``: ``CLAUDE.md``,
  ``.claude/CLAUDE.md``, ``.claude/rules/*.md`` and ``CLAUDE.local.md``; the user's ``<config>/CLAUDE.md`` and
  ``<config>/rules/*.md``; the managed ``/etc/claude-code/CLAUDE.md``. ``CLAUDE_CODE_DISABLE_CLAUDE_MDS``
  turns them all off.
* **``@`` imports** — ``@path`` at the start of a line or after whitespace, outside code spans and fenced
  blocks (HTML comments removed); a ``#fragment`` is dropped, ``\\ `` is a space; relative to the importing
  file, ``~/`` the home. Followed recursively: the file itself is depth 0 and nothing at depth
  :data:`MAX_IMPORT_DEPTH` or deeper is read; each file once (a cycle ends there); a missing file, a
  directory or one over :data:`MAX_FILE_BYTES` (Claude Code's own 4 MiB limit) is skipped; Nous reads at most
  :data:`MAX_TOTAL_BYTES` in all. An import outside the project's directory is followed from the user's own files,
  and from the others only when Claude Code recorded the user's approval of external imports for the project
  (``hasClaudeMdExternalIncludesApproved`` in ``<config>/.claude.json``), as Claude Code does.
* **auto-memory** — on unless ``CLAUDE_CODE_DISABLE_AUTO_MEMORY`` is true (``1``/``true``/``yes``/``on``; a
  false value forces it on), ``CLAUDE_CODE_SIMPLE`` is set, or ``autoMemoryEnabled`` is false in the settings
  (managed over local over project over user). The folder: ``autoMemoryDirectory`` from the managed, local or
  user settings (a project's shared ``.claude/settings.json`` may not redirect it), ``~/`` expanded; else
  ``<config>/projects/<slug>/memory/`` where the slug is the repository's main checkout (the directory itself
  outside git) with every character but ``A-Za-z0-9`` replaced by ``-`` (over 200 characters Claude Code adds a
  hash, so the folder is found by its first 200). The first :data:`MEMORY_MAX_LINES` lines or
  :data:`MEMORY_MAX_BYTES` bytes of ``MEMORY.md``, whichever comes first, load each session; topic files are
  read on demand, so they do not count as loaded.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from resolver.project import read_repository

MAX_IMPORT_DEPTH = 5
MAX_FILE_BYTES = 4 * 1024 * 1024
MAX_TOTAL_BYTES = 8 * 1024 * 1024
MEMORY_MAX_LINES = 200
MEMORY_MAX_BYTES = 25_000
MAX_TOPIC_FILES = 200
SLUG_MAX = 200
INDEX = "MEMORY.md"
MANAGED_DIR = Path("/etc/claude-code")
DEFAULT_CLEANUP_DAYS = 30
_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})
_IMPORT = re.compile(r"(?:^|\s)@((?:[^\s\\]|\\ )+)")
_NON_ALNUM = re.compile(r"[^A-Za-z0-9]")
_COMMENT = re.compile(r"<!--.*?-->", re.S)
_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1")
_FENCE = re.compile(r"^\s{0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class NativeFile:
    """One file Claude Code loads: where, as what (``project``, ``local``, ``rules``, ``user``, ``managed``,
    ``import``, ``auto-memory``), the text it loads, and which file imported it."""

    path: Path
    kind: str
    text: str
    imported_from: Path | None = None
    depth: int = 0


@dataclass(frozen=True)
class Statement:
    """A line of a loaded file, as plain words, with where it is (``path``, 1-based ``line``)."""

    path: Path
    line: int
    text: str

    @property
    def where(self) -> str:
        return f"{self.path.name}:{self.line}"


@dataclass(frozen=True)
class AutoMemory:
    """Auto-memory as Claude Code would use it for this project: on or off (and why), its folder, and how
    ``MEMORY.md`` compares with the load cap."""

    enabled: bool
    why: str
    directory: Path | None
    configured_by: str | None = None  # the settings file that set autoMemoryDirectory, None for the default
    index_lines: int = 0
    index_bytes: int = 0
    topic_files: tuple[Path, ...] = ()

    @property
    def index(self) -> Path | None:
        return None if self.directory is None else self.directory / INDEX

    @property
    def over_cap(self) -> bool:
        return self.index_lines > MEMORY_MAX_LINES or self.index_bytes > MEMORY_MAX_BYTES


@dataclass(frozen=True)
class NativeMemory:
    """Everything Claude Code loads at the start of a session in one project, and what was not read (why)."""

    project_dir: Path
    files: tuple[NativeFile, ...]
    auto_memory: AutoMemory
    skipped: tuple[tuple[Path, str], ...] = ()

    def statements(self) -> list[Statement]:
        """Every line the loaded files state, in file order (headings, blank lines and code left out)."""
        return [s for f in self.files for s in statements_of(f.path, f.text)]

    def digest(self) -> str:
        """Changes whenever what Claude Code loads changes: packets built against it are then rebuilt."""
        h = hashlib.sha256()
        for f in self.files:
            h.update(f"{f.path}\0{f.text}\0".encode())
        return h.hexdigest()[:16]


@dataclass
class _Budget:
    left: int = MAX_TOTAL_BYTES
    seen: set[str] = field(default_factory=set)
    skipped: list[tuple[Path, str]] = field(default_factory=list)


def truthy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in _TRUE


def falsy(value: str | None) -> bool:
    return value is not None and value.strip().lower() in _FALSE


def config_dir_of(env: Mapping[str, str]) -> Path:
    """``$CLAUDE_CONFIG_DIR``, else ``~/.claude``."""
    home = env.get("HOME") or str(Path.home())
    return Path(env.get("CLAUDE_CONFIG_DIR") or Path(home) / ".claude").expanduser()


def _json_file(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError, UnicodeDecodeError):
        return {}
    return data if isinstance(data, dict) else {}


Layers = list[tuple[str, Path, dict]]


def settings_layers(config_dir: Path, project_dir: Path | None, managed_dir: Path = MANAGED_DIR) -> Layers:
    """Claude Code's settings files, lowest precedence first: user, project, local, managed."""
    layers = [("user", config_dir / "settings.json")]
    if project_dir is not None:
        layers += [("project", project_dir / ".claude" / "settings.json"),
                   ("local", project_dir / ".claude" / "settings.local.json")]  # fmt: skip
    layers.append(("managed", managed_dir / "managed-settings.json"))
    return [(name, path, _json_file(path)) for name, path in layers]


def setting(layers: Layers, key: str, sources: tuple[str, ...] | None = None) -> tuple[Any, Path | None]:
    """(value, file) of ``key`` from the layer with the highest precedence that sets it (only ``sources``)."""
    for name, path, data in reversed(layers):
        if (sources is None or name in sources) and key in data and data[key] is not None:
            return data[key], path
    return None, None


def cleanup_period_days(layers: Layers) -> tuple[int, Path | None]:
    """How many days Claude Code keeps transcripts (``cleanupPeriodDays``, default 30) and the file that says so."""
    value, path = setting(layers, "cleanupPeriodDays")
    if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
        return value, path
    return DEFAULT_CLEANUP_DAYS, None


def slug(path: str) -> str:
    """Claude Code's folder name for a directory (its ``projects/<slug>``)."""
    return _NON_ALNUM.sub("-", path)


def memory_key(project_dir: Path) -> Path:
    """The directory auto-memory is keyed by: the repository's main checkout (worktrees share it), else the
    directory itself."""
    repo = read_repository(str(project_dir))
    return Path(repo.main) if repo is not None else project_dir


def _default_memory_dir(config_dir: Path, project_dir: Path) -> Path:
    name = slug(str(memory_key(project_dir)))
    projects = config_dir / "projects"
    if len(name) <= SLUG_MAX:
        return projects / name / "memory"
    try:
        found = sorted(p for p in projects.glob(f"{name[:SLUG_MAX]}-*") if p.is_dir())
    except OSError:
        found = []
    return (found[0] if found else projects / name[:SLUG_MAX]) / "memory"


def _expand(value: str, home: Path) -> Path | None:
    """An ``autoMemoryDirectory`` value as Claude Code takes it: absolute (or ``~/``), not a root, no NUL."""
    if "\x00" in value:
        return None
    path = home / value[2:] if value.startswith("~/") else Path(value)
    if not path.is_absolute() or len(str(path).rstrip("/")) < 3:
        return None
    return Path(os.path.normpath(path))


def auto_memory(
    project_dir: Path | None, *, config_dir: Path, env: Mapping[str, str], managed_dir: Path = MANAGED_DIR
) -> AutoMemory:
    """Whether auto-memory is on for ``project_dir``, where its folder is, and ``MEMORY.md``'s size."""
    layers = settings_layers(config_dir, project_dir, managed_dir)
    switch = env.get("CLAUDE_CODE_DISABLE_AUTO_MEMORY")
    enabled, why = True, "on (the default)"
    if truthy(switch):
        enabled, why = False, f"off: CLAUDE_CODE_DISABLE_AUTO_MEMORY={switch}"
    elif falsy(switch):
        why = f"on: CLAUDE_CODE_DISABLE_AUTO_MEMORY={switch} forces it"
    elif env.get("CLAUDE_CODE_SIMPLE"):
        enabled, why = False, "off: CLAUDE_CODE_SIMPLE is set"
    else:
        value, where = setting(layers, "autoMemoryEnabled")
        if value is False:
            enabled, why = False, f"off: autoMemoryEnabled is false in {where}"
        elif value is True:
            why = f"on: autoMemoryEnabled is true in {where}"
    home = Path(env.get("HOME") or str(Path.home()))
    value, where = setting(layers, "autoMemoryDirectory", ("user", "local", "managed"))
    directory = _expand(value, home) if isinstance(value, str) else None
    configured_by = str(where) if directory is not None else None
    if directory is None and project_dir is not None:
        directory = _default_memory_dir(config_dir, project_dir)
    lines = size = 0
    topics: tuple[Path, ...] = ()
    if directory is not None:
        index = directory / INDEX
        try:
            raw = index.read_bytes() if index.is_file() else b""
        except OSError:
            raw = b""
        size, lines = len(raw), len(raw.decode("utf-8", "replace").splitlines())
        try:
            found = sorted(p for p in directory.glob("*.md") if p.name != INDEX and p.is_file())
            topics = tuple(found[:MAX_TOPIC_FILES])
        except OSError:
            topics = ()
    return AutoMemory(enabled, why, directory, configured_by, lines, size, topics)


def loaded_index(raw: str) -> str:
    """The part of ``MEMORY.md`` Claude Code loads: its first 200 lines, cut at the last whole line within
    25,000 bytes."""
    text = "\n".join(raw.splitlines()[:MEMORY_MAX_LINES])
    data = text.encode("utf-8")
    if len(data) <= MEMORY_MAX_BYTES:
        return text
    cut = data[:MEMORY_MAX_BYTES]
    return cut[: cut.rfind(b"\n")].decode("utf-8", "ignore") if b"\n" in cut else ""


def _read(path: Path, budget: _Budget) -> str | None:
    """``path``'s text, or None (recorded in ``budget.skipped``) when Claude Code would not load it either."""
    try:
        if not path.is_file():
            if path.exists():
                budget.skipped.append((path, "not a regular file"))
            return None
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            budget.skipped.append((path, f"over {MAX_FILE_BYTES} bytes"))
            return None
        if size > budget.left:
            budget.skipped.append((path, f"Nous reads at most {MAX_TOTAL_BYTES} bytes of them in all"))
            return None
        raw = path.read_bytes()
    except OSError as exc:
        budget.skipped.append((path, f"unreadable: {exc.strerror or exc}"))
        return None
    budget.left -= len(raw)
    return raw.decode("utf-8", "replace").removeprefix("\ufeff")


def _prose_lines(text: str, *, spans: bool = False) -> Iterator[tuple[int, str]]:
    """(line number, line) outside fenced code blocks, with HTML comments (and, ``spans``, code spans) blanked."""
    text = _COMMENT.sub(lambda m: "\n" * m.group().count("\n"), text)
    fence: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        opened = _FENCE.match(line)
        if fence is not None:
            if opened and opened.group(1)[0] == fence[0] and len(opened.group(1)) >= len(fence):
                fence = None
            continue
        if opened:
            fence = opened.group(1)
            continue
        yield number, _SPAN.sub(" ", line) if spans else line


def imports_of(text: str, base: Path, home: Path) -> list[Path]:
    """The files ``text`` imports (``@path``), resolved against ``base`` (the importing file's folder)."""
    out: list[Path] = []
    for _, line in _prose_lines(text, spans=True):
        for match in _IMPORT.finditer(line):
            target = match.group(1).split("#", 1)[0].replace("\\ ", " ")
            if not target or target == "/" or target.startswith("@") or re.match(r"^[#%^&*()]+", target):
                continue
            if not (target.startswith(("./", "~/", "/")) or re.match(r"^[A-Za-z0-9._-]", target)):
                continue
            path = home / target[2:] if target.startswith("~/") else base / target
            path = Path(os.path.normpath(path))
            if path not in out:
                out.append(path)
    return out


def _within(path: Path, root: Path) -> bool:
    try:
        path.resolve().relative_to(root.resolve())
    except (OSError, ValueError):
        return False
    return True


def _load(
    path: Path, kind: str, budget: _Budget, ctx: _Walk, parent: Path | None = None, depth: int = 0
) -> list[NativeFile]:
    """``path`` and what it imports, depth first as Claude Code lists them."""
    key = os.path.normpath(str(path))
    if key in budget.seen or depth >= MAX_IMPORT_DEPTH:
        if depth >= MAX_IMPORT_DEPTH:
            budget.skipped.append((path, f"import deeper than {MAX_IMPORT_DEPTH - 1} hops"))
        return []
    budget.seen.add(key)
    try:
        real = str(path.resolve())
    except OSError:
        real = key
    if real != key and real in budget.seen:
        return []
    budget.seen.add(real)
    text = _read(path, budget)
    if text is None:
        if parent is not None and not path.exists():
            budget.skipped.append((path, f"imported by {parent} but missing"))
        return []
    if not text.strip():
        return []
    out = [NativeFile(path, kind if parent is None else "import", text, parent, depth)]
    for target in imports_of(text, path.parent, ctx.home):
        if kind != "user" and not ctx.external_ok and not _within(target, ctx.project_dir):
            budget.skipped.append((target, "an import outside the project Claude Code has not been allowed to follow"))
            continue
        out += _load(target, kind, budget, ctx, path, depth + 1)
    return out


@dataclass(frozen=True)
class _Walk:
    project_dir: Path
    home: Path
    external_ok: bool


def _external_approved(config_dir: Path, project_dir: Path, home: Path) -> bool:
    """Whether the user let Claude Code follow this project's imports outside it (``.claude.json``)."""
    state = _json_file(config_dir / ".claude.json") if (config_dir / ".claude.json").exists() \
        else _json_file(home / ".claude.json")  # fmt: skip
    projects = state.get("projects")
    entry = projects.get(str(project_dir)) if isinstance(projects, dict) else None
    return isinstance(entry, dict) and entry.get("hasClaudeMdExternalIncludesApproved") is True


def _rules(directory: Path) -> list[Path]:
    try:
        return sorted(p for p in directory.rglob("*.md") if p.is_file())
    except OSError:
        return []


def claude_md_files(
    project_dir: Path, *, config_dir: Path, env: Mapping[str, str], managed_dir: Path = MANAGED_DIR,
    budget: _Budget | None = None,
) -> list[NativeFile]:
    """The CLAUDE.md files (and their imports) Claude Code loads for a session started in ``project_dir``."""
    budget = budget or _Budget()
    if env.get("CLAUDE_CODE_DISABLE_CLAUDE_MDS"):
        return []
    home = Path(env.get("HOME") or str(Path.home()))
    ctx = _Walk(project_dir, home, _external_approved(config_dir, project_dir, home))
    out = _load(managed_dir / "CLAUDE.md", "managed", budget, ctx)
    for rule in _rules(managed_dir / ".claude" / "rules"):
        out += _load(rule, "managed", budget, ctx)
    out += _load(config_dir / "CLAUDE.md", "user", budget, ctx)
    for rule in _rules(config_dir / "rules"):
        out += _load(rule, "user", budget, ctx)
    chain = [project_dir, *project_dir.parents][:-1]  # up to, not including, the root
    for directory in reversed(chain):
        out += _load(directory / "CLAUDE.md", "project", budget, ctx)
        out += _load(directory / ".claude" / "CLAUDE.md", "project", budget, ctx)
        for rule in _rules(directory / ".claude" / "rules"):
            out += _load(rule, "rules", budget, ctx)
        out += _load(directory / "CLAUDE.local.md", "local", budget, ctx)
    return out


def read_native(
    project_dir: Path | str, *, config_dir: Path | None = None, env: Mapping[str, str] | None = None,
    managed_dir: Path = MANAGED_DIR,
) -> NativeMemory:
    """What Claude Code loads at the start of a session in ``project_dir``: its CLAUDE.md files with their
    imports, then the loaded part of ``MEMORY.md`` when auto-memory is on."""
    env = os.environ if env is None else env
    config_dir = config_dir or config_dir_of(env)
    project = Path(os.path.abspath(os.path.expanduser(str(project_dir))))
    budget = _Budget()
    files = claude_md_files(project, config_dir=config_dir, env=env, managed_dir=managed_dir, budget=budget)
    memory = auto_memory(project, config_dir=config_dir, env=env, managed_dir=managed_dir)
    if memory.enabled and memory.index is not None:
        text = _read(memory.index, budget)
        if text and text.strip():
            files.append(NativeFile(memory.index, "auto-memory", loaded_index(text)))
    return NativeMemory(project, tuple(files), memory, tuple(budget.skipped))


_MARKER = re.compile(r"^\s{0,3}(?:[-*+]\s+(?:\[[ xX]\]\s+)?|\d+[.)]\s+|>\s*)+")
_LINK = re.compile(r"!?\[([^\]]*)\]\([^)]*\)")
_EMPHASIS = re.compile(r"[*_]{1,3}([^*_]+)[*_]{1,3}")
_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z`\"'(])")


def plain(line: str) -> str:
    """A markdown line as plain words: list markers, links, emphasis and heading marks removed."""
    text = _MARKER.sub("", line)
    text = _LINK.sub(r"\1", text)
    text = _EMPHASIS.sub(r"\1", text)
    return " ".join(text.split())


def statements_of(path: Path, text: str) -> list[Statement]:
    """The statements of one file: each prose line (and, for a long one, each sentence in it); headings,
    front matter and code blocks left out."""
    out: list[Statement] = []
    lines = list(_prose_lines(text))
    if lines and lines[0][1].strip() == "---":  # YAML front matter (topic files): not a statement
        end = next((i for i, (_, line) in enumerate(lines[1:], 1) if line.strip() == "---"), 0)
        lines = lines[end + 1 :]
    for number, line in lines:
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        text_line = plain(_IMPORT.sub(" ", line).replace("`", ""))  # an import names a file, read on its own
        if not text_line:
            continue
        out.append(Statement(path, number, text_line))
        parts = _SENTENCE.split(text_line)
        if len(parts) > 1:
            out += [Statement(path, number, p) for p in parts if p.strip()]
    return out

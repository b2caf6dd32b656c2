"""Manifests as the sessions saw them: the entries commands run, and the stack facts they state.

A manifest is seen when a session reads it (Read tool, or ``cat <file>`` alone), writes it whole, or edits
it (the new text of the edit). Two things are taken from it:

* **entries** — what a command can run: ``package.json`` scripts, Makefile targets, ``mise.toml`` tasks,
  justfile recipes, Taskfile tasks, ``pyproject.toml`` ``[tool.*]`` sections, and the toolchain manifest
  itself (``Cargo.toml``, ``go.mod``, ``mix.exs``); a command tied to one cites it (``package.json#scripts.test``),
  and one entry is enough to make a single successful use canonical;
* **facts** — the stack with versions: ``requires-python``, ``engines``/``packageManager``, main
  frameworks and the database driver, Cargo ``edition``/``rust-version``, ``go``, Elixir,
  ``mise.toml``/``.tool-versions`` tools, ``.nvmrc``/``.python-version``, Dockerfile ``FROM`` bases; and what
  the project is, by its own ``description`` (``package.json``, ``pyproject.toml``, ``Cargo.toml``, a Claude
  Code plugin's ``.claude-plugin/plugin.json``).

The newest sighting of each entry and fact wins, so a manifest edited later reads as it ended.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from nous_assets.brief.item import Proof
from nous_assets.brief.runners import Use
from nous_assets.brief.timeline import SessionView, Step
from nous_assets.extract.rules.session import EDIT_TOOLS
from nous_assets.extract.rules.text import ANSI_RE, unnumbered

_DOCKERFILE_RE = re.compile(r"(?:^|[./])(?:Dockerfile|Containerfile)(?:\.[\w.-]+)?$", re.I)
_FRAMEWORKS = {
    "package.json": (
        "next react vue svelte @sveltejs/kit nuxt @angular/core solid-js express fastify koa hono @nestjs/core "
        "vite astro remix electron typescript prisma drizzle-orm"
    ).split(),
    "pyproject.toml": (
        "django flask fastapi starlette typer click sqlalchemy pydantic dagster celery numpy pandas torch "
        "scrapy streamlit textual"
    ).split(),
    "Cargo.toml": "tokio axum actix-web rocket clap serde bevy tauri sqlx diesel".split(),
    "go.mod": "github.com/gin-gonic/gin github.com/labstack/echo github.com/go-chi/chi github.com/spf13/cobra".split(),
    "mix.exs": "phoenix phoenix_live_view ash ecto ecto_sql oban absinthe nerves".split(),
}  # fmt: skip
_DATABASES = {
    "package.json": "pg mysql2 better-sqlite3 @libsql/client mongodb mongoose".split(),
    "pyproject.toml": "psycopg psycopg2 psycopg2-binary asyncpg aiosqlite pymongo".split(),
    "Cargo.toml": "rusqlite tokio-postgres".split(),
    "go.mod": "github.com/mattn/go-sqlite3 modernc.org/sqlite github.com/lib/pq".split(),
    "mix.exs": "ash_postgres ash_sqlite ecto_sqlite3 postgrex myxql".split(),
}  # fmt: skip
"""Database drivers and data layers, named after the frameworks: which database a project runs on is as much its
stack as its web framework (an Ash app on SQLite is not one on Postgres), and no framework list says it."""
_PYTHON_TOOLS = frozenset({"pytest", "ruff", "mypy", "ty", "pyright", "black", "isort", "coverage", "pylint", "flake8"})


@dataclass(frozen=True)
class Entry:
    """Something a command runs, as a manifest declares it."""

    file: str  # repo-relative manifest path
    kind: str  # package | make | mise | just | task | pyproject | cargo | go | mix | script
    name: str  # "scripts.test", "lint", "tasks.test:ci", "tool.ruff", "" (the manifest itself)
    body: str = ""  # what it runs, when the manifest says
    about: str = ""  # what it is for, in the maintainers' words: a task's description, a target's help comment

    @property
    def ref(self) -> str:
        return f"{self.file}#{self.name}" if self.name and self.kind != "script" else self.file

    @property
    def backs(self) -> bool:
        """True when the entry is the command's own (a script, target, task, tool section), not only the
        toolchain's manifest (``Cargo.toml`` says nothing about which cargo commands the project runs)."""
        return bool(self.name)


@dataclass(frozen=True)
class Fact:
    """One stack fact: "Python >=3.12", "Rust edition 2021", "base image debian:13.6-slim"."""

    file: str
    topic: str
    text: str


@dataclass
class Manifests:
    """Everything the sessions saw in manifests, newest sighting first."""

    entries: dict[tuple[str, str, str], tuple[Entry, Proof]] = field(default_factory=dict)  # (dir, kind, name)
    facts: dict[tuple[str, str], tuple[Fact, Proof]] = field(default_factory=dict)  # (file, topic)
    packages: dict[str, str] = field(default_factory=dict)  # package name -> its folder

    def entry(self, use: Use, where: str) -> Entry | None:
        """The manifest entry ``use`` runs, looked up from its folder up to the repository root."""
        kind, name, start = _wanted(use, where, self.packages)
        if not kind:
            return None
        for folder in _ancestors(start):
            found = self.entries.get((folder, kind, name))
            if found:
                return found[0]
        return None

    def proof(self, entry: Entry) -> Proof | None:
        found = self.entries.get(_key(entry))
        return found[1] if found else None

    def callers(self, entry: Entry) -> list[Entry]:
        """The other scripts of the same ``package.json`` that run ``entry`` as one of their steps
        (``"build": "bun run css:build && bun build server.ts"`` runs ``css:build``)."""
        if entry.kind != "package":
            return []
        name = entry.name.removeprefix("scripts.")
        runs = re.compile(rf"(?:\brun\s+|\b(?:pnpm|yarn)\s+){re.escape(name)}(?![\w:.-])")
        return [
            e for e, _ in self.entries.values()
            if e.file == entry.file and e.kind == "package" and e.name != entry.name and runs.search(e.body)
        ]  # fmt: skip


def _key(entry: Entry) -> tuple[str, str, str]:
    """Entries are found from a command's folder upwards; scripts by their own path."""
    return ("" if entry.kind == "script" else posixpath.dirname(entry.file), entry.kind, entry.name)


def read_manifests(views: Sequence[SessionView]) -> Manifests:
    """Every manifest sighting of the project's sessions, in time order (later ones replace earlier ones)."""
    book = Manifests()
    steps = sorted((s for v in views for s in v.steps), key=lambda s: s.order)
    for step in steps:
        for rel, text in _sightings(step):
            entries, facts, package = parse(rel, text)
            proof = step.proof(f"read `{rel}`")
            for e in entries:
                book.entries[_key(e)] = (e, proof)
            for f in facts:
                book.facts[(f.file, f.topic)] = (f, proof)
            if package:
                book.packages[package] = posixpath.dirname(rel)
    return book


_SCRIPT_FILE_RE = re.compile(r"(?:^|/)(?:scripts?|bin|tools|ci)/[^/]+$|\.(?:sh|bash)$")


def is_manifest(rel: str) -> bool:
    base = posixpath.basename(rel)
    return base in _PARSERS or base.endswith(".mk") or bool(_DOCKERFILE_RE.search(base))


def parse(rel: str, text: str) -> tuple[list[Entry], list[Fact], str]:
    """(entries, facts, package name) of one manifest's text (whole or partial); a script is its own entry."""
    base = posixpath.basename(rel)
    if not is_manifest(rel) and _SCRIPT_FILE_RE.search(rel):
        return [Entry(rel, "script", rel)], [], ""
    if _DOCKERFILE_RE.search(base):
        return [], _dockerfile(rel, text), ""
    parser = _PARSERS.get(base) or (_makefile if base.endswith(".mk") else None)
    return parser(rel, text) if parser else ([], [], "")


# ---------------------------------------------------------------------------------------------------------
# sightings


def _sightings(step: Step) -> list[tuple[str, str]]:
    """(repo-relative manifest path, text) this step showed: a Read, a lone ``cat``, a Write or an Edit."""
    call = step.call
    if call.name == "Read" or call.name in EDIT_TOOLS:
        rel = step.rel(call.path) if call.path else None
        if rel is None or not (is_manifest(rel) or _SCRIPT_FILE_RE.search(rel)) or step.status != "ok":
            return []
        if call.name == "Read":
            return [(rel, unnumbered(step.output))]
        new = call.inp.get("content") or call.inp.get("new_string") or call.inp.get("file_text") or ""
        return [(rel, new)] if isinstance(new, str) and new else []
    commands = [seg for seg, _ in step.parts if seg.tokens[0] not in ("echo", "printf")]
    if len(commands) == 1 and commands[0].tokens[0] == "cat" and len(commands[0].tokens) == 2 and step.status == "ok":
        rel = step.rel(posixpath.join(commands[0].cwd, commands[0].tokens[1]))
        if rel is not None and is_manifest(rel):
            return [(rel, ANSI_RE.sub("", step.output))]
    return []


# ---------------------------------------------------------------------------------------------------------
# entry lookup


def _wanted(use: Use, where: str, packages: dict[str, str]) -> tuple[str, str, str]:
    """(entry kind, entry name, folder to start from) for a command."""
    if use.runner in ("npm", "pnpm", "yarn", "bun"):
        start = where
        if use.workspace:
            name = use.workspace.split()[-1]
            start = packages.get(name) or next((d for d in packages.values() if d.endswith("/" + name)), "")
            if not start and not name.startswith("."):
                return "", "", ""
        return "package", f"scripts.{use.target}", start
    if use.runner in ("make", "just", "task"):
        return use.runner, use.target, where
    if use.runner == "mise":
        return "mise", f"tasks.{use.target}", where
    if use.runner == "script":
        return "script", posixpath.normpath(posixpath.join(where, use.target)), ""
    tool = use.target.split()[0]
    if tool in _PYTHON_TOOLS:
        return "pyproject", f"tool.{tool}", where
    if tool in ("cargo", "go", "mix"):
        return tool, "", where
    return "", "", ""


def _ancestors(folder: str) -> Iterable[str]:
    while folder:
        yield folder
        folder = posixpath.dirname(folder)
    yield ""


# ---------------------------------------------------------------------------------------------------------
# parsers: (entries, facts, package name)

Parsed = tuple[list[Entry], list[Fact], str]


def _package_json(rel: str, text: str) -> Parsed:
    try:
        data = json.loads(text)
    except ValueError:
        data = _partial_json(text)
    if not isinstance(data, dict):
        return [], [], ""
    scripts = data.get("scripts") if isinstance(data.get("scripts"), dict) else {}
    entries = [Entry(rel, "package", f"scripts.{k}", v) for k, v in scripts.items() if isinstance(v, str)]
    facts = []
    engines = data.get("engines") if isinstance(data.get("engines"), dict) else {}
    for name, version in sorted(engines.items()):
        facts.append(Fact(rel, f"engine:{name}", f"{_title(name)} {version}"))
    if isinstance(data.get("packageManager"), str):
        facts.append(Fact(rel, "package-manager", data["packageManager"].split("+")[0].replace("@", " ")))
    deps = {**_dict(data.get("devDependencies")), **_dict(data.get("dependencies"))}
    facts.extend(_frameworks(rel, "package.json", deps))
    facts.extend(_description(rel, data.get("description")))
    return entries, facts, data.get("name") if isinstance(data.get("name"), str) else ""


def _partial_json(text: str) -> dict:
    """A package.json read in part: its ``"scripts"`` block, as far as it shows."""
    block = re.search(r'"scripts"\s*:\s*\{([^{}]*)\}?', text)
    pairs = re.findall(r'"([^"\n]+)"\s*:\s*"((?:[^"\\\n]|\\.)*)"', block.group(1)) if block else []
    return {"scripts": dict(pairs)}


def _dict(value: object) -> dict:
    return value if isinstance(value, dict) else {}


def _makefile(rel: str, text: str) -> Parsed:
    entries = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^([A-Za-z0-9][\w./-]*(?:\s+[A-Za-z0-9][\w./-]*)*)\s*:(?!=)", line)
        if not m or line.startswith((".", "\t")):
            continue
        body = next((x.strip().lstrip("@-") for x in lines[i + 1 : i + 4] if x.startswith("\t")), "")
        about = _about(help_.group(1) if (help_ := re.search(r"##\s*(.+)$", line)) else _comment_above(lines, i))
        entries.extend(Entry(rel, "make", t, body, about) for t in m.group(1).split() if "%" not in t)
    return entries, [], ""


def _toml_sections(text: str) -> list[tuple[str, list[str]]]:
    """(header, body lines) of each ``[section]`` of a TOML text ('' for the top)."""
    out: list[tuple[str, list[str]]] = [("", [])]
    for line in text.splitlines():
        m = re.match(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(?:#.*)?$", line)
        if m:
            out.append((m.group(1).replace('"', "").replace("'", ""), []))
        else:
            out[-1][1].append(line)
    return out


def _toml_value(lines: Sequence[str], key: str) -> str:
    """A key's string value (the first item of an array), from a section's lines."""
    for i, line in enumerate(lines):
        m = re.match(rf"^\s*{re.escape(key)}\s*=\s*(.+?)\s*$", line)
        if m:
            value = m.group(1) if m.group(1).startswith("[") else m.group(1).split(" #")[0]
            if value.startswith("["):
                first = re.search(r"[\"']([^\"']+)[\"']", " ".join([value, *lines[i + 1 : i + 4]]))
                return first.group(1) if first else ""
            return value.strip().strip("\"'")
    return ""


def _mise(rel: str, text: str) -> Parsed:
    entries: list[Entry] = []
    facts: list[Fact] = []
    for header, body in _toml_sections(text):
        if header.startswith("tasks."):
            name = header[len("tasks.") :]
            about = _about(_toml_value(body, "description"))
            entries.append(Entry(rel, "mise", f"tasks.{name}", _toml_value(body, "run"), about))
        elif header == "tasks":
            for line in body:
                m = re.match(r"^\s*[\"']?([\w:.-]+)[\"']?\s*=\s*[\"']([^\"']+)[\"']", line)
                if m:
                    entries.append(Entry(rel, "mise", f"tasks.{m.group(1)}", m.group(2)))
        elif header == "tools":
            tools = [_tool_pin(line) for line in body]
            shown = [t for t in tools if t]
            if shown:
                facts.append(Fact(rel, "tools", "tools (mise): " + ", ".join(shown[:5])))
    return entries, facts, ""


_PIN_RE = re.compile(r"^\s*[\"']?([\w@/.:-]+?)(?:\[[^\]]*\])?[\"']?\s*=\s*(?:[\"']([^\"']+)[\"']|\[\s*[\"']([^\"']+))")


def _tool_pin(line: str) -> str:
    m = _PIN_RE.match(line)
    if not m:
        return ""
    name = m.group(1).split(":")[-1].split("/")[-1]
    return f"{name} {m.group(2) or m.group(3)}"


def _tool_versions(rel: str, text: str) -> Parsed:
    pins = [" ".join(line.split()[:2]) for line in text.splitlines() if line.strip() and not line.startswith("#")]
    return [], [Fact(rel, "tools", "tools (asdf): " + ", ".join(pins[:5]))] if pins else [], ""


def _version_file(rel: str, text: str) -> Parsed:
    version = text.strip().splitlines()[0].strip() if text.strip() else ""
    lang = "Node" if "nvm" in rel or "node" in rel else "Python"
    return [], [Fact(rel, lang.lower(), f"{lang} {version}")] if re.match(r"^v?\d", version) else [], ""


def _justfile(rel: str, text: str) -> Parsed:
    entries = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        m = re.match(r"^@?([A-Za-z_][\w-]*)(?:\s+[^:=\n]*)?:(?!=)", line)
        if m and m.group(1) not in ("set", "alias", "export", "import", "mod"):
            body = next((x.strip().lstrip("@") for x in lines[i + 1 : i + 4] if x[:1] in " \t" and x.strip()), "")
            entries.append(Entry(rel, "just", m.group(1), body, _about(_comment_above(lines, i))))
    return entries, [], ""


def _taskfile(rel: str, text: str) -> Parsed:
    block = re.search(r"^tasks:\s*\n((?:[ \t]+.*\n?|\s*\n)*)", text, re.M)
    tasks = re.split(r"^  ([\w:.-]+):\s*$", block.group(1), flags=re.M)[1:] if block else []
    entries = []
    for name, body in zip(tasks[::2], tasks[1::2], strict=True):
        desc = re.search(r"^    desc:\s*[\"']?(.+?)[\"']?\s*$", body, re.M)
        entries.append(Entry(rel, "task", name, "", _about(desc.group(1) if desc else "")))
    return entries, [], ""


MAX_ABOUT = 100


def _comment_above(lines: Sequence[str], i: int) -> str:
    """The ``#`` comment on the line right above line ``i`` (a justfile recipe's doc comment, a Makefile
    target's)."""
    m = re.match(r"^#\s*(.+)$", lines[i - 1].strip()) if i > 0 else None
    return m.group(1) if m and not m.group(1).startswith(("!", "-", "=")) else ""


def _about(text: str) -> str:
    """A one-line description as a line of the brief can quote it: no quotes or backticks of its own, capped."""
    text = " ".join(text.replace('"', "").replace("`", "").split())
    return text if len(text) <= MAX_ABOUT else ""


def _pyproject(rel: str, text: str) -> Parsed:
    entries: list[Entry] = []
    facts: list[Fact] = []
    for header, body in _toml_sections(text):
        if header.startswith("tool."):
            tool = header.split(".")[1]
            if not any(e.name == f"tool.{tool}" for e in entries):
                entries.append(Entry(rel, "pyproject", f"tool.{tool}"))
        elif header == "project":
            version = _toml_value(body, "requires-python")
            if version:
                facts.append(Fact(rel, "python", f"Python {version}"))
            block = re.search(r"^\s*dependencies\s*=\s*\[(.*?)\]", "\n".join(body), re.M | re.S)
            deps = re.findall(r"[\"']([A-Za-z][\w.-]*)", block.group(1)) if block else []
            facts.extend(_frameworks(rel, "pyproject.toml", {d.lower(): "" for d in deps}))
            facts.extend(_description(rel, _toml_value(body, "description")))
    return entries, facts, ""


def _cargo(rel: str, text: str) -> Parsed:
    facts = []
    sections = dict(_toml_sections(text))
    package = sections.get("package", []) + sections.get("workspace.package", [])
    edition, rust = _toml_value(package, "edition"), _toml_value(package, "rust-version")
    if edition or rust:
        parts = [f"edition {edition}" if edition else "", f"rust-version {rust}" if rust else ""]
        facts.append(Fact(rel, "rust", "Rust (" + ", ".join(p for p in parts if p) + ")"))
    deps = {re.split(r"\s*=", line)[0].strip(): "" for line in sections.get("dependencies", []) if "=" in line}
    facts.extend(_frameworks(rel, "Cargo.toml", deps))
    facts.extend(_description(rel, _toml_value(package, "description")))
    return [Entry(rel, "cargo", "")], facts, ""


def _gomod(rel: str, text: str) -> Parsed:
    m = re.search(r"^go (\d[\d.]*)", text, re.M)
    facts = [Fact(rel, "go", f"Go {m.group(1)}")] if m else []
    deps = {d: "" for d in re.findall(r"^\s*([\w.-]+/[\w./-]+) v", text, re.M)}
    return [Entry(rel, "go", "")], facts + _frameworks(rel, "go.mod", deps), ""


def _mix(rel: str, text: str) -> Parsed:
    m = re.search(r"elixir:\s*\"([^\"]+)\"", text)
    facts = [Fact(rel, "elixir", f"Elixir {m.group(1)}")] if m else []
    deps = {d: "" for d in re.findall(r"\{:(\w+),", text)}
    return [Entry(rel, "mix", "")], facts + _frameworks(rel, "mix.exs", deps), ""


def _dockerfile(rel: str, text: str) -> list[Fact]:
    stages = {s.lower() for s in re.findall(r"^\s*FROM\s+.+?\s+AS\s+([\w.-]+)", text, re.M | re.I)}
    bases = []
    for image in re.findall(r"^\s*FROM\s+(?:--\S+\s+)*(\S+)", text, re.M | re.I):
        pinned = re.search(r"[:/@]", image)  # a bare word may be a stage defined outside the lines read
        image = image.split("@")[0]
        if pinned and image.lower() not in stages and "$" not in image and image not in bases:
            bases.append(image)
    return [Fact(rel, "image", f"base image{'s' if len(bases) > 1 else ''} {', '.join(bases)}")] if bases else []


def _frameworks(rel: str, kind: str, deps: dict) -> list[Fact]:
    names = [d for d in _FRAMEWORKS[kind] if d in deps][:4] + [d for d in _DATABASES[kind] if d in deps][:1]
    shown = [n.rsplit("/", 1)[-1] for n in names]
    return [Fact(rel, "frameworks", ", ".join(shown))] if shown else []


def _plugin_json(rel: str, text: str) -> Parsed:
    """A Claude Code plugin's manifest (``.claude-plugin/plugin.json``): what the plugin is."""
    try:
        data = json.loads(text)
    except ValueError:
        return [], [], ""
    plugin = rel.endswith(".claude-plugin/plugin.json") and isinstance(data, dict)
    return [], _description(rel, data.get("description")) if plugin else [], ""


def _description(rel: str, value: object) -> list[Fact]:
    """The manifest's own one-line description of the project (topic :data:`DESCRIPTION`), unless a template's
    placeholder."""
    text = description_text(value) if isinstance(value, str) else ""
    return [Fact(rel, DESCRIPTION, text)] if text else []


DESCRIPTION = "description"
"""The topic of a description (:func:`description_text`): what the project is, said apart from its stack."""
MAX_DESCRIPTION = 160
_PLACEHOLDER_RE = re.compile(r"\b(?:todo|tbd|add (?:your |a )?description|a new \w+ project)\b", re.I)


def description_text(text: str) -> str:
    """A description as a line can quote it: one sentence (or its head, cut at a colon, a parenthesis or a comma) of
    at most :data:`MAX_DESCRIPTION` characters, no quotes, backticks or emphasis; "" for a template's placeholder
    (``TODO: Add description``, uv's "Add your description here", "A new Flutter project.")."""
    text = " ".join(re.sub(r"[\"`*]", "", text).split())
    if not text or _PLACEHOLDER_RE.search(text):
        return ""
    text = re.split(r"(?<=[a-z0-9)])\.\s", text, maxsplit=1)[0].rstrip(".")
    if len(text) > MAX_DESCRIPTION:
        text = re.split(r":\s|;\s|\s\(|\s[-–—]\s", text, maxsplit=1)[0]
    if len(text) > MAX_DESCRIPTION and ", " in text[:MAX_DESCRIPTION]:
        text = text[:MAX_DESCRIPTION].rsplit(", ", 1)[0]  # the clauses that fit
    return text if 8 <= len(text) <= MAX_DESCRIPTION else ""


def _title(name: str) -> str:
    return {"node": "Node", "npm": "npm", "pnpm": "pnpm", "bun": "Bun", "yarn": "Yarn"}.get(name, name)


_PARSERS = {
    "package.json": _package_json,
    "Makefile": _makefile, "makefile": _makefile, "GNUmakefile": _makefile,
    "mise.toml": _mise, ".mise.toml": _mise, "mise.local.toml": _mise,
    ".tool-versions": _tool_versions, ".nvmrc": _version_file, ".node-version": _version_file,
    ".python-version": _version_file,
    "justfile": _justfile, "Justfile": _justfile, ".justfile": _justfile,
    "Taskfile.yml": _taskfile, "Taskfile.yaml": _taskfile, "taskfile.yml": _taskfile,
    "pyproject.toml": _pyproject, "Cargo.toml": _cargo, "go.mod": _gomod, "mix.exs": _mix,
    "plugin.json": _plugin_json,
}  # fmt: skip

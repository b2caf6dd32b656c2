"""Configuration as the session read it: ports, optional override files, formatter plugins, npm scripts.

:mod:`~nous_assets.extract.rules.configuration` keeps what a session *changed* in a config file; this
family keeps the few settings a session *looked up* that the next session would otherwise look up again,
from files read whole or lines found by Grep:

* the **port** a server listens on (``http: [ip: …, port: 1100]``, ``PORT=3000``, ``"port": 8080``);
* **optional override files** a config imports when present (``import_config("dev.local.exs")``), with
  the comment that says what they are for;
* **formatter plugins** (``plugins: [Spark.Formatter]`` in ``.formatter.exs``, Prettier plugins): what
  ``mix format`` / ``prettier`` will also rewrite;
* **npm scripts as ``npm run`` printed them** (``> typecheck`` / ``> npm run db:generate && tsc -b``) when
  the session never read ``package.json``.

One memory per file (slot ``config:<file>#read``), naming the file and quoting the line it comes from.
"""

from __future__ import annotations

import posixpath
import re

from nous_assets.extract.rules.configuration import is_config
from nous_assets.extract.rules.session import Call, Cand, Stream, cand
from nous_assets.extract.rules.text import ANSI_RE, cap, short_path

MAX_CONTENT = 320
_NUMBERED_RE = re.compile(r"^\s*(\d+)[→\t](.*)$")
_GREP_LINE_RE = re.compile(r"^([\w@./-]+\.[\w]+|[\w@./-]*/[\w.-]+):(\d+)[:-](.*)$")
_PORT_RE = re.compile(r"""(?<![\w.])["']?port["']?\s*(?::|=>|=)\s*(\d{2,5})\b|\bPORT\s*=\s*["']?(\d{2,5})\b""", re.I)
_IMPORT_RE = re.compile(r"""\bimport_config\(?\s*["']([\w./-]+)["']""")
_PLUGINS_RE = re.compile(r"""["']?plugins["']?\s*[:=]\s*\[([^\]\n]{2,200})\]""")
_FORMATTERS = re.compile(r"(?:^|/)(?:\.formatter\.exs|\.prettierrc[\w.]*|prettier\.config\.\w+)$")
_NPM_BANNER_RE = re.compile(r"^> (?:[@\w./-]+@[\w.+-]+ )?([\w:.-]+)\n> (.+)$", re.M)
_NPM_RUN_RE = re.compile(r"\b(?:npm|pnpm|yarn|bun) (?:run )?[\w:.-]+")


def config_reads(s: Stream) -> list[Cand]:
    facts: dict[str, tuple[list[str], Call]] = {}
    for call in s.calls:
        if call.result is None or call.result.is_error or call.name not in ("Read", "Grep"):
            continue
        for rel, lines in _file_lines(s, call).items():
            found = _facts(rel, lines)
            if found:
                have = facts.setdefault(rel, ([], call))[0]
                have.extend(f for f in found if f not in have)
    out = [_cand(s, call, rel, "; ".join(found[:4])) for rel, (found, call) in facts.items()]
    out.extend(_npm_scripts(s))
    return out


def _file_lines(s: Stream, call: Call) -> dict[str, list[str]]:
    """Config file -> the lines of it this call showed (a Read shows one file, a Grep may show several)."""
    text = ANSI_RE.sub("", call.result.text[:60000])
    if call.name == "Read":
        rel = short_path(call.path, s.cwd)
        if not is_config(call.path):
            return {}
        return {rel: [m.group(2) if (m := _NUMBERED_RE.match(x)) else x for x in text.splitlines()]}
    out: dict[str, list[str]] = {}
    only = call.inp.get("path") if isinstance(call.inp.get("path"), str) else ""
    for line in text.splitlines():
        m = _GREP_LINE_RE.match(line)
        path, content = (m.group(1), m.group(3)) if m else (only, re.sub(r"^\d+[:-]", "", line))
        if path and is_config(path):
            out.setdefault(short_path(path, s.cwd), []).append(content)
    return out


def _facts(rel: str, lines: list[str]) -> list[str]:
    found: list[str] = []
    for i, line in enumerate(lines):
        code = line.split("#", 1)[0] if rel.endswith((".exs", ".toml", ".yml", ".yaml", ".env")) else line
        port = _PORT_RE.search(code)
        if port and "test" not in posixpath.basename(rel):
            found.append(f"serves on port {port.group(1) or port.group(2)} (`{cap(line.strip(), 80)}`)")
        imported = _IMPORT_RE.search(code)
        if imported and "#{" not in imported.group(1):
            why = _comment_above(lines, i)
            found.append(f"imports `{imported.group(1)}` when present" + (f" ({why})" if why else ""))
        plugins = _PLUGINS_RE.search(code)
        if plugins and _FORMATTERS.search(rel):
            names = ", ".join(p.strip(" '\"") for p in plugins.group(1).split(",") if p.strip())
            found.append(f"formatter plugins {names}, so formatting also rewrites what they own")
    return list(dict.fromkeys(found))


def _comment_above(lines: list[str], i: int) -> str:
    for j in range(i - 1, max(-1, i - 4), -1):
        stripped = lines[j].strip()
        if stripped.startswith(("#", "//")):
            return cap(stripped.lstrip("#/ ").strip(), 100)
    return ""


def _npm_scripts(s: Stream) -> list[Cand]:
    if any(c.name == "Read" and posixpath.basename(c.path) == "package.json" for c in s.calls):
        return []
    scripts: dict[str, str] = {}
    called: set[str] = set()
    first: Call | None = None
    for call in s.calls:
        if call.result is None or not _NPM_RUN_RE.search(call.command):
            continue
        called.update(m.split()[-1] for m in _NPM_RUN_RE.findall(call.command))
        for name, command in _NPM_BANNER_RE.findall(ANSI_RE.sub("", call.result.text[:20000])):
            if " " in command.strip() and name not in scripts:
                scripts[name] = command.strip()
                first = first or call
    if first is None:
        return []
    # the scripts the session ran come first, then those chaining others: what `npm run x` really does
    ranked = sorted(scripts, key=lambda k: (k not in called, "&&" not in scripts[k]))
    shown = "; ".join(f"`{k}` = `{cap(scripts[k], 90)}`" for k in ranked[:6])
    return [_cand(s, first, "package.json", f"scripts (as `npm run` printed them): {shown}", kind="command")]


def _cand(s: Stream, call: Call, rel: str, facts: str, *, kind: str = "configuration") -> Cand:
    content = cap(f"{rel}: {facts}.", MAX_CONTENT)
    c = cand(kind, content, call.turn, s.gpos[call.pos], call.turns(), content,
             applies_when=f"when working with {rel}", source_ref=rel, score=2.5, basis="file")  # fmt: skip
    c.slot, c.domain = f"config:{rel}#read", "configuration"
    return c
